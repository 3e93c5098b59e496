/**
 * The differential check of the Redis fast path (Lua) against the pure read
 * model (the memory store is storage around it): seeded random logs fed to
 * both, delivered as an at-least-once subscription might (duplicates,
 * redelivered batches, shuffled batch boundaries, a crash mid-batch; and a
 * blue/green rebuild of a new generation, then live applies on it), then
 * every view compared: each inbox and outbox page under every filter, counts,
 * heartbeat counts, agents, and the wakes published.
 *
 * No jest here: the short run is a test (readModelDifferential.int.test.ts),
 * the long run a benchmark script (bench/redis/differential.bench.ts).
 * A failure names its seed; READ_MODEL_DIFF_SEED=<seed> replays that one log.
 */
import { createHash } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import pino from 'pino';
import { MemoryProjectionStore } from '../../src/adapters/projections/memoryProjectionStore';
import { inLogOrder, perTagCalls, planEvents } from '../../src/adapters/projections/redisApplyPlan';
import { connectRedis } from '../../src/adapters/projections/redisConnection';
import { RedisProjectionStore } from '../../src/adapters/projections/redisProjectionStore';
import { defineMailboxScripts } from '../../src/adapters/projections/redisScripts';
import { RedisWakeBus } from '../../src/adapters/projections/redisWakeBus';
import { SqliteProjectionStore } from '../../src/adapters/projections/sqliteProjectionStore';
import type { Priority, TaskEnvelope, TaskEvent, TaskState } from '../../src/events/types';
import type { ProjectionStore, ViewPage } from '../../src/projections/projectionStore';
import { TASK_LISTS, type TaskList } from '../../src/projections/readModel/taskView';
import type { ProjectedEvent, WakeEvent } from '../../src/projections/viewChanges';
import { GenerationGap } from '../../src/projections/rebuildGenerations';
import type { WakeBus } from '../../src/projections/wakeBus';
import { storeQuery } from './storeQuery';
import { recordWakes } from './wakeRecorder';
import { LogBuilder, prng } from './projectionStoreLog';
import { CONTRACT_TIMEOUT_MS } from './contractRedisTimeout';

export const SEED_ENV = 'READ_MODEL_DIFF_SEED';

type Random = () => number;

const PRIORITIES: Priority[] = ['low', 'normal', 'high'];
/** Tags with the separators and escapes of the Redis stored head, and a non-ASCII one. */
const TAGS = ['ops', 'review', 'a,b', 'a', 'b', 'x|y', '%2C', 'é'];
/**
 * The tags a listing may filter by: a filter's tag holds no comma (a comma separates tags in every form a filter
 * takes), while a log written before that rule may still hold 'a,b' as one tag, which the views keep and show.
 */
const FILTER_TAGS = TAGS.filter((tag) => !tag.includes(','));
const VIAS = ['stream', 'webhook', 'hook', 'redis'] as const;
const SUBJECTS = ['hello', '"from":"@a","tags":["ops"],', 'a|b|c', 'plain'];

// 1. Random logs

interface Delivery {
  recipient: string;
  messageId: string;
}

