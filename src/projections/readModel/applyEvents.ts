/**
 * The read model over a batch: each event past the checkpoint, fact by fact,
 * through the rules into the storage (the storage is the rules' view and their
 * sink), collecting the wakes due. Events at or below the checkpoint (or below
 * an earlier event of the batch) change nothing.
 */
import type { ProjectedEvent, WakeEvent } from '../viewChanges';
import { evolveTo } from './evolve';
import type { ReadModelStorage } from './view';
import { taskWakesFor } from './taskWakes';
import { replyOverdueWake, wakeFor } from './wakes';

/** Returns the new checkpoint; wakes are appended to `wakes` when given (a rebuild passes none). */
export function applyEvents(
  storage: ReadModelStorage,
  batch: readonly ProjectedEvent[],
  checkpoint: bigint | null,
  wakes?: WakeEvent[],
): bigint | null {
  let last = checkpoint;
  for (const event of batch) {
    if (last !== null && event.position <= last) continue;
    for (const fact of event.changes) {
      // A reply obligation found overdue wakes its sender once: when this very fact marked it.
      const overdueBefore = wakes && fact.kind === 'replyOverdue' ? storage.ledgerOverdueAt(fact.messageId) : undefined;
      evolveTo(storage, fact, event.position, storage);
      if (fact.kind === 'replyOverdue' && overdueBefore === null && storage.ledgerOverdueAt(fact.messageId) !== null)
        wakes!.push(replyOverdueWake(fact, event.position));
      if (wakes && fact.kind === 'inboxAdded') {
        const wake = wakeFor(fact, event.position, storage);
        if (wake) wakes.push(wake);
      }
      if (wakes && fact.kind === 'taskChanged') for (const wake of taskWakesFor(fact, event.position, storage)) wakes.push(wake);
    }
    last = event.position;
  }
  return last;
}
