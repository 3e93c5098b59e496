/**
 * Projector lease takeover (issue 14, Deliver 3): three `mailbox serve` processes on one SQLite log
 * file and one Redis; the leader is SIGKILLed at a random moment of its renewal cycle and the time
 * is taken until (1) a survivor's /readyz says it leads and (2) a send through a survivor is listed
 * in its recipient's inbox without VIEWS_LAGGING (the projection running again). Medians of RUNS
 * kills per lease length. Expected: between lease - renew (a third) and lease + 250 ms (a follower's
 * look), plus process and poll overhead (/readyz polled every 20 ms).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { startRedis } from '../../test/support/redisServer';
import { freePort } from '../../test/support/redisServer';
import { runBench } from '../lib/runBench';
import { median, round } from '../lib/stats';
import { withTmpDir } from '../lib/tmp';

const ROOT = path.resolve(__dirname, '../../..');
const BIN = path.join(ROOT, 'bin/mailbox.js');
const ADMIN = 'bench-admin-token-0123456789abcdef';
const RUNS = 5;
const LEASES = [1500, 3000];

interface Node {
  id: string;
  url: string;
  child: ChildProcess;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function json(url: string, init: RequestInit = {}): Promise<any> {
  const response = await fetch(url, { ...init, signal: AbortSignal.timeout(2000) });
  return { status: response.status, body: await response.json() };
}

async function role(node: Node): Promise<string | null> {
  try {
    const { body } = await json(`${node.url}/readyz`);
    return (body.projections ?? body.details?.checks?.projections)?.leadership?.role ?? null;
  } catch {
    return null;
  }
}

async function until(condition: () => Promise<boolean>, timeoutMs: number, everyMs = 20): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms`);
    await sleep(everyMs);
  }
}

async function startNode(id: string, env: Record<string, string>): Promise<Node> {
  const port = await freePort();
  const base = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('MAILBOX_')));
  const child = spawn(process.execPath, [BIN, 'serve'], {
    cwd: ROOT,
    env: { ...base, ...env, MAILBOX_PORT: String(port), MAILBOX_NODE_ID: id, MAILBOX_LOG_LEVEL: 'warn' },
    stdio: 'ignore',
  });
  const node = { id, url: `http://127.0.0.1:${port}`, child };
  await until(async () => (await role(node)) !== null, 30_000, 50);
  return node;
}

async function kill(node: Node): Promise<void> {
  const exited = new Promise((resolve) => node.child.once('exit', resolve));
  node.child.kill('SIGKILL');
  await exited;
}

runBench('redis/leaseTakeover', async (report) => {
  const redis = await startRedis();
  try {
    for (const leaseMs of LEASES) {
      const toLeader: number[] = [];
      const toListed: number[] = [];
      for (let run = 0; run < RUNS; run++) {
        await withTmpDir(async (dir) => {
          const env = {
            MAILBOX_ADMIN_TOKEN: ADMIN,
            MAILBOX_DATA_DIR: dir,
            MAILBOX_REDIS_URL: redis.url,
            MAILBOX_REDIS_NAMESPACE: `lt${process.pid}l${leaseMs}r${run}`,
            MAILBOX_PROJECTOR_LEASE_MS: String(leaseMs),
            MAILBOX_RATE_LIMIT_PER_SECOND: '0',
          };
          const nodes = [await startNode('n0', env), await startNode('n1', env), await startNode('n2', env)];
          try {
            const leader = (await Promise.all(nodes.map(role))).indexOf('leading');
            const survivors = nodes.filter((_node, i) => i !== leader);
            const admin = { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' };
            const tokens: string[] = [];
            for (const identity of ['@s', '@r']) {
              const { body } = await json(`${survivors[0].url}/v1/agents`, {
                method: 'POST',
                headers: admin,
                body: JSON.stringify({ identity }),
              });
              tokens.push(body.token);
            }
            await sleep(Math.random() * (leaseMs / 3)); // a random moment of the renewal cycle
            const killedAt = Date.now();
            await kill(nodes[leader]);
            await until(async () => (await Promise.all(survivors.map(role))).includes('leading'), leaseMs + 5000);
            toLeader.push(Date.now() - killedAt);
            const headers = { authorization: `Bearer ${tokens[0]}`, 'content-type': 'application/json' };
            await until(async () => {
              const sent = await json(`${survivors[1].url}/v1/messages`, {
                method: 'POST',
                headers,
                body: JSON.stringify({ to: '@r', subject: 'after', body: 'x' }),
              });
              return sent.status === 201 && (sent.body.warnings ?? []).length === 0;
            }, leaseMs + 10_000);
            toListed.push(Date.now() - killedAt);
          } finally {
            for (const node of nodes) if (node.child.exitCode === null && node.child.signalCode === null) await kill(node);
          }
        });
      }
      report.log(
        `  lease ${leaseMs} ms: to a new leader ${toLeader.join(', ')} ms; to a send projected ${toListed.join(', ')} ms`,
      );
      report.metric(
        `takeover after the leader's SIGKILL, lease ${leaseMs} ms (median of ${RUNS})`,
        round(median(toLeader)),
        'ms',
      );
      report.metric(
        `SIGKILL to a send projected without VIEWS_LAGGING, lease ${leaseMs} ms (median of ${RUNS})`,
        round(median(toListed)),
        'ms',
      );
    }
  } finally {
    await redis.stop();
  }
});