/** A seeded random log: several agents, direct messages, broadcasts, reads, archives, retirements, late registrations. */
export function randomLog(seed: number, maxEvents: number): LogBuilder {
  const random = prng(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)];
  const chance = (p: number) => random() < p;
  const target = Math.max(10, Math.floor(maxEvents * (0.25 + 0.75 * random())));
  const log = new LogBuilder();
  let agents = Array.from({ length: 3 + Math.floor(random() * 4) }, (_u, i) => `@agent${i}`);
  log.register(...agents);
  const retired: string[] = [];
  const deliveries: Delivery[] = [];
  const messages: string[] = [];
  /** Messages that carried a task, with who may hold it (issue 12). */
  const tasks: Array<{ id: string; sender: string; audience: string[] }> = [];
  const sendTracked = (from: string, to: string | string[], audience: string[] = []) => {
    const sent = options(random, messages);
    const id = log.send(from, to, sent, audience);
    // A reply obligation (issue 13), due within the hour; at times found overdue later (see below).
    if (chance(0.25))
      log.requestReply(id, new Date(Date.parse(log.sentAt(id)) + Math.floor(random() * 3_600_000) + 1).toISOString());
    if (sent.task)
      tasks.push({ id, sender: from, audience: to === 'AGENT:*' ? audience : typeof to === 'string' ? [to] : [...new Set(to)] });
    return id;
  };
  let late = 0;
  // An identity no current agent holds (a send to it expects no wake): never registered, registered only later, or retired.
  const nobody = (): string => pick(['@unregistered', `@late${late}`, ...retired]);
  while (log.events.length < target) {
    const roll = random();
    if (roll < 0.3) {
      const from = pick(agents);
      const to = chance(0.05) ? from : chance(0.1) ? nobody() : pick(agents.filter((a) => a !== from));
      const id = sendTracked(from, to);
      messages.push(id);
      deliveries.push({ recipient: to, messageId: id });
    } else if (roll < 0.33) {
      // A list of identities (issue 13): the sender may list itself, an identity may repeat, one may be no agent's.
      const from = pick(agents);
      // At times one agent and one identity no agent holds: the agent's reading it alone clears the unwoken alarm.
      const list = chance(0.3)
        ? [pick(agents), nobody()]
        : [...agents.filter(() => chance(0.5)), ...(chance(0.2) ? [nobody()] : [])];
      if (list.length === 0) list.push(pick(agents));
      if (chance(0.2)) list.push(pick(list));
      const id = sendTracked(from, list);
      messages.push(id);
      for (const recipient of new Set(list)) deliveries.push({ recipient, messageId: id });
    } else if (roll < 0.36) {
      const from = pick(agents);
      const audience = agents.filter((a) => a !== from && chance(0.8));
      if (chance(0.3)) audience.push(from); // a sender in its own audience gets the entry but no wake
      if (chance(0.2) && retired.length > 0) audience.push(pick(retired)); // a snapshot that still held a retired identity
      const id = sendTracked(from, 'AGENT:*', audience);
      messages.push(id);
      for (const recipient of audience) deliveries.push({ recipient, messageId: id });
    } else if (roll < 0.58 && deliveries.length > 0) {
      const d = pick(deliveries); // may be read already, or archived (read-after-archive)
      if (chance(0.08))
        log.read(pick(agents), chance(0.5) ? d.messageId : 'no-such-message'); // a receipt for an entry it may not have
      else log.read(d.recipient, d.messageId);
    } else if (roll < 0.64 && deliveries.length > 0) {
      // Wakes observed (the ledger's `woken`): mostly for a recipient, at times again, for a stranger or no message.
      const d = pick(deliveries);
      if (chance(0.08)) log.wake(pick(agents), chance(0.5) ? d.messageId : 'no-such-message', pick(VIAS));
      else if (chance(0.1))
        log.replyOverdue(chance(0.9) ? d.messageId : 'no-such-message', '@agent0', [d.recipient], log.nextAt); // at times twice
      else if (chance(0.15))
        log.escalate(chance(0.9) ? d.messageId : 'no-such-message', [d.recipient]); // at times twice, or after a wake
      else log.wake(d.recipient, d.messageId, pick(VIAS));
    } else if (roll < 0.7 && deliveries.length > 0) {
      const d = pick(deliveries);
      if (chance(0.08)) log.archive(pick(agents), d.messageId);
      else if (chance(0.25))
        log.unarchive(chance(0.9) ? d.recipient : pick(agents), d.messageId); // archived or not
      else log.archive(d.recipient, d.messageId);
    } else if (roll < 0.72 && deliveries.length > 0) {
      // Seen marks (issue 13): a page's worth for one recipient, some already seen, read or archived; now and then
      // a mark for a message the identity never received, or for no message at all.
      const recipient = pick(deliveries).recipient;
      const own = deliveries.filter((d) => d.recipient === recipient).map((d) => d.messageId);
      const ids = own.filter(() => chance(0.4));
      if (chance(0.1)) ids.push(pick(deliveries).messageId, 'no-such-message');
      log.seen(chance(0.95) ? recipient : pick(agents), ...(ids.length ? ids : [pick(own)]));
    } else if (roll < 0.74) {
      const identity = `@late${late++}`; // registered after broadcasts it was not in
      log.register(identity);
      agents.push(identity);
    } else if (roll < 0.77) {
      if (chance(0.25) || agents.length <= 2) {
        log.retire(chance(0.5) && retired.length > 0 ? pick(retired) : '@ghost'); // retired again, or never registered
      } else {
        const identity = pick(agents);
        log.retire(identity);
        agents = agents.filter((a) => a !== identity);
        retired.push(identity);
      }
    } else if (roll < 0.79 && retired.length > 0) {
      const identity = retired.pop()!;
      log.register(identity); // registered again: current
      agents.push(identity);
    } else if (tasks.length > 0 && chance(0.4)) {
      randomTaskEvent(log, pick(tasks), random); // any order, even one the decider would refuse: the rules must cope alike
    } else {
      const from = pick(agents);
      const id = sendTracked(from, pick(agents));
      messages.push(id);
    }
  }
  return log;
}

const STATES: TaskState[] = [
  'Submitted',
  'Working',
  'InputRequired',
  'AuthRequired',
  'Completed',
  'Canceled',
  'Failed',
  'Rejected',
];

/**
 * One task event on a task's stream: claims (with leases), state changes (some by the sender: its cancels end the
 * task seen), renewals, releases, lapses, expiries, artifacts, outcomes seen by the sender.
 */
