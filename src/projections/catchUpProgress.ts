/**
 * How a long catch-up is going, for the log: a first start builds the views from the whole log (the SQLite views
 * at ~10,000 events/s: 10M events take a quarter of an hour), and without a word between "building the views
 * from the whole log" and "projections caught up" an operator cannot tell a slow start from a hung one.
 *
 * Pure over an injected clock: `due` is asked after every page and says yes at most once per `everyMs`.
 * The remaining time is estimated from positions (a log position is an event count on SQLite, a byte offset on
 * EventStoreDB: both grow with the log), so it is "about", and absent while the rate is not yet known.
 */
export interface CatchUpReport {
  /** Events applied since the catch-up began. */
  events: number;
  position: string;
  /** The log head when the report was made (what the catch-up is heading for). */
  head: string | null;
  /** Share of the way from the first position to the head, 0-100 (null: no head known, or nothing to catch up). */
  percent: number | null;
  perSecond: number;
  /** Seconds left at the rate so far (null: no rate yet, or no head to reach). */
  remainingSeconds: number | null;
}

/** A report's one line for an operator: what was applied, where, how fast, how long still. */
export function describeCatchUp(report: CatchUpReport): string {
  const where =
    report.head === null ? `position ${report.position}` : `position ${report.position} of ${report.head} (${report.percent}%)`;
  const left =
    report.remainingSeconds === null
      ? ''
      : report.remainingSeconds < 1
        ? ', nearly done'
        : `, about ${describeSeconds(report.remainingSeconds)} left`;
  return `projections catching up: ${report.events.toLocaleString('en-US')} events applied, at ${where}, ${report.perSecond.toLocaleString('en-US')} events/s${left}`;
}

function describeSeconds(seconds: number): string {
  if (seconds < 90) return `${Math.round(seconds)} s`;
  if (seconds < 90 * 60) return `${Math.round(seconds / 60)} min`;
  return `${(seconds / 3600).toFixed(1)} h`;
}

export class CatchUpProgress {
  private readonly startedAt: number;
  private reportedAt: number;

  constructor(
    private readonly now: () => number,
    /** The checkpoint the catch-up starts from (null: the views are empty). */
    private readonly from: bigint | null,
    private readonly everyMs = 10_000,
  ) {
    this.startedAt = now();
    this.reportedAt = this.startedAt;
  }

  /**
   * Asked after each page: whether a report is due (at most one per `everyMs` of the clock). Only then does the
   * caller read the log's head for `report`: a catch-up too short to report reads nothing more at start-up.
   */
  due(): boolean {
    const at = this.now();
    if (at - this.reportedAt < this.everyMs) return false;
    this.reportedAt = at;
    return true;
  }

  /** The report due: `events` applied so far, up to `position`, against the log's `head` (null: not known). */
  report(events: number, position: bigint, head: bigint | null): CatchUpReport {
    const seconds = (this.reportedAt - this.startedAt) / 1000;
    const start = this.from ?? 0n;
    const span = head === null ? 0n : head - start;
    const done = position - start;
    const positionsPerSecond = seconds > 0 ? Number(done) / seconds : 0;
    const remaining = head === null ? null : Math.max(0, Number(head - position));
    return {
      events,
      position: position.toString(),
      head: head?.toString() ?? null,
      percent: span > 0n ? Math.min(100, Math.floor(Number((done * 100n) / span))) : null,
      perSecond: seconds > 0 ? Math.round(events / seconds) : 0,
      remainingSeconds: remaining !== null && positionsPerSecond > 0 ? Math.round(remaining / positionsPerSecond) : null,
    };
  }
}
