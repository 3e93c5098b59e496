/**
 * Acceptance (issue 4): blue/green rebuild of the Redis views while sends
 * continue. Requests during the rebuild keep seeing the old, complete view; the
 * switch is atomic; counts are exact afterwards; wakes stay one per message.
 * And `mailbox projections rebuild` (the CLI) with plain progress lines.
 */
import fs from 'node:fs';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { Redis } from 'ioredis';
import { SqliteEventStore } from '../../src/adapters/eventstore/sqliteEventStore';
import { MemoryProjectionStore } from '../../src/adapters/projections/memoryProjectionStore';
import { connectRedis } from '../../src/adapters/projections/redisConnection';
import { RedisProjectionStore } from '../../src/adapters/projections/redisProjectionStore';
import { InProcessWakeBus } from '../../src/adapters/wake/inProcessWakeBus';
import { runRebuild, runRebuildCommand, runStatus, type ProjectionsIo } from '../../src/cli/commands/projections';
import type { StoredEvent } from '../../src/events/types';
import type { Mailbox } from '../../src/mailbox';
import { rebuildProjections } from '../../src/projections/rebuild';
import type { WakeEvent } from '../../src/projections/viewChanges';
import { snapshotViews } from '../contract/projectionStore.contract';
import { appendLog, generateLog, projectAll } from '../contract/projectionStoreLog';
import { allEvents, memoryMailbox, scratchBase, tempDir } from '../support/fixtures';
import { startRedis, type TestRedis } from '../support/redisServer';
import { REDIS_TEST_TIMEOUT_ENV, REDIS_TEST_TIMEOUT_MS } from '../support/redisDeadline';

let redis: TestRedis;
let namespaces = 0;
const namespace = () => `bg${process.pid}n${++namespaces}`;

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

async function keysOf(prefix: string): Promise<number> {
  const client = new Redis(redis.url);
  const keys = await client.keys(`${prefix}*`);
  await client.quit();
  return keys.length;
}

