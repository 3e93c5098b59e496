/**
 * Blue/green rebuild of the projections: build every view from the log into a
 * new generation while requests keep reading the active one, catch up with
 * the live projector, then switch atomically (the switch only happens when
 * both generations stand at the same checkpoint, so no event is counted twice
 * or missed, and the live projector keeps publishing exactly one wake per
 * delivery). The previous generation is dropped after a grace period.
 */
import type { EventStore } from '../events/eventStore';
import type { StoredEvent } from '../events/types';
import { upcast } from '../events/upcasters';
import { projectStored } from './projector';
import type { ProjectionGeneration, ProjectionGenerations } from './rebuildGenerations';

export interface RebuildProgress {
  phase: 'building' | 'catching up' | 'switching' | 'switched';
  events: number;
  position: bigint | null;
  /** The log head when the rebuild started. */
  head: bigint | null;
}

export interface RebuildOptions {
  onProgress?: (progress: RebuildProgress) => void;
  pageSize?: number;
  /** A live projector behind the new generation gets this long to catch up before the switch happens anyway. */
  settleMs?: number;
  /** Gives up (and drops the new generation) when the switch has not happened after this long. */
  switchTimeoutMs?: number;
  /** The previous generation is deleted this long after the switch (readers cache the active one briefly); null keeps it. */
  dropPreviousAfterMs?: number | null;
}

export interface RebuildResult {
  generation: string;
  previous: string;
  events: number;
  checkpoint: bigint | null;
  ms: number;
  /** True when the live projector was behind (or absent) and the switch did not wait for it. */
  forced: boolean;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function rebuildProjections(log: EventStore, generations: ProjectionGenerations, options: RebuildOptions = {}): Promise<RebuildResult> {
  const { onProgress, pageSize = 1000, settleMs = 2000, switchTimeoutMs = 60_000, dropPreviousAfterMs = 5000 } = options;
  const started = Date.now();
  const before = await generations.active();
  const generation = await generations.create();
  const head = await log.headPosition();
  let events = 0;
  let position: bigint | null = null;
  const progress = (phase: RebuildProgress['phase']) => onProgress?.({ phase, events, position, head });
  const copyUntil = async (until: bigint | null, phase: RebuildProgress['phase']) => {
    position = await copy(log, generation, position, until, pageSize, (count, last) => {
      events += count;
      position = last;
      progress(phase);
    });
  };

  try {
    // 1. Everything up to the head as it was when the rebuild started.
    progress('building');
    if (head !== null) await copyUntil(head, 'building');
    // 2. Until the switch: follow the live projector's checkpoint, then switch atomically.
    const outcome = await switchWhenCaughtUp(generations, generation, before.name, settleMs, switchTimeoutMs,
      (live) => copyUntil(live, 'catching up'), () => progress('switching'));
    progress('switched');
    if (dropPreviousAfterMs !== null && outcome.previous !== generation.name) {
      await sleep(dropPreviousAfterMs);
      await generations.drop(outcome.previous);
    }
    return { generation: generation.name, previous: outcome.previous, events, checkpoint: await generation.checkpoint(),
      ms: Date.now() - started, forced: outcome.forced };
  } catch (error) {
    const active = await generations.active().catch(() => null);
    if (active?.name !== generation.name) await generations.drop(generation.name).catch(() => undefined);
    throw error;
  }
}

async function switchWhenCaughtUp(generations: ProjectionGenerations, generation: ProjectionGeneration, expectedActive: string,
  settleMs: number, timeoutMs: number, catchUp: (live: bigint) => Promise<void>, switching: () => void): Promise<{ previous: string; forced: boolean }> {
  const deadline = Date.now() + timeoutMs;
  let lastLive: bigint | null | undefined;
  let liveMovedAt = Date.now();
  for (;;) {
    switching();
    const result = await generations.activate(generation, expectedActive, false);
    if (result.outcome === 'switched') return { previous: result.previous, forced: false };
    if (result.outcome === 'moved') throw new Error(`Another rebuild switched to ${result.active} meanwhile; this one is dropped.`);
    if (Date.now() > deadline) throw new Error(`The live projector did not meet the rebuilt views within ${timeoutMs} ms; nothing was switched.`);
    const { live, built } = result;
    if (live !== null && (built === null || live > built)) {
      await catchUp(live); // the live projector is ahead: copy the events it already has
      continue;
    }
    // The live projector is behind (or absent): give it time to arrive, then switch without it.
    if (live !== lastLive) {
      lastLive = live;
      liveMovedAt = Date.now();
    }
    if (Date.now() - liveMovedAt >= settleMs) {
      const forced = await generations.activate(generation, expectedActive, true);
      if (forced.outcome === 'switched') return { previous: forced.previous, forced: true };
      if (forced.outcome === 'moved') throw new Error(`Another rebuild switched to ${forced.active} meanwhile; this one is dropped.`);
    }
    await sleep(20);
  }
}

/** Copies events in (after, until] into the generation, reading the next page while the current one is applied. */
async function copy(log: EventStore, generation: ProjectionGeneration, after: bigint | null, until: bigint | null, pageSize: number,
  onPage: (count: number, last: bigint) => void): Promise<bigint | null> {
  const read = (from: bigint | null) => {
    const page = log.readAll(from, pageSize);
    page.catch(() => undefined); // awaited below; this only avoids an unhandled rejection while a batch is applied
    return page;
  };
  let next: Promise<StoredEvent[]> = read(after);
  for (;;) {
    const page = await next;
    const wanted = until === null ? page : page.filter((event) => event.position <= until);
    if (wanted.length === 0) return after;
    const last = wanted[wanted.length - 1].position;
    const more = wanted.length === pageSize && (until === null || last < until);
    next = more ? read(last) : Promise.resolve([]);
    await generation.applyBatch(wanted.map((event) => projectStored(upcast(event))));
    after = last;
    onPage(wanted.length, last);
    if (!more) return after;
  }
}
