/**
 * How far the wakes of the log have gone out, as this process knows it, so
 * that a rebuild of lost views does not send them a second time.
 *
 * Why: when the views are lost while the mailbox runs (Redis restarted empty,
 * or its keys flushed), the projector rebuilds them from the log, and to the
 * store every event applied again is a new inbox entry with its wake due. Each
 * open wake stream was handed a wake for every old message (read long ago, with
 * made-up unread counts) and recorded it as WakeObserved, a false fact: the
 * ledger then held old messages "woken" after they were read, unwoken counts
 * and heartbeat escalation undercounted, and the wake latency took samples of
 * minutes. The views are a function of the log; whether a wake is news is not:
 * it was due once, when the views first included its event.
 *
 * What this process knows: the highest position the views included while it
 * looked (the batches it applied, or the shared checkpoint it read while
 * another node projected): every wake up to there went out with its change
 * (committed together). The runner applies events up to it again without
 * wakes, and every later one, however old, as usual: its wake never went out.
 * Kept in memory only: a process started on views lost while it was down has
 * no such mark; if the views are empty, the runner marks the log's head at
 * start (their events are history), but views left behind at an older
 * position (restored from an old snapshot) still publish what they apply.
 */
export class WakesSentThrough {
  private through: bigint | null = null;

  /** The views included `position`, so its wakes went out with it. The mark never goes back (the views may). */
  reached(position: bigint): void {
    if (this.through === null || position > this.through) this.through = position;
  }

  /** True once this process has seen the views include some position (its own applies, or a shared checkpoint). */
  known(): boolean {
    return this.through !== null;
  }

  /** `events` in log order: the head whose wakes already went out (applied again quietly), and the rest. */
  split<T extends { position: bigint }>(events: readonly T[]): { replayed: T[]; fresh: T[] } {
    const through = this.through;
    if (through === null || events.length === 0 || events[0].position > through) return { replayed: [], fresh: [...events] };
    let cut = 0;
    while (cut < events.length && events[cut].position <= through) cut++;
    return { replayed: events.slice(0, cut), fresh: events.slice(cut) };
  }
}
