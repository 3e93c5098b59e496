/**
 * Consumes a subscription in batches through a bounded queue: a pump reads
 * ahead while the previous batch is applied, and stops pulling once
 * `maxQueued` items wait (backpressure: the subscription reads on demand), so
 * a slow store slows the reading down instead of buffering without bound.
 *
 * A batch is cut once the subscription has stopped handing items over (see
 * handedOver), so that one page it read (a log commit's events) goes in one
 * batch rather than in two or three.
 *
 * A batch of at least `splitFrom` items is applied in two halves (see
 * pipelined): the callers waiting on the first half hear back while the
 * second is applied. The cut falls between two items that do not belong
 * together (`together`: one caller's), nearest the middle; none: no split.
 */
export interface BatchedConsumerOptions<T> {
  maxQueued: number;
  maxBatch: number;
  /** A batch this large or larger is applied in two halves, one after the other (Infinity: never split). */
  splitFrom: number;
  /** Whether two neighbouring items belong to one caller (one append): a batch is never split between them. */
  together(before: T, after: T): boolean;
  /** Applies one batch (whatever has arrived, at most maxBatch); a failure closes the subscription and is rethrown. */
  apply(batch: T[]): Promise<void>;
  close(): Promise<void>;
}

/**
 * Microtask turns to wait for the subscription's next item before a batch is cut. A subscription hands a page
 * over an item every few microtasks (an async generator's yield and the pump's loop), so a batch cut at the
 * first arrival held part of a page and the rest went in the next batch. Measured on the SQLite views, where
 * each batch is a transaction on the views thread: at 2,000 sends/s 1.45 views transactions per log commit,
 * and with 64 senders 21.8 events per apply where a commit held 28. Waiting until the queue stops growing
 * (microtasks only: no timer, no I/O turn) made it one apply per commit: 64 senders 171 -> 150-154 µs of CPU per
 * send (the rate about the same: the 64 move as one group); at 2,000 sends/s (bench http/requestCost) 519 -> ~503 µs
 * per send; a single sender's latency unchanged (core/sequential); the server's RSS as flat over 3 minutes at
 * 2,000 sends/s.
 */
const HANDOVER_TURNS = 4;

/** Returns once `queue` has not grown for HANDOVER_TURNS microtask turns, or holds a full batch. */
async function handedOver(queue: readonly unknown[], maxBatch: number): Promise<void> {
  let length: number;
  do {
    length = queue.length;
    for (let turn = 0; turn < HANDOVER_TURNS; turn++) await Promise.resolve();
  } while (queue.length > length && queue.length < maxBatch);
}

/**
 * The size of the next batch out of `whole` items cut from the queue. A page of a closed loop of callers (each
 * waiting for its own item to be applied before it sends again: 64 senders in one log commit) applied in one
 * piece keeps them in lockstep: the views' thread is idle while they send, the senders idle while it applies.
 * Split in two, the first half is answered and sends its next page while the second half is applied; the second
 * half is applied whole, never split again. Measured with 64 senders in process on the SQLite views (bench
 * core/sendThroughput, same session): one batch of 64, 6,597-6,910 sends/s; split from 64 (halves of 32),
 * 7,465-8,119, at ~5% more CPU per send (two transactions instead of one). Split from 32, each half's senders came
 * back as a page of 32 and were split again, down to ~21 events per apply: 7,378-7,754 (per-transaction costs win).
 * One caller's items are never split: a broadcast's 1,001 events answer one command, which would wait for both
 * halves, one more transaction for nothing (bench core/broadcast, interleaved: acknowledged in 46.2-48.8 ms before
 * the split, 46.4-47.7 with it).
 */
function pipelined<T>(queue: readonly T[], whole: number, options: BatchedConsumerOptions<T>): number {
  if (whole < options.splitFrom) return whole;
  const middle = Math.ceil(whole / 2);
  for (let offset = 0; offset < middle; offset++) {
    for (const cut of [middle + offset, middle - offset]) {
      if (cut > 0 && cut < whole && !options.together(queue[cut - 1], queue[cut])) return cut;
    }
  }
  return whole;
}

/** Resolves when the subscription ends; rejects with the apply's or the subscription's failure. */
export async function consumeInBatches<T>(subscription: AsyncIterable<T>, options: BatchedConsumerOptions<T>): Promise<void> {
  const queue: T[] = [];
  const signal: { arrived: (() => void) | null; space: (() => void) | null } = { arrived: null, space: null };
  let done = false;
  let failure: { error: unknown } | null = null;
  const makeSpace = () => {
    signal.space?.();
    signal.space = null;
  };
  const pump = (async () => {
    try {
      for await (const item of subscription) {
        queue.push(item);
        signal.arrived?.();
        if (queue.length >= options.maxQueued) await new Promise<void>((resolve) => (signal.space = resolve));
      }
    } catch (error) {
      failure = { error };
    } finally {
      done = true;
      signal.arrived?.();
    }
  })();
  let secondHalf = 0; // what is left of a batch split in two: the next batch, whole
  try {
    while (!(done && queue.length === 0)) {
      if (queue.length === 0) {
        await new Promise<void>((resolve) => (signal.arrived = resolve));
        signal.arrived = null;
        continue;
      }
      let size: number;
      if (secondHalf > 0) {
        size = secondHalf; // queued before anything that arrived since: it is still at the head of the queue
        secondHalf = 0;
      } else {
        await handedOver(queue, options.maxBatch);
        const whole = Math.min(queue.length, options.maxBatch);
        size = pipelined(queue, whole, options);
        secondHalf = whole - size;
      }
      const batch = queue.splice(0, size);
      makeSpace();
      await options.apply(batch);
    }
  } catch (error) {
    await options.close(); // do not leave the failed subscription pumping beside the next one
    makeSpace();
    await pump;
    throw error;
  }
  await pump;
  if (failure) throw (failure as { error: unknown }).error;
}