function randomTaskEvent(log: LogBuilder, task: { id: string; sender: string; audience: string[] }, random: Random): void {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)];
  const taskId = task.id;
  const at = log.nextAt;
  const later = new Date(Date.parse(at) + Math.floor(random() * 60_000)).toISOString();
  const who = task.audience.length > 0 ? pick(task.audience) : '@nobody';
  const roll = random();
  const from = pick(STATES);
  let event: TaskEvent;
  if (roll < 0.25)
    event = {
      type: 'TaskClaimed',
      data: { taskId, claimant: who, claimedAt: at, leaseExpiresAt: random() < 0.5 ? later : null },
    };
  else if (roll < 0.6)
    event = {
      type: 'TaskStateChanged',
      data: {
        taskId,
        from,
        to: pick(STATES),
        reason: random() < 0.3 ? 'why' : null,
        note: random() < 0.3 ? 'note' : null,
        changedAt: at,
      },
    };
  else if (roll < 0.7)
    event = { type: 'TaskLeaseRenewed', data: { taskId, claimant: who, leaseExpiresAt: later, renewedAt: at } };
  else if (roll < 0.78) event = { type: 'TaskReleased', data: { taskId, claimant: who, from, releasedAt: at } };
  else if (roll < 0.86) {
    // The sweep records a lapse after its lease's end, and an expiry after its deadline (the rules date them then).
    const leaseExpiresAt = secondBefore(at);
    event = { type: 'TaskLeaseExpired', data: { taskId, claimant: who, from, leaseExpiresAt, expiredAt: at } };
  } else if (roll < 0.9) {
    const deadline = secondBefore(at);
    event = { type: 'TaskExpired', data: { taskId, from, to: 'Canceled', reason: 'expired', deadline, expiredAt: at } };
  } else if (roll < 0.95) {
    log.task(task.sender, { type: 'TaskOutcomeSeen', data: { taskId, sender: task.sender, state: from, seenAt: at } });
    return;
  } else
    event = {
      type: 'TaskArtifactAdded',
      data: { taskId, artifact: { artifactId: `a-${at}`, name: null, parts: [{ kind: 'text', text: 'x' }] }, addedAt: at },
    };
  // A state change by the sender (its cancel, its answer) as often as by a holder: who ended it decides who it waits on.
  log.task(event.type === 'TaskStateChanged' && random() < 0.5 ? task.sender : who, event);
}

const secondBefore = (at: string): string => new Date(Date.parse(at) - 1_000).toISOString();

function options(random: Random, messages: readonly string[]) {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)];
  let data: unknown = 'leaf';
  if (random() < 0.05) for (let depth = 0; depth < 200; depth++) data = { data };
  const task =
    random() < 0.1 ? ({ state: 'Working', input: { parts: [{ kind: 'data', data }] } } as unknown as TaskEnvelope) : null;
  return {
    priority: pick(PRIORITIES),
    tags: TAGS.filter(() => random() < 0.2),
    subject: pick(SUBJECTS),
    task,
    wakeSuppressed: random() < 0.1,
    replyTo: messages.length > 0 && random() < 0.3 ? pick(messages) : undefined,
  };
}

// 2. Deliveries

export type Step =
  | { kind: 'batch'; events: ProjectedEvent[] }
  /** The process died while applying `events`: part of it was written; then the whole batch comes again. */
  | { kind: 'crash'; events: ProjectedEvent[]; cut: number; seed: number };

/** Batches of random size; duplicates before, between and after the fresh events; stale batches again; crashes. */
export function deliveries(events: readonly ProjectedEvent[], random: Random): Step[] {
  const steps: Step[] = [];
  let frontier = 0;
  while (frontier < events.length) {
    const size = 1 + Math.floor(random() * (random() < 0.2 ? 200 : 40));
    const fresh = events.slice(frontier, frontier + size);
    const delivered = events.slice(0, frontier);
    frontier += fresh.length;
    const batch: ProjectedEvent[] = [];
    let next = 0;
    const duplicates = delivered.length === 0 ? 0 : Math.floor(random() * 8);
    for (let i = 0; i < duplicates; i++) {
      while (next < fresh.length && random() < 0.5) batch.push(fresh[next++]);
      batch.push(delivered[Math.floor(random() * delivered.length)]);
    }
    batch.push(...fresh.slice(next));
    if (random() < 0.2) batch.push(...fresh.filter(() => random() < 0.2)); // some fresh ones twice
    if (random() < 0.12)
      steps.push({
        kind: 'crash',
        events: batch,
        cut: Math.floor(random() * batch.length),
        seed: Math.floor(random() * 2 ** 31),
      });
    else steps.push({ kind: 'batch', events: batch });
    if (random() < 0.1) {
      const start = Math.floor(random() * frontier);
      steps.push({ kind: 'batch', events: events.slice(start, Math.min(frontier, start + 1 + Math.floor(random() * 60))) });
    }
  }
  return steps;
}

