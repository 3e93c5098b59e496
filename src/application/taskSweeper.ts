/**
 * The task sweeper (issue 12): every interval, the open tasks the views say
 * are due (past their deadline, or with a lapsed lease) are each looked at by
 * the task decider on the task's own stream. Safe with several processes: the
 * decision is idempotent (a second look at an ended task decides nothing),
 * appends carry the expected revision, and the command id (hence the event
 * ids) is derived from the task and what fell due, so racing sweepers write
 * each change once. With shared views (Redis) the passes run only on the
 * holder of the sweeper lease (useLease), so several replicas never sweep twice.
 *
 * Besides each interval, a pass runs when the next task falls due: whenever the views move forward with a task opened or
 * changed (a claim with a lease, a renewal, a deadline sent) and after each pass, the sweeper reads from the views' due index the earliest
 * due time after its last pass and before its next interval, and sets a timer for it. A lapsed lease is returned to
 * its audience at its end, not up to an interval later. A node that starts sweeping (at its start, or when it gains
 * the sweeper lease) passes at once: what fell due while no node swept is ended then, not an interval later. Only a node that sweeps looks; a look that fails or finds
 * nothing leaves it to the interval; a due time at or before the last pass (a pass that failed, views that lag) is
 * never a timer, only the interval's (no pass is ever repeated at once).
 */
import { inject, injectable } from 'tsyringe';
import type { Logger } from 'pino';
import type { ProjectionStore } from '../projections/projectionStore';
import { StoreOutage } from '../support/storeOutage';
import { fallenDue } from '../events/taskTimes';
import { taskTimesOf, type TaskView } from '../projections/readModel/taskView';
import { isMailboxError } from '../errors';
import { TOKENS } from '../tokens';
import type { Clock } from './runtime';
import { TaskCommands } from './taskCommands';
import type { LeaseLoop } from '../projections/projectorLease';
import type { ProjectionRunner } from '../projections/projectionRunner';
import { dueAt } from '../projections/readModel/taskView';

/**
 * Calls `fire` once `delayMs` (the injected clock's milliseconds) have passed; returns what cancels it. Real timers by
 * default; tests give one driven by their clock.
 */
export type DueTimer = (delayMs: number, fire: () => void) => () => void;

const realTimer: DueTimer = (delayMs, fire) => {
  const timer = setTimeout(fire, delayMs);
  timer.unref();
  return () => clearTimeout(timer);
};

/** The most due tasks one pass looks at (a pass that finds this many passes again at once). */
const PASS_LIMIT = 1000;

export interface SweepReport {
  looked: number;
  changed: number;
  failed: number;
}

/**
 * What fell due (events/taskTimes.ts, the decider's rule), as part of the command id: the same due moment gives the
 * same event ids in every process. A record the views hold as due that the rule does not find due (written by other
 * rules) is keyed by its lease, as before: the decider, on the task's own stream, decides what is due.
 */
function dueKey(task: TaskView, now: number): string {
  const due = fallenDue(taskTimesOf(task), now);
  if (due?.kind === 'deadline') return `deadline:${due.at}`;
  return `lease:${task.assignee}:${task.leaseExpiresAt}`;
}

@injectable()
export class TaskSweeper {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<SweepReport> | null = null;
  private lease: LeaseLoop | null = null;
  private intervalMs = 0;
  private dueTimer: DueTimer = realTimer;
  /** The injected clock's time of the last pass: what was due by then is that pass's, or the interval's. */
  private lastPassAt = 0;
  /** The timer set for the next due time (`at`, ms), if any. */
  private armed: { at: number; cancel: () => void } | null = null;
  private looking: Promise<void> | null = null;
  private lookAgain = false;
  private stopFollowing: (() => void) | null = null;
  /** A views store that does not answer a pass is said once, not at every pass (support/storeOutage.ts). */
  private readonly outage: StoreOutage;
  /**
   * An event store that does not answer the look at a due task is said once, not at every task of every pass: each
   * task logged its own warn line with the whole stack, every pass, for as long as the outage lasted.
   */
  private readonly eventStoreOutage: StoreOutage;

