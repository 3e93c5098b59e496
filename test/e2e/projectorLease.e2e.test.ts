/**
 * Acceptance (issue 14, Deliver 3): three `mailbox serve` processes on one SQLite log file and one Redis.
 * Exactly one projects at any time (each /readyz names the same leader); SIGKILL of the leader under a
 * send load: another leads within lease + 1 s, every acknowledged message is in its recipient's inbox
 * once, and each recipient's wake subscriber on every surviving node gets exactly one wake per message.
 * SIGSTOP of the leader past its lease, then SIGCONT: it steps down (its late writes refused, or its
 * renewal found the lease taken, whichever it meets first) and says so in one log line.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { openSqliteDatabase } from '../../src/support/sqlite/sqliteDriver';
import { ensureBuilt, MAILBOX_BIN, ROOT } from '../support/builtCli';
import { ADMIN_TOKEN, tempDir } from '../support/fixtures';
import { callUrl } from '../support/httpServer';
import { freePort, startRedis, type TestRedis } from '../support/redisServer';
import { waitFor } from '../support/waitFor';
import { subscribe, type WakeSubscriber } from './wakeSubscriber';

const LEASE_MS = 1500;
let redis: TestRedis;

interface Node {
  id: string;
  url: string;
  child: ChildProcess;
  lines: Array<Record<string, unknown>>;
  exited: Promise<void>;
}
const nodes: Node[] = [];
const subscribers: WakeSubscriber[] = [];

beforeAll(async () => {
  ensureBuilt();
  redis = await startRedis();
}, 120_000);
afterAll(async () => {
  for (const subscriber of subscribers) subscriber.close();
  for (const node of nodes) {
    node.child.kill('SIGCONT');
    node.child.kill('SIGKILL');
    await node.exited;
  }
  await redis.stop();
});

async function startNode(id: string, dataDir: string, namespace: string): Promise<Node> {
  const port = await freePort();
  const base = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('MAILBOX_')));
  const child = spawn(process.execPath, [MAILBOX_BIN, 'serve'], {
    cwd: ROOT,
    env: {
      ...base,
      MAILBOX_PORT: String(port),
      MAILBOX_ADMIN_TOKEN: ADMIN_TOKEN,
      MAILBOX_DATA_DIR: dataDir,
      MAILBOX_REDIS_URL: redis.url,
      MAILBOX_REDIS_NAMESPACE: namespace,
      MAILBOX_PROJECTOR_LEASE_MS: String(LEASE_MS),
      MAILBOX_NODE_ID: id,
      MAILBOX_RATE_LIMIT_PER_SECOND: '0',
      MAILBOX_LOG_FORMAT: 'json',
      MAILBOX_LOG_LEVEL: 'info',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: Array<Record<string, unknown>> = [];
  let pending = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    pending += chunk.toString();
    const complete = pending.split('\n');
    pending = complete.pop()!;
    for (const line of complete) if (line.startsWith('{')) lines.push(JSON.parse(line));
  });
  child.stderr!.on('data', () => undefined);
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  const node = { id, url: `http://127.0.0.1:${port}`, child, lines, exited };
  nodes.push(node);
  await waitFor(async () => (await readyz(node).catch(() => null))?.status === 200, {
    timeoutMs: 30_000,
    what: `${id} ready`,
  });
  return node;
}

const call = (node: Node, method: string, pathname: string, token: string, body?: unknown) =>
  callUrl(node.url, method, pathname, { token, body, timeoutMs: 10_000 });

async function readyz(node: Node) {
  const response = await fetch(`${node.url}/readyz`, { signal: AbortSignal.timeout(1000) });
  return { status: response.status, body: (await response.json()) as any };
}

/** Each answering node's view of who projects; null for a node that does not answer (killed or stopped). */
async function leadership(of: Node[]) {
  return Promise.all(
    of.map(async (node) => {
      try {
        const { body } = await readyz(node);
        return (body.projections ?? body.details?.checks?.projections)?.leadership ?? null;
      } catch {
        return null;
      }
    }),
  );
}

