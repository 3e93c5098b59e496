/**
 * A rebuild rides out a transient failure of the views (UNAVAILABLE: Redis unreachable or failing over, a deadline
 * missed under load): it waits, reports each wait, and goes on from where its new generation stands, so the views it
 * switches to equal a clean build and its event count is exact. Found: one apply that missed the 1 s Redis deadline on
 * a loaded machine ended a rebuild outright and dropped everything it had built. It does not go on where the new
 * generation lost what it held (a Redis restarted empty), nor past its outage budget, nor on another kind of failure:
 * then it fails as before, its generation dropped and the active views unchanged. A batch behind one that failed is
 * refused by the generation (GenerationGap: the projection store contract), so no resume leaves a hole.
 *
 * Faults are injected around real SQLite views (a generation whose applies fail on cue); the clock is injected, so
 * no test waits in real time. Identities of the generated log: @a, @b, @c and seven more.
 */
import path from 'node:path';
import { MemoryEventStore } from '../../src/adapters/eventstore/memoryEventStore';
import { MemoryProjectionStore } from '../../src/adapters/projections/memoryProjectionStore';
import { SqliteProjectionStore } from '../../src/adapters/projections/sqliteProjectionStore';
import { InProcessWakeBus } from '../../src/adapters/wake/inProcessWakeBus';
import { answeredEnvelope, type MailboxError, operatorNeeded, unavailable } from '../../src/errors';
import type { StoredEvent } from '../../src/events/types';
import { rebuildProjections, type RebuildProgress } from '../../src/projections/rebuild';
import type { ProjectionGeneration, ProjectionGenerations } from '../../src/projections/rebuildGenerations';
import type { ProjectedEvent } from '../../src/projections/viewChanges';
import { snapshotViews } from '../contract/projectionStore.contract';
import { appendLog, generateLog, projectAll } from '../contract/projectionStoreLog';
import { tempDir } from '../support/fixtures';
import { waitFor } from '../support/waitFor';

const PAGE = 100;

/**
 * What the n-th applyBatch of the new generation does (1-based; absent: applies normally): refused before it reached
 * the store; applied, but its answer lost (a deadline); applied, then the store emptied (checkpoint() answers null
 * from then on); a failure that is no outage; an UNAVAILABLE only an operator mends (operatorNeeded: a damaged views file);
 * reaching the store a turn of the event loop late (still on its way when the call before it fails).
 */
type Fault = 'refused' | 'answer lost' | 'emptied' | 'broken' | 'operator' | 'late';

/** `timeline`, when given, records when each call settled ('call <n> settled') and each drop ('dropped'). */
function faulty(inner: ProjectionGenerations, faults: Map<number, Fault>, timeline?: string[]): ProjectionGenerations {
  let calls = 0;
  let emptied = false;
  const applyWith = async (
    generation: ProjectionGeneration,
    fault: Fault | undefined,
    batch: readonly ProjectedEvent[],
    follows?: bigint | null,
  ) => {
    if (fault === 'late') await new Promise((resolve) => setImmediate(resolve));
    if (fault === 'refused') throw unavailable('Redis projections (apply)', new Error('Connection is closed.'));
    if (fault === 'broken') throw new Error('ERR unknown command');
    if (fault === 'operator')
      throw operatorNeeded('The views file v.sqlite is damaged (file is not a database).', 'restart the mailbox');
    await generation.applyBatch(batch, follows);
    if (fault === 'emptied') emptied = true;
    if (fault === 'answer lost' || fault === 'emptied')
      throw unavailable('Redis projections (apply)', new Error('Command timed out'));
  };
  const wrap = (generation: ProjectionGeneration): ProjectionGeneration => ({
    name: generation.name,
    checkpoint: async () => (emptied ? null : generation.checkpoint()),
    async applyBatch(batch: readonly ProjectedEvent[], follows?: bigint | null) {
      const call = ++calls;
      try {
        await applyWith(generation, faults.get(call), batch, follows);
      } finally {
        timeline?.push(`call ${call} settled`);
      }
    },
  });
  return {
    active: () => inner.active(),
    create: async (logIdentity) => wrap(await inner.create(logIdentity)),
    activate: (generation, expected, force) => inner.activate(generation, expected, force),
    holdLive: (generation, ms) => inner.holdLive(generation, ms),
    releaseLive: (generation) => inner.releaseLive(generation),
    drop: async (name) => {
      await inner.drop(name);
      timeline?.push('dropped');
    },
  };
}

