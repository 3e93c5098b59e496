/**
 * Pure stall detection for the projection pipeline: the projector is stalled
 * when the log head is ahead of the views' checkpoint and the checkpoint has
 * not moved for `stallAfterMs`. A slow projector whose checkpoint advances is
 * lagging, not stalled.
 */

export interface PipelineSample {
  head: bigint | null;
  checkpoint: bigint | null;
}

export interface PipelineState {
  checkpoint: bigint | null;
  /** When the lag was first seen with this checkpoint (ms since epoch); null while there is no lag. */
  stuckSince: number | null;
  stalled: boolean;
}

export interface PipelineObservation {
  state: PipelineState;
  /** Log head minus checkpoint, in log positions (events on SQLite, bytes of log on EventStoreDB). */
  lag: bigint;
  stalled: boolean;
  stuckForMs: number;
}

export const initialPipelineState: PipelineState = { checkpoint: null, stuckSince: null, stalled: false };

export function lagOf(sample: PipelineSample): bigint {
  if (sample.head === null) return 0n;
  const lag = sample.head - (sample.checkpoint ?? 0n);
  return lag > 0n ? lag : 0n;
}

export function observePipeline(
  state: PipelineState,
  sample: PipelineSample,
  now: number,
  stallAfterMs: number,
): PipelineObservation {
  const lag = lagOf(sample);
  let stuckSince: number | null;
  if (lag === 0n) stuckSince = null;
  else if (sample.checkpoint !== state.checkpoint)
    stuckSince = now; // it moved: start timing afresh
  else stuckSince = state.stuckSince ?? now;
  const stuckForMs = stuckSince === null ? 0 : now - stuckSince;
  const stalled = stuckSince !== null && stuckForMs >= stallAfterMs;
  // Whether the alarm is said (once, and cleared only if said) is the daemon's: it depends on the projector too.
  return { state: { checkpoint: sample.checkpoint, stuckSince, stalled }, lag, stalled, stuckForMs };
}