  constructor(
    @inject(TOKENS.ProjectionStore) private readonly projections: ProjectionStore,
    @inject(TaskCommands) private readonly tasks: TaskCommands,
    @inject(TOKENS.Clock) private readonly clock: Clock,
    @inject(TOKENS.Logger) private readonly logger: Logger,
    @inject(TOKENS.ProjectionRunner) private readonly runner: ProjectionRunner,
  ) {
    this.outage = new StoreOutage(logger, () => clock.now().getTime(), {
      down: 'task sweeper: the views store does not answer; no due task is ended until a pass reads it again (each interval)',
      stillDown: 'task sweeper: the views store still does not answer',
      back: 'task sweeper: the views store answers again; sweeping',
      stoppedAsking:
        'task sweeper: the views store had not answered when this node stepped down; it no longer sweeps, nor says when the store answers',
      failuresField: 'failedPasses',
      refused: {
        down: 'task sweeper: the views store answers and refuses its reads; no due task is ended until a pass reads it again (each interval)',
        back: 'task sweeper: the views store takes its reads again; sweeping',
        stoppedAsking:
          'task sweeper: the views store still refused its reads when this node stepped down; it no longer sweeps, nor says when the store takes them',
      },
    });
    this.eventStoreOutage = new StoreOutage(logger, () => clock.now().getTime(), {
      down: 'task sweeper: the event store does not answer; no due task is ended until it does (tried each pass)',
      stillDown: 'task sweeper: the event store still does not answer',
      back: 'task sweeper: the event store answers again; ending due tasks',
      stoppedAsking:
        'task sweeper: the event store had not answered when this node stepped down; it no longer sweeps, nor says when the store answers',
      failuresField: 'failedTasks',
      refused: {
        down: 'task sweeper: the event store answers and refuses its writes; no due task is ended until it takes them (tried each pass)',
        back: 'task sweeper: the event store takes its writes again; ending due tasks',
        stoppedAsking:
          'task sweeper: the event store still refused its writes when this node stepped down; it no longer sweeps, nor says when the store takes them',
      },
    });
  }

  /** One pass over what is due now, at most `limit` tasks (the rest wait for the next pass). */
  async sweepOnce(limit = 1000): Promise<SweepReport> {
    const now = this.clock.now();
    this.lastPassAt = Math.max(this.lastPassAt, now.getTime());
    const due = await this.projections.dueTasks(now.toISOString(), limit);
    const report: SweepReport = { looked: due.length, changed: 0, failed: 0 };
    for (const task of due) {
      try {
        const result = await this.tasks.sweep(task.taskId, now, dueKey(task, now.getTime()));
        this.eventStoreOutage.answered();
        if (result.events.length > 0) report.changed++;
      } catch (error) {
        report.failed++;
        if (this.eventStoreOutage.failed(error, { taskId: task.taskId })) continue; // said once, then at debug
        this.logger.warn(
          { err: error, taskId: task.taskId },
          'task sweeper: could not end a due task; it is retried on the next pass',
        );
      }
    }
    return report;
  }

  /** Sweeps only while `lease` is held (started and released with the sweeper). */
  useLease(lease: LeaseLoop): void {
    this.lease = lease;
  }

  /**
   * Passes every `intervalMs` (0: the sweeper is off), and at the next due time the views know of (`timer`: how it
   * waits for it, real timers by default).
   */
  start(intervalMs: number, { timer }: { timer?: DueTimer } = {}): void {
    if (intervalMs <= 0 || this.timer) return;
    this.intervalMs = intervalMs;
    if (timer) this.dueTimer = timer;
    this.lastPassAt = Math.max(this.lastPassAt, this.clock.now().getTime());
    this.timer = setInterval(() => this.pass(), intervalMs);
    this.timer.unref();
    // Only an advance that may have moved a task's due time: a look is a read of the views, and every send's advance
    // paid it on the event loop (a query per send one after another: ~15% of its time there, by a profile of
    // bench core/sequential). Time alone moves nothing due nearer than the interval's pass, which looks after it.
    this.stopFollowing = this.runner.onAdvance((_position, advance) => {
      if (advance.tasksMayHaveChanged) this.lookForNextDue();
    });
    // With a lease, the pass runs when this node gains it (leaseGained); alone, it sweeps from now.
    if (this.lease)
      void this.lease.start().catch(() => undefined); // an unreachable store: the lease's next look tries again
    else this.pass();
  }