/** Every message id in an inbox, page by page. */
async function inbox(node: Node, token: string): Promise<Array<{ messageId: string; subject: string }>> {
  const messages: Array<{ messageId: string; subject: string }> = [];
  for (let cursor: string | null = null; ;) {
    const query: string = cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`;
    const { status, body } = await call(node, 'GET', `/v1/messages?limit=100${query}`, token);
    if (status !== 200) throw new Error(`listing: ${status} ${JSON.stringify(body)}`);
    messages.push(...body.messages);
    cursor = body.nextCursor;
    if (cursor === null) return messages;
  }
}

const leaderAmong = async (of: Node[]): Promise<Node | null> => {
  const seen = await leadership(of);
  const leading = of.filter((_node, i) => seen[i]?.role === 'leading');
  if (leading.length > 1) throw new Error(`two nodes lead at once: ${leading.map((n) => n.id).join(', ')}`);
  return leading[0] ?? null;
};

/**
 * SIGSTOPs the node at a moment it holds no write lock on the shared log. A node writes in the background (its wake
 * observations, every 100 ms), and one paused inside such a commit holds the file's lock for as long as it stays paused:
 * every other node's append then waits for it and fails (SQLite cannot take a lock from a live process; operators.md).
 * That is not the take-over this test is about, and it made the test fail about once in a hundred full runs. Paused,
 * the node is asked whether the lock is free (BEGIN IMMEDIATE on a connection of this test's); if not, it runs on a
 * moment and is paused again.
 */
async function pauseOutsideLogWrites(node: Node, logFile: string): Promise<void> {
  const db = openSqliteDatabase(logFile);
  try {
    db.pragma('busy_timeout = 0');
    await waitFor(
      () => {
        node.child.kill('SIGSTOP');
        try {
          db.exec('BEGIN IMMEDIATE');
          db.exec('ROLLBACK');
          return true;
        } catch {
          node.child.kill('SIGCONT'); // paused mid-commit: let it finish and try again
          return false;
        }
      },
      { timeoutMs: 10_000, what: `${node.id} paused outside a write to the log` },
    );
  } finally {
    db.close();
  }
}

test('three API nodes: one projects; SIGKILL of the leader under load hands over within lease + 1 s, nothing lost, one wake per message; a SIGSTOPped leader steps down on SIGCONT', async () => {
  const dataDir = tempDir('lease-e2e-');
  const namespace = `lease${process.pid}`;
  const first = await startNode('node-0', dataDir, namespace);
  const others = [await startNode('node-1', dataDir, namespace), await startNode('node-2', dataDir, namespace)];
  const all = [first, ...others];

  // Exactly one leads, and every node names it with the same token.
  const seen = await leadership(all);
  expect(seen[0]).toEqual({ role: 'leading', node: 'node-0', token: expect.stringMatching(/^\d+$/) });
  for (const view of seen.slice(1))
    expect(view).toEqual(expect.objectContaining({ role: 'following', leader: 'node-0', token: seen[0].token }));
  const metrics = await (await fetch(`${others[0].url}/metrics`)).text();
  expect(metrics).toContain(`mailbox_projector_leader{role="following",node="node-0",token="${seen[0].token}"} 1`);

  const tokens: Record<string, string> = {};
  for (const identity of ['@s', '@a', '@b', '@c']) {
    const { status, body } = await call(others[0], 'POST', '/v1/agents', ADMIN_TOKEN, { identity });
    expect(status).toBe(201);
    tokens[identity] = body.token;
  }
  const recipients = ['@a', '@b', '@c'];
  // A wake subscriber per recipient on each node that survives the kill.
  const byNode = new Map<string, Map<string, WakeSubscriber>>();
  for (const node of others) {
    const own = new Map<string, WakeSubscriber>();
    for (const identity of recipients) {
      const subscriber = await subscribe(node.url, tokens[identity]);
      subscribers.push(subscriber);
      own.set(identity, subscriber);
    }
    byNode.set(node.id, own);
  }

  // A send load through the followers, alternating between them; every 201 is acknowledged.
  const acknowledged: Array<{ messageId: string; to: string }> = [];
  let sending = true;
  const load = (async () => {
    for (let i = 0; sending; i++) {
      const to = recipients[i % 3];
      const { status, body } = await call(others[i % 2], 'POST', '/v1/messages', tokens['@s'], {
        to,
        subject: `load ${i}`,
        body: 'x',
        priority: 'high',
      });
      expect(status).toBe(201);
      acknowledged.push({ messageId: body.messageId, to });
    }
  })();
  await waitFor(() => acknowledged.length >= 30, { timeoutMs: 20_000, what: '30 acknowledged sends' });

  first.child.kill('SIGKILL');
  const killedAt = Date.now();
  let next: Node | null = null;
  await waitFor(async () => (next = await leaderAmong(others)) !== null, { timeoutMs: LEASE_MS + 5000, what: 'a new leader' });
  const takeoverMs = Date.now() - killedAt;
  expect(takeoverMs).toBeLessThanOrEqual(LEASE_MS + 1000);
  // Each node's log names the holder: the followers said whom they followed, the new leader whom it took over from.
  const said = (node: Node) => node.lines.map((line) => String(line.msg));
  for (const node of others)
    expect(said(node)).toContain(`projector: following node-0 (token ${seen[0].token}), which holds the lease and projects`);
  await waitFor(
    () => said(next!).some((msg) => msg.startsWith('projector: this node holds the lease and projects (taking over')),
    {
      timeoutMs: 5000,
      what: 'the new leader says so',
    },
  );
  expect(said(next!)).toContain(
    `projector: this node holds the lease and projects (taking over from node-0, token ${seen[0].token}, whose lease lapsed or was released)`,
  );
  const count = acknowledged.length;
  await waitFor(() => acknowledged.length >= count + 30, { timeoutMs: 20_000, what: '30 more sends after the takeover' });
  sending = false;
  await load;

  // Every acknowledged message is in its recipient's inbox, once; each subscriber got exactly one wake per message.
  const reader = others[0];
  for (const identity of recipients) {
    const owed = acknowledged
      .filter((m) => m.to === identity)
      .map((m) => m.messageId)
      .sort();
    await waitFor(async () => (await inbox(reader, tokens[identity])).length >= owed.length, {
      timeoutMs: 10_000,
      what: `${identity}'s inbox`,
    });
    expect((await inbox(reader, tokens[identity])).map((m) => m.messageId).sort()).toEqual(owed);
    for (const node of others) {
      const subscriber = byNode.get(node.id)!.get(identity)!;
      await waitFor(() => subscriber.wakes().length >= owed.length, {
        timeoutMs: 10_000,
        what: `${identity}'s wakes on ${node.id}`,
      });
      expect(
        subscriber
          .wakes()
          .map((w) => w.messageId)
          .sort(),
      ).toEqual(owed);
    }
  }

  // SIGSTOP the leader past its lease; the other follower takes over; SIGCONT: the old leader steps down.
  const stopped = next!;
  const remaining = others.find((node) => node !== stopped)!;
  await pauseOutsideLogWrites(stopped, path.join(dataDir, 'events.sqlite'));
  await waitFor(async () => (await leaderAmong([remaining])) === remaining, {
    timeoutMs: LEASE_MS + 5000,
    what: 'the follower leads',
  });
  const during = await call(remaining, 'POST', '/v1/messages', tokens['@s'], { to: '@a', subject: 'while paused', body: 'y' });
  expect(during.status).toBe(201);
  expect(during.body.warnings ?? []).toEqual([]); // the new leader projected it in time
  stopped.child.kill('SIGCONT');
  await waitFor(() => stopped.lines.some((line) => String(line.msg).startsWith('projector: stepped down')), {
    timeoutMs: 10_000,
    what: 'the old leader says it stepped down',
  });
  const steppedDown = stopped.lines.filter((line) => String(line.msg).startsWith('projector: stepped down'));
  expect(steppedDown).toHaveLength(1);
  expect(String(steppedDown[0].reason)).toMatch(/late writes were refused|lease expired and is no longer this node's/);
  // It follows the new leader (named at its next look at the lease), which still leads.
  await waitFor(async () => (await leadership([stopped]))[0]?.leader === remaining.id, {
    timeoutMs: LEASE_MS + 2000,
    what: 'the old leader names the new one',
  });
  const after = await leadership([stopped, remaining]);
  expect(after[0]).toEqual(expect.objectContaining({ role: 'following', node: stopped.id }));
  expect(after[1]).toEqual(expect.objectContaining({ role: 'leading', node: remaining.id }));
  // A command on the stepped-down node still answers without VIEWS_LAGGING: it follows the shared checkpoint.
  const onFollower = await call(stopped, 'POST', '/v1/messages', tokens['@s'], { to: '@b', subject: 'after', body: 'z' });
  expect(onFollower.status).toBe(201);
  expect(onFollower.body.warnings ?? []).toEqual([]);
  expect((await inbox(stopped, tokens['@a'])).filter((m) => m.subject === 'while paused')).toHaveLength(1);
  process.stdout.write(
    `lease takeover after SIGKILL: ${takeoverMs} ms (lease ${LEASE_MS} ms); after SIGCONT: ${String(steppedDown[0].reason)}\n`,
  );
}, 120_000);