// 3. The stores under test

export interface Subject {
  name: string;
  store: ProjectionStore;
  /** Applies one step as this store would live through it. */
  feed(step: Step): Promise<void>;
  wakes(): Promise<WakeEvent[]>;
  /** Wakes are published only for events past this position (a rebuild publishes none); absent: for every event. */
  wakesAfter?(): bigint | null;
  /** After the last step, before the views are compared (absent: nothing to do). */
  finish?(): Promise<void>;
  close(): Promise<void>;
}

class RecordingWakeBus implements WakeBus {
  readonly wakes: WakeEvent[] = [];
  async publish(wakes: readonly WakeEvent[]): Promise<void> {
    this.wakes.push(...wakes);
  }
  async subscribe(): Promise<() => Promise<void>> {
    return async () => undefined;
  }
  async close(): Promise<void> {}
}

function memorySubject(): Subject {
  const bus = new RecordingWakeBus();
  const store = new MemoryProjectionStore(bus);
  return {
    name: 'memory (pure read model)',
    store,
    feed: async (step) => {
      if (step.kind === 'crash') await store.applyBatch(step.events.slice(0, step.cut)); // what got applied before the crash
      await store.applyBatch(step.events);
    },
    wakes: async () => bus.wakes,
    close: async () => undefined,
  };
}

/**
 * The SQLite views: a crash step applies what was committed before the crash, then the rest of the batch with a
 * poisoned event at its end (no rule for it: the transaction that reaches it fails half-way and is rolled back;
 * those before it may commit), then the batch again. `transactionBudgetMs` (the store's default when omitted) ends
 * a live transaction early: 0 ends each after its first few events, as a loaded machine does.
 */
export function sqliteSubject(file: string, eventsPerTransaction: number, transactionBudgetMs?: number): Subject {
  const bus = new RecordingWakeBus();
  const store = SqliteProjectionStore.open(file, bus, { eventsPerTransaction, transactionBudgetMs });
  return {
    name: `sqlite, ${eventsPerTransaction} events per transaction${transactionBudgetMs === 0 ? ', each cut short by its time budget' : ''}`,
    store,
    feed: async (step) => {
      if (step.kind === 'crash') {
        await store.applyBatch(step.events.slice(0, step.cut));
        const last = step.events.reduce((max, event) => (event.position > max ? event.position : max), 0n);
        const poison = { position: last + 1n, at: '', changes: [{ kind: 'poison' }] } as unknown as ProjectedEvent;
        // The events after the cut, as a subscription resumes: a poisoned transaction cut short by its time budget
        // commits the events before the poison, so this delivery must leave no gap (a slice of the batch's last
        // events did, and the views rightly skipped what was below their new checkpoint: a CI flake at seed 25).
        const failed = await store.applyBatch([...step.events.slice(step.cut), poison]).then(
          () => null,
          (error: Error) => error,
        );
        if (!failed?.message.includes('No read model rule')) throw new Error(`the poisoned transaction did not fail: ${failed}`);
      }
      await store.applyBatch(step.events);
    },
    wakes: async () => bus.wakes,
    close: () => store.close(),
  };
}

let namespaces = 0;

async function redisSubject(
  url: string,
  identities: readonly string[],
  scriptPerTag: boolean,
  eventsPerScript: number,
): Promise<Subject> {
  const namespace = `diff${process.pid}n${++namespaces}`;
  const store = new RedisProjectionStore(await connectRedis(url, { name: 'diff-store', timeoutMs: CONTRACT_TIMEOUT_MS }), {
    namespace,
    scriptPerTag,
    eventsPerScript,
  });
  const bus = new RedisWakeBus(
    await connectRedis(url, { name: 'diff-publisher', timeoutMs: CONTRACT_TIMEOUT_MS }),
    () => connectRedis(url, { name: 'diff-subscriber', timeoutMs: CONTRACT_TIMEOUT_MS }),
    store.keys,
    pino({ level: 'silent' }),
  );
  const admin = await connectRedis(url, { name: 'diff-admin', timeoutMs: CONTRACT_TIMEOUT_MS });
  defineMailboxScripts(admin);
  const recorder = await recordWakes(bus, identities, 10_000);
  return {
    name: scriptPerTag
      ? `redis, one script per hash tag (Cluster layout), ${eventsPerScript} events per call`
      : `redis, one script per chunk, ${eventsPerScript} events per call`,
    store,
    feed: async (step) => {
      if (step.kind === 'crash') {
        if (scriptPerTag) {
          // Cluster layout: some agent tags written, the global commit (checkpoint) never made.
          const fresh = inLogOrder(step.events, await store.checkpoint());
          const { agents } = perTagCalls(planEvents(fresh), {
            keys: store.keys,
            prefix: store.keys.defaultPrefix,
            flags: 'cpw',
            expected: '',
          });
          const written = prng(step.seed);
          for (const call of agents) if (written() < 0.5) await admin.mailboxApply(call.keys.length, ...call.keys, ...call.args);
        } else {
          await store.applyBatch(step.events.slice(0, step.cut)); // the chunks committed before the crash
        }
      }
      await store.applyBatch(step.events);
    },
    wakes: async () => {
      await recorder.flush();
      return recorder.wakes;
    },
    close: async () => {
      await recorder.stop();
      await bus.close();
      await store.reset();
      await store.close();
      await admin.quit();
    },
  };
}