  /**
   * This node now holds the sweeper lease (at its start, or taking over from a holder that stopped or died): what is
   * due already is swept at once, then the timer is set for the next due time. Tasks that fell due while no node swept
   * (the previous holder gone, the lease not yet taken) waited up to an interval more (MAILBOX_TASK_SWEEP_MS).
   */
  leaseGained(): void {
    this.pass();
  }

  /** One pass, unless one runs (a slow pass is never overlapped) or another replica sweeps; then the next due time. */
  private pass(): void {
    if (this.running || this.timer === null) return;
    if (this.lease && !this.lease.keeper.leading) {
      // Another replica sweeps (or none, the store down for all): an outage this node was saying ends with its own
      // line, not with a downMs counting the time it did not sweep, whenever it leads and gets an answer again.
      this.outage.stoppedAsking();
      this.eventStoreOutage.stoppedAsking();
      return;
    }
    let more = false;
    this.running = this.sweepOnce(PASS_LIMIT)
      .then(
        (report) => {
          this.outage.answered();
          // A full pass left due tasks behind (a start after downtime, a takeover): they are next, not an interval
          // later. Only while passes end tasks: one that ends none (the event store down) waits for the interval.
          more = report.looked >= PASS_LIMIT && report.changed > 0;
          return report;
        },
        (error: unknown) => {
          // Views that answer but are not served (another log's, being taken over, rebuilt after a loss): no outage of
          // the store, whose lines ("does not answer", then "answers again" with a downMs) said one at every take-over.
          // /readyz and the projector's lines say why; the next pass after they are served sweeps.
          const refused = isMailboxError(error) && error.code === 'UNAVAILABLE';
          if (refused && this.runner.getStatus().viewsProblem !== null) return { looked: 0, changed: 0, failed: 1 };
          // A views store that does not answer (a Redis failover, until the lease steps down) is one warn line, not
          // the error with its stack at every pass; any other failure keeps its line and stack each time.
          if (!this.outage.failed(error))
            this.logger.warn({ err: error }, 'task sweeper: pass failed; retrying at the next interval');
          return { looked: 0, changed: 0, failed: 1 };
        },
      )
      .finally(() => {
        this.running = null;
        if (more) this.pass();
        else this.lookForNextDue();
      });
  }

  /**
   * Reads the earliest due time after the last pass and before the next interval, and sets the timer for it (unless
   * one is set for an earlier time). One look at a time; views that move during a look are looked at once more after it.
   */
  private lookForNextDue(): void {
    if (this.timer === null || (this.lease && !this.lease.keeper.leading)) return;
    if (this.looking) {
      this.lookAgain = true;
      return;
    }
    this.looking = (async () => {
      const after = new Date(this.lastPassAt).toISOString();
      const horizon = new Date(this.clock.now().getTime() + this.intervalMs).toISOString();
      const [next] = await this.projections.dueTasks(horizon, 1, after);
      const at = next === undefined ? null : dueAt(next);
      if (at !== null) this.armFor(at);
    })()
      .catch(() => undefined) // views that do not answer: the interval's pass says so
      .finally(() => {
        this.looking = null;
        if (!this.lookAgain) return;
        this.lookAgain = false;
        this.lookForNextDue();
      });
  }

  private armFor(at: number): void {
    if (this.timer === null || at <= this.lastPassAt || (this.armed !== null && this.armed.at <= at)) return;
    this.armed?.cancel();
    const armed = {
      at,
      cancel: this.dueTimer(Math.max(0, at - this.clock.now().getTime()), () => {
        if (this.armed === armed) this.armed = null;
        this.pass();
      }),
    };
    this.armed = armed;
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.stopFollowing?.();
    this.stopFollowing = null;
    this.armed?.cancel();
    this.armed = null;
    await this.looking;
    await this.running;
    await this.lease?.stop();
  }
}
