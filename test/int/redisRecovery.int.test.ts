/**
 * Acceptance (issue 4), recovery of the Redis views:
 * - the projector process SIGKILLed in the middle of a batch (half of it
 *   committed), restarted: the views equal a from-scratch rebuild and the
 *   in-memory projection of the log;
 * - Redis restarted with its data gone: the projector detects the missing
 *   checkpoint and rebuilds; counts converge, new mail counts exactly once.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import pino from 'pino';
import { SqliteEventStore } from '../../src/adapters/eventstore/sqliteEventStore';
import { MemoryProjectionStore } from '../../src/adapters/projections/memoryProjectionStore';
import { connectRedis } from '../../src/adapters/projections/redisConnection';
import { RedisProjectionStore } from '../../src/adapters/projections/redisProjectionStore';
import { InProcessWakeBus } from '../../src/adapters/wake/inProcessWakeBus';
import type { StoredEvent } from '../../src/events/types';
import type { Mailbox } from '../../src/mailbox';
import { ProjectionRunner } from '../../src/projections/projectionRunner';
import { snapshotViews } from '../contract/projectionStore.contract';
import { appendLog, generateLog, projectAll } from '../contract/projectionStoreLog';
import { allEvents, memoryMailbox, scratchBase, tempDir } from '../support/fixtures';
import { freePort, startRedis, type TestRedis } from '../support/redisServer';
import { CONTRACT_TIMEOUT_MS } from '../contract/contractRedisTimeout';

const ROOT = path.resolve(__dirname, '../..');
const silent = pino({ level: 'silent' });
let redis: TestRedis;
/** Tests that stop or empty the server need our own one (not a shared REDIS_URL). */
const restartable = process.env.REDIS_URL ? it.skip : it;
let namespaces = 0;
const namespace = () => `rec${process.pid}n${++namespaces}`;

beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await redis.stop();
});

async function memoryViewsOf(events: readonly StoredEvent[]) {
  const store = new MemoryProjectionStore(new InProcessWakeBus());
  await store.applyBatch(projectAll(events));
  return snapshotViews(store);
}

let opened: RedisProjectionStore[] = [];
/** Every describe closes what its tests opened: an open client keeps a reconnect timer alive after the suite. */
async function closeOpenedStores(): Promise<void> {
  await Promise.all(
    opened.map(async (store) => {
      await store.reset().catch(() => undefined); // Redis may be down (the outage test)
      await store.close();
    }),
  );
  opened = [];
}
async function openStore(ns: string): Promise<RedisProjectionStore> {
  const store = new RedisProjectionStore(
    await connectRedis(redis.url, { name: 'recovery-test', timeoutMs: CONTRACT_TIMEOUT_MS }),
    { namespace: ns },
  );
  opened.push(store);
  return store;
}

/** A SQLite log on tmpfs when there is one: appends fsync, and this test is about Redis, not disks. */
function scratchDir(): string {
  return tempDir('mailbox-redis-kill-', scratchBase());
}

interface ChildLine {
  kind: 'applied' | 'caught-up' | 'error';
  last?: string;
  checkpoint?: string | null;
  message?: string;
}

function startProjector(file: string, ns: string, killInBatch = 0) {
  const child = spawn(
    process.execPath,
    [
      '-r',
      path.join(ROOT, 'test/support/tsRequireHook.js'),
      path.join(ROOT, 'test/int/redisProjectorProcess.ts'),
      file,
      redis.url,
      ns,
      String(killInBatch),
    ],
    { cwd: ROOT, stdio: 'pipe' },
  );
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const exited = new Promise<string | number | null>((resolve) => child.on('exit', (code, signal) => resolve(signal ?? code)));
  const lines = readline.createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  return {
    async next(): Promise<ChildLine> {
      const { value, done } = await lines.next();
      if (done) throw new Error(`projector exited early; stderr: ${stderr}`);
      const line = JSON.parse(value) as ChildLine;
      if (line.kind === 'error') throw new Error(`projector failed: ${line.message}`);
      return line;
    },
    exited,
    kill: () => {
      child.kill('SIGKILL');
      return exited;
    },
  };
}