/**
 * A blue/green rebuild into Redis on a single node, then the live projector on top: the generation being built takes
 * its batches as the rebuild gives them (ProjectionGeneration.applyBatch, no wakes), each naming the position it
 * follows. A crash step is a batch that fails part-way (a poisoned fact: no rule) after the part before the cut went
 * in, then the batch the rebuild had in flight behind it, refused (GenerationGap), then the batch again. At a seeded
 * step the generation is switched to, and the steps after it are live applies (wakes published) on the switched
 * generation; at the end at the latest. Wakes are compared from the switch on (a rebuild publishes none).
 */
async function rebuildSubject(url: string, identities: readonly string[], random: Random): Promise<Subject> {
  const namespace = `diff${process.pid}n${++namespaces}`;
  const store = new RedisProjectionStore(await connectRedis(url, { name: 'diff-rebuild', timeoutMs: CONTRACT_TIMEOUT_MS }), {
    namespace,
  });
  const bus = new RedisWakeBus(
    await connectRedis(url, { name: 'diff-publisher', timeoutMs: CONTRACT_TIMEOUT_MS }),
    () => connectRedis(url, { name: 'diff-subscriber', timeoutMs: CONTRACT_TIMEOUT_MS }),
    store.keys,
    pino({ level: 'silent' }),
  );
  const recorder = await recordWakes(bus, identities, 10_000);
  const generations = store.generations();
  const previous = (await generations.active()).name;
  const generation = await generations.create();
  const switchChance = random() < 0.3 ? 0 : random() * 0.15; // some logs are rebuilt whole, then switched
  const switching = prng(Math.floor(random() * 2 ** 31));
  let live = false;
  let gaps = 0;
  let switchedAt: bigint | null = null;
  const switchNow = async () => {
    switchedAt = await generation.checkpoint();
    const result = await generations.activate(generation, previous, true);
    if (result.outcome !== 'switched') throw new Error(`the switch to the rebuilt generation said ${result.outcome}`);
    live = true;
  };
  const highest = (events: readonly ProjectedEvent[]) =>
    events.reduce((max, event) => (event.position > max ? event.position : max), 0n);
  return {
    name: 'redis, rebuild of a new generation, then live applies on it',
    store,
    feed: async (step) => {
      if (live) {
        if (step.kind === 'crash') await store.applyBatch(step.events.slice(0, step.cut));
        await store.applyBatch(step.events);
        return;
      }
      const stood = await generation.checkpoint();
      if (step.kind === 'crash') {
        const before = step.events.slice(0, step.cut);
        await generation.applyBatch(before, stood);
        const poisonAt = highest(step.events) + 1n;
        const poison = { position: poisonAt, at: '', changes: [{ kind: 'poison' }] } as unknown as ProjectedEvent;
        const failed = await generation.applyBatch([...step.events.slice(step.cut), poison], highest(before) || stood).then(
          () => null,
          (error: Error) => error,
        );
        if (failed === null) throw new Error('the poisoned batch did not fail');
        const refused = await generation.applyBatch(step.events, poisonAt).then(
          () => null,
          (error: Error) => error,
        );
        if (!(refused instanceof GenerationGap)) throw new Error(`the batch behind a failed one was not refused: ${refused}`);
        gaps++;
      }
      await generation.applyBatch(step.events, stood);
      if (switching() < switchChance) await switchNow();
    },
    wakesAfter: () => switchedAt,
    finish: async () => {
      if (!live) await switchNow();
      if (gaps > 0 && (await generation.checkpoint()) === null) throw new Error('gaps were refused, yet nothing was built');
    },
    wakes: async () => {
      await recorder.flush();
      return recorder.wakes;
    },
    close: async () => {
      await recorder.stop();
      await bus.close();
      if (!live) await generations.drop(generation.name);
      await store.reset();
      await generations.drop(previous).catch(() => undefined);
      await store.close();
    },
  };
}

// 4. Every view, compared

interface Query {
  box: 'inbox' | 'outbox';
  limit: number;
  [filter: string]: unknown;
}