/** A clock that moves only when the rebuild waits. */
function fakeClock() {
  let now = 0;
  const waits: number[] = [];
  return {
    waits,
    now: () => now,
    sleep: async (ms: number) => {
      waits.push(ms);
      now += ms;
    },
  };
}

async function viewsOf(events: readonly StoredEvent[]) {
  const store = new MemoryProjectionStore(new InProcessWakeBus());
  await store.applyBatch(projectAll(events));
  return snapshotViews(store);
}

describe('a rebuild meets a transient failure of the views', () => {
  let store: SqliteProjectionStore;
  let log: MemoryEventStore;
  let events: StoredEvent[];
  beforeEach(async () => {
    store = SqliteProjectionStore.open(path.join(tempDir('rebuild-retry-'), 'views.sqlite'), new InProcessWakeBus());
    log = new MemoryEventStore();
    await appendLog(log, generateLog(1_000, 31));
    events = await log.readAll(null, 1_000_000);
  });
  afterEach(async () => {
    await store.close();
  });

  const rebuild = (faults: Map<number, Fault>, clock = fakeClock(), outageMs?: number) => {
    const progress: RebuildProgress[] = [];
    const result = rebuildProjections(log, faulty(store.generations(), faults), {
      pageSize: PAGE,
      settleMs: 0,
      dropPreviousAfterMs: 0,
      clock,
      outageMs,
      onProgress: (p) => progress.push(p),
    });
    return { result, progress, clock };
  };

  it('an apply refused twice: waits (reported), goes on from where the generation stands; exact views and count', async () => {
    const { result, progress, clock } = rebuild(
      new Map<number, Fault>([
        [3, 'refused'],
        [5, 'refused'],
      ]),
    );
    const done = await result;

    expect(done.events).toBe(events.length);
    expect(done.checkpoint).toBe(events.at(-1)!.position);
    expect(await snapshotViews(store)).toEqual(await viewsOf(events));
    const retries = progress.filter((p) => p.phase === 'retrying');
    expect(retries.length).toBeGreaterThanOrEqual(2);
    expect(retries[0].retry).toMatchObject({ attempt: 1, outageMs: 60_000 });
    expect(retries[0].retry!.reason).toMatch(/unavailable/);
    expect(retries[0].position).toBe(events[2 * PAGE - 1].position); // two pages went in before the third failed
    // Each wait is a retry's, then the grace before the previous generation is deleted (0 ms here), on the same clock.
    expect(clock.waits).toEqual([...retries.map((p) => p.retry!.delayMs), 0]);
  });

  it('an apply that went in but whose answer was lost (a deadline): counted once, views exact', async () => {
    const { result, progress } = rebuild(new Map<number, Fault>([[4, 'answer lost']]));
    const done = await result;

    expect(done.events).toBe(events.length);
    expect(await snapshotViews(store)).toEqual(await viewsOf(events));
    // The lost answer's batch (and the one behind it, which went in too) reported once the generation was read, never twice.
    const reported = progress.filter((p) => p.phase === 'building' && p.position !== null).map((p) => p.position!);
    const pageEnds = (pages: number[]) => pages.map((page) => events[page * PAGE - 1].position);
    expect(reported).toEqual(pageEnds([1, 2, 3, 5, 6, 7, 8, 9, 10]));
    expect(progress.filter((p) => p.phase === 'building').at(-1)!.events).toBe(events.length);
  });

  it('answers lost for two batches in a row (both went in): each event counted once, views exact', async () => {
    const { result } = rebuild(
      new Map<number, Fault>([
        [2, 'answer lost'],
        [3, 'answer lost'],
      ]),
    );
    const done = await result;

    expect(done.events).toBe(events.length);
    expect(await snapshotViews(store)).toEqual(await viewsOf(events));
  });

  it('every answer lost, each batch going in all the same: a new streak at each failure, never gives up while it moves on', async () => {
    const faults = new Map<number, Fault>();
    for (let call = 3; call < 1_000; call++) faults.set(call, 'answer lost');
    const { result, progress } = rebuild(faults, fakeClock(), 1_000);

    // Before: the failures, each a page or two further on, added up as one outage: 'The rebuild could not write to ...
    // for 1 s in a row', nothing switched, although every batch had gone in.
    const done = await result;
    expect(done.events).toBe(events.length);
    expect(await snapshotViews(store)).toEqual(await viewsOf(events));
    const retries = progress.filter((p) => p.phase === 'retrying');
    expect(retries.length).toBeGreaterThanOrEqual(4);
    expect(retries.map((p) => p.retry!.attempt)).toEqual(retries.map(() => 1)); // each the first wait of its streak
  });

  it('a batch still on its way when the one before it fails: the rebuild ends only once it settled, then drops its generation', async () => {
    const timeline: string[] = [];
    const result = rebuildProjections(
      log,
      faulty(
        store.generations(),
        new Map<number, Fault>([
          [3, 'broken'],
          [4, 'late'],
        ]),
        timeline,
      ),
      {
        pageSize: PAGE,
        settleMs: 0,
        dropPreviousAfterMs: 0,
        clock: fakeClock(),
      },
    );
    const failure = result.then(
      () => null,
      (error: unknown) => {
        timeline.push('rebuild failed');
        return error;
      },
    );

    expect(await failure).toEqual(new Error('ERR unknown command'));
    await waitFor(() => timeline.includes('call 4 settled'), { what: 'the late batch to settle' });
    // Before: ['call 1 settled', ..., 'dropped', 'rebuild failed', 'call 4 settled']: the failure was said, and the
    // generation dropped, while a batch of it was still on its way to the store.
    expect(timeline.slice(-3)).toEqual(['call 4 settled', 'dropped', 'rebuild failed']);
    expect((await store.generations().active()).checkpoint).toBeNull(); // nothing switched
  });

  it('the views emptied while unavailable: fails saying so, generation dropped, active views unchanged', async () => {
    const before = await store.generations().active();
    const { result, progress } = rebuild(new Map<number, Fault>([[3, 'emptied']]));

    await expect(result).rejects.toThrow(
      /^The views being rebuilt lost what they held while .* was unavailable \(they stood at \d+, now at nothing\): run the rebuild again\.$/,
    );
    expect(progress.some((p) => p.phase === 'switched')).toBe(false);
    expect(await store.generations().active()).toEqual(before);
    expect(await snapshotViews(store)).toEqual(await viewsOf([]));
  });

  it('failing longer than the outage budget: gives up with the reason and where it stopped', async () => {
    const faults = new Map<number, Fault>();
    for (let call = 6; call < 200; call++) faults.set(call, 'refused');
    const { result, clock } = rebuild(faults, fakeClock(), 10_000);

    await expect(result).rejects.toThrow(
      /^The rebuild could not write to .* for 1\d s in a row \(last: .*unavailable.*\); it stopped after position \d+\. Run it again once the views are reachable\.$/,
    );
    // Stopped for good: the CLI's envelope says an operator must act, and how (it said 'Service unavailable').
    const error = (await result.catch((caught: unknown) => caught)) as MailboxError;
    expect(error.envelope).toMatchObject({
      error: 'Operator action needed',
      code: 'UNAVAILABLE',
      operatorAction: expect.stringMatching(/^make .+ reachable, then run `mailbox projections rebuild` again$/),
      stoppedAfter: expect.stringMatching(/^\d+$/),
    });
    expect(answeredEnvelope(error)).not.toHaveProperty('retryAfterSeconds');
    expect(clock.waits.reduce((sum, ms) => sum + ms, 0)).toBeGreaterThanOrEqual(10_000);
    expect((await store.generations().active()).checkpoint).toBeNull(); // nothing switched
  });

  it('an unavailability only an operator mends: fails at once with it, no wait, nothing switched', async () => {
    const { result, clock, progress } = rebuild(new Map<number, Fault>([[3, 'operator']]));

    const error = (await result.catch((caught: unknown) => caught)) as MailboxError;
    // Before: waited out as an outage (60 s), then 'The rebuild could not write to ...' with 'make ... reachable'.
    expect(error.envelope).toEqual({
      error: 'Operator action needed',
      code: 'UNAVAILABLE',
      message: 'The views file v.sqlite is damaged (file is not a database).',
      operatorAction: 'restart the mailbox',
    });
    expect(clock.waits).toEqual([]);
    expect(progress.some((p) => p.phase === 'retrying')).toBe(false);
    expect((await store.generations().active()).checkpoint).toBeNull(); // nothing switched
  });

  it('another kind of failure: fails at once, no wait', async () => {
    const { result, clock, progress } = rebuild(new Map<number, Fault>([[2, 'broken']]));

    await expect(result).rejects.toThrow('ERR unknown command');
    expect(clock.waits).toEqual([]);
    expect(progress.some((p) => p.phase === 'retrying')).toBe(false);
  });
});
