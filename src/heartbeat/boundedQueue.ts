/** Runs tasks with at most `concurrency` in flight; `idle()` resolves once every queued task has finished. */
export class BoundedQueue {
  private running = 0;
  private readonly waiting: Array<() => Promise<void>> = [];
  private idleWaiters: Array<() => void> = [];

  constructor(private readonly concurrency: number) {}

  /** Tasks handle their own errors; a rejection here would be a bug, so it is rethrown unhandled. */
  push(task: () => Promise<void>): void {
    this.waiting.push(task);
    this.pump();
  }

  get pending(): number {
    return this.running + this.waiting.length;
  }

  idle(): Promise<void> {
    if (this.pending === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private pump(): void {
    while (this.running < this.concurrency && this.waiting.length > 0) {
      const task = this.waiting.shift()!;
      this.running++;
      void task().finally(() => {
        this.running--;
        this.pump();
        if (this.pending === 0) {
          const waiters = this.idleWaiters;
          this.idleWaiters = [];
          for (const resolve of waiters) resolve();
        }
      });
    }
  }
}

/** Maps over items with at most `concurrency` calls in flight, keeping order. */
export async function mapBounded<T, R>(items: readonly T[], concurrency: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, items.length) }, async () => {
      while (next < items.length) {
        const index = next++;
        results[index] = await work(items[index]);
      }
    }),
  );
  return results;
}
