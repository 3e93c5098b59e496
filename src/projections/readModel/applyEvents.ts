/**
 * The read model over a batch: each event past the checkpoint, fact by fact,
 * through evolve into the storage, collecting the wakes due. Events at or
 * below the checkpoint (or below an earlier event of the batch) change nothing.
 */
import type { ProjectedEvent, WakeEvent } from '../viewChanges';
import { evolve } from './evolve';
import type { ReadModelStorage } from './view';
import { wakesFor } from './wakes';

/** Returns the new checkpoint; wakes are appended to `wakes` when given (a rebuild passes none). */
export function applyEvents(storage: ReadModelStorage, batch: readonly ProjectedEvent[], checkpoint: bigint | null,
  wakes?: WakeEvent[]): bigint | null {
  let last = checkpoint;
  for (const event of batch) {
    if (last !== null && event.position <= last) continue;
    for (const fact of event.changes) {
      const changes = evolve(storage, fact, event.position);
      for (const change of changes) storage.apply(change);
      if (wakes) wakesFor(changes, storage, wakes);
    }
    last = event.position;
  }
  return last;
}
