/** Callers waiting until the views include a log position (read-your-writes after a command). */
export class PositionWaiters {
  private reachedPosition: bigint | null = null;
  private waiters: Array<{ position: bigint; resolve: (ok: boolean) => void; timer: NodeJS.Timeout }> = [];

  reached(position: bigint): void {
    this.reachedPosition = position;
    const still: typeof this.waiters = [];
    for (const waiter of this.waiters) {
      if (waiter.position <= position) {
        clearTimeout(waiter.timer);
        waiter.resolve(true);
      } else {
        still.push(waiter);
      }
    }
    this.waiters = still;
  }

  /**
   * Every wait ends now, unreached (false): the views stop advancing (the runner stopped). A send under way when
   * mailbox.close() began waited out its awaitProjectionMs on a timer that keeps no process alive, so that a script
   * whose last step awaited it ended with the send's promise never settled (Node's exit code 13 for a top-level await).
   */
  releaseAll(): void {
    for (const waiter of this.waiters) {
      clearTimeout(waiter.timer);
      waiter.resolve(false);
    }
    this.waiters = [];
  }

  waitFor(position: bigint, timeoutMs: number): Promise<boolean> {
    if (this.reachedPosition !== null && position <= this.reachedPosition) return Promise.resolve(true);
    return new Promise((resolve) => {
      const waiter = {
        position,
        resolve,
        timer: setTimeout(() => {
          this.waiters = this.waiters.filter((w) => w !== waiter);
          resolve(false);
        }, timeoutMs),
      };
      waiter.timer.unref?.();
      this.waiters.push(waiter);
    });
  }
}
