/**
 * Where a durable send's time goes on the embedded default, for the send benches: the event store's append
 * (queued behind the group commit under way, then its own, fsynced) and the views' apply (the runner's batch,
 * posted to the views thread and committed there). Wraps the two calls on a mailbox the bench opened (a
 * diagnostic that reaches into the composition, not an API), from `start()` on.
 *
 * - append: mean time from a command's append to its answer (durable);
 * - appended -> in the views: mean, per event, from its append's answer to the answer of the apply that carried
 *   it, which is what the command waits for next (the subscription's hand-over, the batch's queue, the apply);
 * - apply batches: how many, and their mean size (events per views transaction on the live path).
 * Stage times overlap between sends; they add up to a send's latency only for one send.
 */
import type { Mailbox } from '../../src/mailbox';

export interface SendStages {
  appendMs: number;
  appendedToViewsMs: number;
  applyBatches: number;
  eventsPerApply: number;
}

interface Counters {
  appends: number;
  appendMs: number;
  applied: number;
  appendedToViewsMs: number;
  batches: number;
  batchEvents: number;
}

export function traceSendStages(mailbox: Mailbox): { start(): void; read(): SendStages } {
  let counting = false;
  const c: Counters = { appends: 0, appendMs: 0, applied: 0, appendedToViewsMs: 0, batches: 0, batchEvents: 0 };
  /** When each position's append was answered (until an apply carries it). */
  const answeredAt = new Map<bigint, number>();

  const store = mailbox.eventStore;
  const append = store.append.bind(store);
  store.append = async (...args: Parameters<typeof store.append>) => {
    const started = performance.now();
    const result = await append(...args);
    if (counting) {
      const now = performance.now();
      c.appends += 1;
      c.appendMs += now - started;
      answeredAt.set(result.position, now);
    }
    return result;
  };

  const projections = mailbox.projections;
  const applyBatch = projections.applyBatch.bind(projections);
  projections.applyBatch = async (batch) => {
    await applyBatch(batch);
    if (!counting) return;
    const now = performance.now();
    c.batches += 1;
    c.batchEvents += batch.length;
    for (const event of batch) {
      const at = answeredAt.get(event.position);
      if (at === undefined) continue; // not a send's last event (or appended before start())
      answeredAt.delete(event.position);
      c.applied += 1;
      c.appendedToViewsMs += now - at;
    }
  };

  return {
    start: () => {
      counting = true;
    },
    read: () => ({
      appendMs: c.appends ? c.appendMs / c.appends : NaN,
      appendedToViewsMs: c.applied ? c.appendedToViewsMs / c.applied : NaN,
      applyBatches: c.batches,
      eventsPerApply: c.batches ? c.batchEvents / c.batches : NaN,
    }),
  };
}