/** Every listing the comparison makes for one identity: each status and filter alone, then random combinations. */
function queriesFor(identities: readonly string[], threads: readonly string[], random: Random): Query[] {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)];
  const limit = () => pick([1, 2, 3, 5, 7, 50, 200]);
  const queries: Query[] = [];
  for (const status of [undefined, 'unread', 'read', 'all', 'archived']) queries.push({ box: 'inbox', status, limit: limit() });
  queries.push({ box: 'outbox', limit: limit() });
  for (const box of ['inbox', 'outbox'] as const) {
    const who = box === 'inbox' ? 'from' : 'to';
    queries.push({ box, [who]: pick(identities), limit: limit() });
    if (box === 'outbox') queries.push({ box, to: 'AGENT:*', limit: limit() }, { box, to: '@unregistered', limit: limit() });
    if (threads.length > 0) queries.push({ box, threadId: pick(threads), limit: limit() });
    // Two tags, never one twice: a filter that repeats a tag is refused (VALIDATION_FAILED), as a send's is.
    const firstTag = pick(FILTER_TAGS);
    queries.push(
      { box, tags: [pick(FILTER_TAGS)], limit: limit() },
      { box, tags: [firstTag, pick(FILTER_TAGS.filter((tag) => tag !== firstTag))], limit: limit() },
    );
    queries.push({ box, priority: pick(PRIORITIES), limit: limit() });
    for (let i = 0; i < 3; i++) {
      const query: Query = { box, limit: limit() };
      if (box === 'inbox' && random() < 0.6) query.status = pick(['unread', 'read', 'all', 'archived']);
      if (random() < 0.5) query[who] = pick(identities);
      if (random() < 0.3 && threads.length > 0) query.threadId = pick(threads);
      if (random() < 0.5) query.tags = [pick(FILTER_TAGS)];
      if (random() < 0.5) query.priority = pick(PRIORITIES);
      queries.push(query);
    }
  }
  return queries;
}

/** All pages of a listing: messages, whether a next page was offered, the unread count. */
async function pages(store: ProjectionStore, identity: string, query: Query): Promise<unknown[]> {
  const result: unknown[] = [];
  let before: bigint | null = null;
  for (let n = 0; n < 10_000; n++) {
    const page: ViewPage = await store.listMessages(identity, storeQuery(query, before));
    result.push({ messages: page.messages, more: page.nextBefore !== null, unreadCount: page.unreadCount });
    before = page.nextBefore;
    if (before === null) return result;
  }
  throw new Error(`listing ${JSON.stringify(query)} of ${identity} never ends`);
}

/** Every page of one task list (pages of 3, so that paging is exercised); each listed task is its whole record. */
async function taskPages(store: ProjectionStore, identity: string, list: TaskList): Promise<unknown[]> {
  const result: unknown[] = [];
  let before: number | null = null;
  for (let n = 0; n < 10_000; n++) {
    const page = await store.listTasks(identity, { list, limit: 5, before });
    result.push(page);
    before = page.nextBefore;
    if (before === null) return result;
  }
  throw new Error(`task list ${list} of ${identity} never ends`);
}

/** Every page of a message's delivery ledger (pages of 2, so that paging is exercised; undefined: no ledger). */
async function ledgerPages(store: ProjectionStore, messageId: string): Promise<unknown[]> {
  const result: unknown[] = [];
  let after: string | null = null;
  for (let n = 0; n < 10_000; n++) {
    const page = await store.deliveryLedger(messageId, { after, limit: 2 });
    result.push(page);
    after = page?.nextAfter ?? null;
    if (after === null) return result;
  }
  throw new Error(`ledger of ${messageId} never ends`);
}

/** Each view of both stores: name -> value, in the same order. */
const taskEventIdsOf = (events: ReadonlyArray<{ eventId: string; type: string }>): string[] =>
  events.filter((event) => event.type.startsWith('Task')).map((event) => event.eventId);

async function views(
  store: ProjectionStore,
  identities: readonly string[],
  queries: Map<string, Query[]>,
  messageIds: readonly string[],
  middle: string,
  taskEventIds: readonly string[],
): Promise<Map<string, unknown>> {
  const result = new Map<string, unknown>();
  result.set('checkpoint', await store.checkpoint());
  // Each task event's id: the task of the history line it made (a claim, a state change...), null for the others.
  for (const eventId of taskEventIds) result.set(`historyLine ${eventId}`, await store.taskOfHistoryLine(eventId));
  result.set('agents', await store.listAgents());
  result.set('allHeartbeats', await store.allHeartbeats());
  for (const messageId of messageIds) result.set(`ledger ${messageId}`, await ledgerPages(store, messageId));
  for (const dueBy of ['2000-01-01T00:00:00.000Z', middle, '2100-01-01T00:00:00.000Z']) {
    for (const limit of [2, 1000]) result.set(`dueReplies ${dueBy} ${limit}`, await store.dueReplies(dueBy, limit));
  }
  result.set(
    'lastNudges',
    [...(await store.lastNudges())].sort(([a], [b]) => a.localeCompare(b)),
  );
  for (const sentBefore of ['2000-01-01T00:00:00.000Z', middle, '2100-01-01T00:00:00.000Z']) {
    for (const pendingOnly of [false, true]) {
      for (const limit of [0, 3, 1000]) {
        result.set(`unwoken ${sentBefore} ${pendingOnly} ${limit}`, await store.unwoken({ sentBefore, pendingOnly, limit }));
      }
    }
  }
  await Promise.all(
    identities.map(async (identity) => {
      result.set(`${identity} unreadCount`, await store.unreadCount(identity));
      result.set(`${identity} heartbeat`, await store.heartbeat(identity));
      for (const list of TASK_LISTS) {
        result.set(`${identity} tasks ${list}`, await taskPages(store, identity, list));
      }
      const listings = await Promise.all(queries.get(identity)!.map((query) => pages(store, identity, query)));
      queries.get(identity)!.forEach((query, i) => result.set(`${identity} list ${JSON.stringify(query)}`, listings[i]));
    }),
  );
  return result;
}