describe('blue/green rebuild of the Redis views', () => {
  let mailbox: Mailbox | null = null;
  let builder: RedisProjectionStore | null = null;
  afterEach(async () => {
    await mailbox?.projections.reset();
    await mailbox?.close();
    await builder?.close();
    mailbox = null;
    builder = null;
  });

  it('while sends continue: no request sees a half-built view; exact counts and one wake per message after the switch', async () => {
    const ns = namespace();
    mailbox = await memoryMailbox({ redisUrl: redis.url, redisNamespace: ns, redisTimeoutMs: REDIS_TEST_TIMEOUT_MS });
    await appendLog(mailbox.eventStore, generateLog(10_000, 9));
    expect(await mailbox.runner.waitFor((await mailbox.eventStore.headPosition())!, 25_000)).toBe(true); // 10,000 events: 10 s was too short once, on 2 cores at load 13
    const a = mailbox.asActor({ identity: '@a', role: 'agent' });
    const b = mailbox.asActor({ identity: '@b', role: 'agent' });
    const wakesToB: WakeEvent[] = [];
    const unsubscribe = await mailbox.wakeBus.subscribe('@b', (wake) => wakesToB.push(wake));

    // Requests during the rebuild: @c never reads from now on, so its unread count and inbox only grow.
    const agents = (await mailbox.projections.listAgents()).length;
    let lowestC = (await mailbox.projections.unreadCount('@c')).unread;
    const observations: string[] = [];
    let rebuilding = true;
    const readers = (async () => {
      while (rebuilding) {
        const [c, listed, page] = await Promise.all([
          mailbox!.projections.unreadCount('@c'),
          mailbox!.projections.listAgents(),
          mailbox!.projections.listMessages('@c', { box: 'inbox', limit: 1, before: null }),
        ]);
        if (c.unread < lowestC || page.unreadCount < lowestC || listed.length !== agents) {
          observations.push(`unread ${c.unread}/${page.unreadCount} after ${lowestC}, agents ${listed.length}`);
        }
        lowestC = Math.max(lowestC, c.unread);
        await new Promise((resolve) => setTimeout(resolve, 2));
      }
    })();
    const sentToB: string[] = [];
    const writers = (async () => {
      for (let i = 0; rebuilding; i++) {
        if (i % 10 === 9) await a.send({ to: 'AGENT:*', subject: `all ${i}`, body: 'x' });
        const { messageId } = await a.send({
          to: i % 2 ? '@b' : '@c',
          subject: `during ${i}`,
          body: 'x',
          priority: i % 3 ? 'normal' : 'high',
        });
        if (i % 2) sentToB.push(messageId);
        if (i % 4 === 1) await b.markRead({ messageId });
      }
    })();

    builder = new RedisProjectionStore(await connectRedis(redis.url, { name: 'rebuilder', timeoutMs: REDIS_TEST_TIMEOUT_MS }), {
      namespace: ns,
    });
    const phases = new Set<string>();
    const result = await rebuildProjections(mailbox.eventStore, builder.generations(), {
      settleMs: 500,
      dropPreviousAfterMs: 1500,
      onProgress: (p) => phases.add(p.phase),
    });
    rebuilding = false;
    await Promise.all([readers, writers]);

    expect(observations).toEqual([]);
    expect(result).toMatchObject({ generation: `${ns}:v2:`, previous: `${ns}:v1:`, forced: false });
    expect(result.events).toBeGreaterThanOrEqual(10_000);
    expect([...phases]).toEqual(expect.arrayContaining(['building', 'switching', 'switched']));
    expect(await keysOf(`${ns}:v1:`)).toBe(0); // the previous generation is gone after the grace period
    const head = (await mailbox.eventStore.headPosition())!;
    expect(await mailbox.runner.waitFor(head, 5000)).toBe(true);
    expect((await builder.generations().active()).name).toBe(`${ns}:v2:`);
    expect(await snapshotViews(mailbox.projections)).toEqual(await memoryViewsOf(await allEvents(mailbox)));
    // Exactly one wake per message to @b during the test (direct mail and broadcasts), across the switch.
    const expectedWakes = (await allEvents(mailbox)).flatMap((e) =>
      e.position > 10_000n &&
      ((e.type === 'MessageSent' && e.data.to === '@b') || (e.type === 'BroadcastDelivered' && e.data.recipient === '@b'))
        ? [e.data.messageId]
        : [],
    );
    expect(sentToB.length).toBeGreaterThan(0);
    expect(wakesToB.map((w) => w.messageId)).toEqual(expectedWakes);
    await unsubscribe();
  }, 90_000);

  it('`mailbox projections rebuild` builds from the log, prints progress lines, switches; status reports it', async () => {
    const dir = tempDir('mailbox-rebuild-cli-', scratchBase());
    const file = path.join(dir, 'events.sqlite');
    const log = SqliteEventStore.open(file);
    const events = generateLog(3000, 13);
    await appendLog(log, events);
    await log.close();
    const ns = namespace();
    const output = (env: Record<string, string>) => {
      const stdout = new PassThrough();
      const stderr = new PassThrough();
      const text = { out: '', err: '' };
      stdout.on('data', (chunk) => (text.out += chunk));
      stderr.on('data', (chunk) => (text.err += chunk));
      const io: ProjectionsIo = { stdout, stderr, env };
      return { io, text };
    };
    const env = {
      MAILBOX_EVENTSTORE_URL: `sqlite:${file}`,
      MAILBOX_REDIS_URL: redis.url,
      MAILBOX_REDIS_NAMESPACE: ns,
      ...REDIS_TEST_TIMEOUT_ENV,
    };

    const rebuild = output(env);
    expect(await runRebuild({ graceMs: '0', settleMs: '50' }, rebuild.io)).toBe(0);
    const lines = rebuild.text.out.trim().split('\n');
    expect(lines[0]).toMatch(/^rebuild: building 0% \(0 events/);
    expect(lines).toContain(`rebuild: building 100% (3000 events, position 3000 of 3000)`);
    expect(lines.some((line) => line.startsWith('switched the active views to the rebuilt generation'))).toBe(true);
    expect(lines[lines.length - 1]).toMatch(
      new RegExp(
        `^rebuilt 3000 events into ${ns}:v2: in \\d+ ms \\(\\d+ events/s\\); ` +
          // A fresh namespace: the generation switched away from held no views, and is not said to be deleted.
          `previous generation ${ns}:v1: held no views: nothing to delete \\(the empty generation was cleared away after the 0 ms grace\\); ` +
          'no live projector was following, switched without it$',
      ),
    );

    const store = new RedisProjectionStore(
      await connectRedis(redis.url, { name: 'cli-check', timeoutMs: REDIS_TEST_TIMEOUT_MS }),
      { namespace: ns },
    );
    expect(await snapshotViews(store)).toEqual(await memoryViewsOf(events));
    const status = output(env);
    expect(await runStatus(status.io)).toBe(0);
    expect(JSON.parse(status.text.out)).toEqual({
      namespace: ns,
      viewsBuilt: true,
      activeGeneration: `${ns}:v2:`,
      checkpoint: '3000',
      logHead: '3000',
      upToDate: true,
      logIdentity: expect.any(String),
      viewsLogIdentity: expect.any(String),
      viewsOfThisLog: true,
      liveWriter: null,
    });

    // Another log (another file) on the same namespace: refused, nothing written; --take-over replaces the views.
    const otherFile = path.join(dir, 'other.sqlite');
    const other = SqliteEventStore.open(otherFile);
    const otherEvents = generateLog(500, 21);
    await appendLog(other, otherEvents);
    const otherIdentity = await other.logIdentity();
    await other.close();
    const otherEnv = { ...env, MAILBOX_EVENTSTORE_URL: `sqlite:${otherFile}` };
    const keysBefore = await keysOf(`${ns}:`);
    const refused = output(otherEnv);
    await runRebuildCommand(refused.io, { json: true });
    expect(process.exitCode).toBe(2);
    const envelope = JSON.parse(refused.text.err);
    expect(envelope).toMatchObject({ code: 'FOREIGN_VIEWS', message: expect.stringContaining('--take-over') });
    expect(refused.text.err.trim().split('\n')).toHaveLength(1);
    expect(await keysOf(`${ns}:`)).toBe(keysBefore);
    const takeOver = output(otherEnv);
    expect(await runRebuild({ graceMs: '0', settleMs: '50', takeOver: true }, takeOver.io)).toBe(0);
    expect(takeOver.text.out).toContain('took the namespace over from log');
    const reader = new RedisProjectionStore(
      await connectRedis(redis.url, { name: 'cli-check-2', timeoutMs: REDIS_TEST_TIMEOUT_MS }),
      { namespace: ns },
    );
    expect(await snapshotViews(reader)).toEqual(await memoryViewsOf(otherEvents));
    await reader.close();
    const after = output(otherEnv);
    expect(await runStatus(after.io)).toBe(0);
    expect(JSON.parse(after.text.out)).toMatchObject({
      logIdentity: otherIdentity,
      viewsLogIdentity: otherIdentity,
      viewsOfThisLog: true,
    });
    process.exitCode = undefined; // the CLI runner set it; other suites in this worker expect none

    // Without Redis and with views in memory (nothing outside a server to rebuild): a loud configuration error, Redis untouched.
    const before = await keysOf(`${ns}:`);
    const missing = output({ MAILBOX_EVENTSTORE_URL: `sqlite:${file}`, MAILBOX_VIEWS: 'memory' });
    await expect(runRebuild({}, missing.io)).rejects.toMatchObject({
      envelope: { code: 'VALIDATION_FAILED', field: 'MAILBOX_VIEWS' },
    });
    expect(await keysOf(`${ns}:`)).toBe(before);
    await store.reset();
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });
});