describe('Redis views: recovery', () => {
  let dir: string | null = null;
  let mailbox: Mailbox | null = null;
  afterEach(async () => {
    await closeOpenedStores();
    await mailbox?.close();
    mailbox = null;
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
    dir = null;
  });

  it('a projector SIGKILLed mid-batch and restarted ends with the views of a from-scratch rebuild', async () => {
    dir = scratchDir();
    const file = path.join(dir, 'events.sqlite');
    const events = generateLog(10_000, 3);
    const log = SqliteEventStore.open(file);
    await appendLog(log, events);
    const stored = await log.readAll(null, 1_000_000);
    await log.close();
    expect(stored).toHaveLength(events.length);
    const ns = namespace();
    const store = await openStore(ns);

    // SIGKILLed in its third batch of 1000 (positions 2001..3000), after the first half was committed.
    const killed = startProjector(file, ns, 3);
    expect((await killed.next()).last).toBe('1000');
    expect((await killed.next()).last).toBe('2000');
    expect(await killed.exited).toBe('SIGKILL');
    expect(await store.checkpoint()).toBe(2500n);

    const restarted = startProjector(file, ns);
    let line = await restarted.next();
    while (line.kind !== 'caught-up') line = await restarted.next();
    expect(line.checkpoint).toBe(String(stored.length));
    await restarted.kill();

    const fromScratch = await openStore(namespace());
    const runner = new ProjectionRunner(SqliteEventStore.open(file), fromScratch, silent);
    await runner.start();
    await runner.stop();
    const views = await snapshotViews(store);
    expect(views).toEqual(await snapshotViews(fromScratch));
    expect(views).toEqual(await memoryViewsOf(stored));
  }, 90_000); // two projector processes and a rebuild of 10,000 events: past 30 s once, on 2 cores at load 13

  restartable('Redis restarted empty: the projector detects the lost checkpoint, rebuilds, and counts converge', async () => {
    mailbox = await memoryMailbox({ redisUrl: redis.url, redisNamespace: namespace() });
    await appendLog(mailbox.eventStore, generateLog(3000, 5));
    expect(await mailbox.runner.waitFor((await mailbox.eventStore.headPosition())!, 10_000)).toBe(true);
    const before = await snapshotViews(mailbox.projections);
    expect(before.views['@b']).toBeDefined();

    await redis.restartEmpty!();
    // Nothing is sent: the idle projector must notice by itself that Redis lost the views.
    const deadline = Date.now() + 15_000;
    let views = await snapshotViews(mailbox.projections).catch(() => null);
    while (
      JSON.stringify(views, (_k, v) => (typeof v === 'bigint' ? v.toString() : v)) !==
        JSON.stringify(before, (_k, v) => (typeof v === 'bigint' ? v.toString() : v)) &&
      Date.now() < deadline
    ) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      views = await snapshotViews(mailbox.projections).catch(() => null);
    }
    expect(views).toEqual(before);

    // New mail after the rebuild counts exactly once, for B and C, and not for the sender.
    const a = mailbox.asActor({ identity: '@a', role: 'agent' });
    await a.send({ to: '@b', subject: 'after the restart', body: 'counted once' });
    await a.send({ to: 'AGENT:*', subject: 'broadcast after the restart', body: 'one each' });
    const after = await snapshotViews(mailbox.projections);
    expect(after).toEqual(await memoryViewsOf(await allEvents(mailbox)));
    expect(after.heartbeats.find((h) => h.identity === '@b')!.unread).toBe(
      before.heartbeats.find((h) => h.identity === '@b')!.unread + 2,
    );
    expect(after.heartbeats.find((h) => h.identity === '@c')!.unread).toBe(
      before.heartbeats.find((h) => h.identity === '@c')!.unread + 1,
    );
    expect(after.heartbeats.find((h) => h.identity === '@a')!.unread).toBe(
      before.heartbeats.find((h) => h.identity === '@a')!.unread,
    );
  });
});

describe('Redis unreachable or misconfigured', () => {
  afterEach(closeOpenedStores);
  it('a mailbox on an unreachable Redis fails to start with UNAVAILABLE; a URL that is not Redis with VALIDATION_FAILED', async () => {
    const port = await freePort(); // nothing listens there
    await expect(memoryMailbox({ redisUrl: `redis://127.0.0.1:${port}` })).rejects.toMatchObject({
      envelope: {
        code: 'UNAVAILABLE',
        // Where, why and what to check (it said "is unavailable; retry later (the request was not applied)").
        message:
          `Redis at redis://127.0.0.1:${port} is unreachable (connect ECONNREFUSED 127.0.0.1:${port}): ` +
          'start it, or fix redisUrl. Nothing was read or written.',
        field: 'redisUrl', // the library's option, as its caller set it (libraryOpenRefusals.int)
      },
    });
    // A value the library refuses is named as its caller set it: the option (libraryOptions.int).
    await expect(memoryMailbox({ redisUrl: 'http://127.0.0.1:6379' })).rejects.toMatchObject({
      envelope: { code: 'VALIDATION_FAILED', field: 'redisUrl' },
    });
    await expect(memoryMailbox({ redisUrl: redis.url, redisNamespace: 'not a namespace' })).rejects.toMatchObject({
      envelope: { code: 'VALIDATION_FAILED', field: 'redisNamespace' },
    });
  });

  restartable('reads while Redis is down answer UNAVAILABLE (503), and work again once it is back', async () => {
    const store = await openStore(namespace());
    const log = generateLog(50, 1);
    await store.applyBatch(projectAll(log));
    await redis.stop();
    const error = await store.unreadCount('@b').catch((e: unknown) => e);
    expect(error).toMatchObject({ envelope: { code: 'UNAVAILABLE' } });
    expect((error as { status: number }).status).toBe(503);
    await redis.restartEmpty!();
    // Nothing is queued while disconnected (reads fail fast): the store answers once it has reconnected on its own.
    let back: unknown = null;
    for (const until = Date.now() + 10_000; back === null && Date.now() < until;) {
      back = await store.unreadCount('@b').catch(async () => {
        await new Promise((resolve) => setTimeout(resolve, 50));
        return null;
      });
    }
    expect(back).toEqual({ unread: 0, unseen: 0, byPriority: { low: 0, normal: 0, high: 0 } }); // back (and empty)
  });
});