const show = (value: unknown) => {
  const text = JSON.stringify(value, (_key, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
  return text.length > 3000 ? `${text.slice(0, 3000)}...` : text;
};

/**
 * Per recipient and kind: Redis publishes a call's message wakes (agent blocks) before its task wakes (global block),
 * so across the two kinds the order within one call may differ from the log's; each kind keeps log order, and every
 * wake carries its position.
 */
function wakesByRecipient(wakes: readonly WakeEvent[]): Record<string, WakeEvent[]> {
  const by: Record<string, WakeEvent[]> = {};
  for (const wake of wakes) (by[`${wake.recipient} ${wake.type}`] ??= []).push(wake);
  return by;
}

// 5. One log, all stores

export interface LogOutcome {
  seed: number;
  events: number;
  steps: number;
  crashes: number;
  viewsCompared: number;
}

export class DifferentialFailure extends Error {
  constructor(
    readonly seed: number,
    detail: string,
  ) {
    super(`read model differential, seed ${seed}: ${detail}\n  replay: ${SEED_ENV}=${seed}`);
    this.name = 'DifferentialFailure';
  }
}

export async function checkLog(redisUrl: string, seed: number, maxEvents: number): Promise<LogOutcome> {
  const perCall = [1, 3, 16, 64];
  return checkLogAgainst(seed, maxEvents, async (identities, random) => [
    await redisSubject(redisUrl, identities, false, perCall[Math.floor(random() * perCall.length)]),
    await redisSubject(redisUrl, identities, true, perCall[Math.floor(random() * perCall.length)]),
    await rebuildSubject(redisUrl, identities, random),
  ]);
}

/** One seeded log fed to the pure read model (the memory store) and to the stores `others` opens, every view compared. */
export async function checkLogAgainst(
  seed: number,
  maxEvents: number,
  others: (identities: readonly string[], random: Random) => Promise<Subject[]>,
): Promise<LogOutcome> {
  const random = prng(seed ^ 0x5bd1e995);
  const log = randomLog(seed, maxEvents);
  const events = log.projected();
  const steps = deliveries(events, random);
  const named = new Set<string>(['@nobody']);
  const threads = new Set<string>();
  for (const event of log.events) {
    if (event.type.startsWith('Task')) continue; // their from/to are states; their actors are named by the sends
    const data = event.data as Record<string, unknown>;
    for (const field of ['identity', 'from', 'to', 'recipient', 'reader'] as const) {
      if (typeof data[field] === 'string' && !(data[field] as string).startsWith('AGENT:')) named.add(data[field] as string);
    }
    if (Array.isArray(data.to)) for (const identity of data.to as string[]) named.add(identity); // a list of identities
    if (typeof data.threadId === 'string') threads.add(data.threadId);
  }
  const identities = [...named].sort();
  const middle = log.events[Math.floor(log.events.length / 2)].metadata.at; // a cutoff with messages on either side
  const messageIds = [
    ...new Set(
      log.events.filter((event) => event.type === 'MessageSent').map((event) => (event.data as { messageId: string }).messageId),
    ),
    'no-such-message',
  ];
  const queries = new Map(identities.map((identity) => [identity, queriesFor(identities, [...threads], random)]));
  const taskEventIds = [...taskEventIdsOf(log.events), 'no-such-event'];
  const subjects = [memorySubject(), ...(await others(identities, random))];
  try {
    for (const [n, step] of steps.entries()) {
      for (const subject of subjects) {
        try {
          await subject.feed(step);
        } catch (error) {
          throw new DifferentialFailure(
            seed,
            `${subject.name} failed on step ${n} (${step.kind}): ${(error as Error).stack ?? error}`,
          );
        }
      }
    }
    for (const subject of subjects) await subject.finish?.();
    const [expected, ...others] = await Promise.all(
      subjects.map((subject) => views(subject.store, identities, queries, messageIds, middle, taskEventIds)),
    );
    for (const [i, actual] of others.entries()) {
      for (const [view, value] of expected) {
        if (!sameView(actual.get(view), value)) {
          throw new DifferentialFailure(
            seed,
            `${subjects[i + 1].name} differs from the pure read model in ${view}:\n` +
              `  read model: ${show(value)}\n  store:      ${show(actual.get(view))}`,
          );
        }
      }
    }
    const [expectedAll, ...otherWakes] = await Promise.all(subjects.map(async (subject) => subject.wakes()));
    for (const [i, published] of otherWakes.entries()) {
      const after = subjects[i + 1].wakesAfter?.() ?? null;
      const expectedWakes = wakesByRecipient(
        after === null ? expectedAll : expectedAll.filter((w) => BigInt(w.position) > after),
      );
      const wakes = wakesByRecipient(published);
      for (const identity of new Set([...Object.keys(expectedWakes), ...Object.keys(wakes)])) {
        if (!sameView(wakes[identity] ?? [], expectedWakes[identity] ?? [])) {
          throw new DifferentialFailure(
            seed,
            `${subjects[i + 1].name} published other wakes to ${identity}:\n` +
              `  read model: ${show(expectedWakes[identity] ?? [])}\n  store:      ${show(wakes[identity] ?? [])}`,
          );
        }
      }
    }
    return {
      seed,
      events: events.length,
      steps: steps.length,
      crashes: steps.filter((step) => step.kind === 'crash').length,
      viewsCompared: expected.size * others.length,
    };
  } finally {
    await Promise.all(subjects.map((subject) => subject.close()));
  }
}

/** The seeds to check: the one in READ_MODEL_DIFF_SEED when set, else `count` seeds from `first`. */
export function seedsToCheck(count: number, first: number): number[] {
  const replay = process.env[SEED_ENV];
  if (replay !== undefined && replay !== '') return [Number(replay)];
  return Array.from({ length: count }, (_u, i) => first + i);
}

/**
 * Deep strict equality of two views, whatever realm their arrays and objects were made in. Under jest the tests run
 * in a VM context while a native addon (better-sqlite3, the SQLite views) builds its rows, and the arrays `.map`
 * makes from them, with the main context's prototypes, so isDeepStrictEqual alone would call equal views different.
 * Both sides are rebuilt here as this realm's plain arrays and objects; every value and key is still compared strictly.
 */
function sameView(actual: unknown, expected: unknown): boolean {
  return isDeepStrictEqual(inThisRealm(actual), inThisRealm(expected));
}

function inThisRealm(value: unknown): unknown {
  if (Array.isArray(value)) return Array.from(value, inThisRealm); // not value.map: that makes an array of its own realm
  if (value === null || typeof value !== 'object') return value;
  const tag = Object.prototype.toString.call(value);
  if (tag !== '[object Object]') return value; // Maps, Dates... are compared as they are
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, inThisRealm(item)]));
}

