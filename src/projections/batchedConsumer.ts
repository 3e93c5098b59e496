/**
 * Consumes a subscription in batches through a bounded queue: a pump reads
 * ahead while the previous batch is applied, and stops pulling once
 * `maxQueued` items wait (backpressure: the subscription reads on demand), so
 * a slow store slows the reading down instead of buffering without bound.
 */
export interface BatchedConsumerOptions<T> {
  maxQueued: number;
  maxBatch: number;
  /** Applies one batch (whatever has arrived, at most maxBatch); a failure closes the subscription and is rethrown. */
  apply(batch: T[]): Promise<void>;
  close(): Promise<void>;
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
  try {
    while (!(done && queue.length === 0)) {
      if (queue.length === 0) {
        await new Promise<void>((resolve) => (signal.arrived = resolve));
        signal.arrived = null;
        continue;
      }
      const batch = queue.splice(0, options.maxBatch);
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
