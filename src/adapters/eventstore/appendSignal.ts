/**
 * Wakes in-process subscribers when an append lands. The version counter
 * closes the race between "read found nothing" and "start waiting".
 */
export class AppendSignal {
  private version = 0;
  private waiters: Array<() => void> = [];

  get current(): number {
    return this.version;
  }

  notify(): void {
    this.version++;
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
  }

  /** Resolves once the version differs from `seen` (at once if it already does). */
  waitForChange(seen: number): Promise<void> {
    if (this.version !== seen) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Releases every waiter (used on close). */
  releaseAll(): void {
    this.notify();
  }
}