/**
 * A digest of every view the pure read model (the memory store) folds one seeded log to, fed in one batch: what
 * test/unit/readModelVersion.test.ts compares, so that a change to the rules is noticed and their version moved on.
 */
export async function foldedViewsDigest(seed: number, maxEvents: number): Promise<string> {
  const random = prng(seed ^ 0x5bd1e995);
  const log = randomLog(seed, maxEvents);
  const identities = new Set<string>(['@nobody']);
  const threads = new Set<string>();
  for (const event of log.events) {
    const data = event.data as Record<string, unknown>;
    if (!event.type.startsWith('Task')) {
      for (const field of ['identity', 'from', 'to', 'recipient', 'reader'] as const)
        if (typeof data[field] === 'string' && !(data[field] as string).startsWith('AGENT:'))
          identities.add(data[field] as string);
      if (Array.isArray(data.to)) for (const identity of data.to as string[]) identities.add(identity);
    }
    if (typeof data.threadId === 'string') threads.add(data.threadId);
  }
  const named = [...identities].sort();
  const middle = log.events[Math.floor(log.events.length / 2)].metadata.at;
  const messageIds = log.events
    .filter((event) => event.type === 'MessageSent')
    .map((event) => (event.data as { messageId: string }).messageId);
  const queries = new Map(named.map((identity) => [identity, queriesFor(named, [...threads], random)]));
  const subject = memorySubject();
  await subject.feed({ kind: 'batch', events: log.projected() });
  const folded = await views(subject.store, named, queries, messageIds, middle, taskEventIdsOf(log.events));
  const text = JSON.stringify([...folded, ['wakes', await subject.wakes()]], (_key, v: unknown) =>
    typeof v === 'bigint' ? v.toString() : v,
  );
  return createHash('sha256').update(text).digest('hex').slice(0, 16);
}
