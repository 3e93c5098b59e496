/**
 * Delivers each nudge to every target that serves the agent, in the
 * background with bounded concurrency, so that slow webhooks never delay the
 * next tick (and with it the stall alarm). Every outcome is logged and counted.
 */
import type { Logger } from 'pino';
import { BoundedQueue } from './boundedQueue';
import type { HeartbeatMetrics } from './heartbeatMetrics';
import type { Nudge } from './nudgeDecider';
import type { NudgeTarget } from './nudgeTarget';

export interface DeliveryReport {
  nudge: Nudge;
  /** target name -> 'delivered' | 'unheard' | error message; { log: 'logged' } when no target serves the agent */
  outcomes: Record<string, string>;
  /** The targets that finally failed (after their own retries), with the error: an error message is not an outcome. */
  failures: Array<{ target: string; error: string }>;
  delivered: boolean;
}

export class NudgeDispatcher {
  private readonly queue: BoundedQueue;
  /** Where the reports of the nudges dispatched from now on also go (a tick's, for its settled report). */
  private sink: DeliveryReport[] | null = null;

  constructor(
    private readonly targets: readonly NudgeTarget[],
    private readonly logger: Logger,
    private readonly metrics: HeartbeatMetrics,
    concurrency: number,
  ) {
    this.queue = new BoundedQueue(concurrency);
  }

  /** Queues the nudge; `onDone` learns whether any target took it (the daemon retries next tick if none did). */
  dispatch(nudge: Nudge, onDone: (report: DeliveryReport) => void): void {
    const sink = this.sink;
    this.queue.push(async () => {
      const report = await this.deliver(nudge);
      sink?.push(report);
      onDone(report);
    });
  }

  /** Collects into `sink` the reports of the nudges dispatched until the next call (null: stop collecting). */
  collectInto(sink: DeliveryReport[] | null): void {
    this.sink = sink;
  }

  /** Whether any target serves the agent; a nudge for one that none serves is only written to the log. */
  servedBy(identity: string): boolean {
    return this.targets.some((target) => target.appliesTo(identity));
  }

  /** The nudges queued or in flight (a webhook's retries included). */
  get pending(): number {
    return this.queue.pending;
  }

  /** Resolves when every queued nudge has been delivered or has finally failed. */
  settled(): Promise<void> {
    return this.queue.idle();
  }

  private async deliver(nudge: Nudge): Promise<DeliveryReport> {
    const targets = this.targets.filter((target) => target.appliesTo(nudge.identity));
    const { identity, nudgeId, unread, reason, messageIds } = nudge;
    // An escalation's nudge: its line names every message it carried (a failure leaves each of them untold).
    const context = { identity, nudgeId, unread, ...(reason === undefined ? {} : { reason, messageIds }) };
    if (targets.length === 0) {
      // No target serves this agent (embedded use without Redis, webhook or hook): the log line is all there is. It
      // counts as done (the same unread set is not logged again), but it told nobody: 'logged', never 'delivered'.
      this.logger.info(
        { ...context, nudge },
        'nudge written to the log only (no delivery target configured): the agent was not told',
      );
      this.metrics.deliveries.inc({ target: 'log', outcome: 'logged' });
      return { nudge, outcomes: { log: 'logged' }, failures: [], delivered: true };
    }
    const settled = await Promise.allSettled(targets.map((target) => target.deliver(nudge)));
    const outcomes: Record<string, string> = {};
    const failures: DeliveryReport['failures'] = [];
    settled.forEach((result, i) => {
      const target = targets[i].name;
      if (result.status === 'fulfilled') {
        outcomes[target] = result.value;
        this.metrics.deliveries.inc({ target, outcome: result.value });
        // 'unheard': published (a Redis channel) with nobody listening, so the agent was not told: never "delivered".
        const said =
          result.value === 'unheard'
            ? 'nudge published; nobody heard it (no listener): the agent was not told'
            : 'nudge delivered';
        this.logger.info({ ...context, target, outcome: result.value }, said);
      } else {
        const message = result.reason instanceof Error ? result.reason.message : String(result.reason);
        outcomes[target] = message;
        failures.push({ target, error: message });
        this.metrics.deliveries.inc({ target, outcome: 'failed' });
        this.logger.error({ ...context, target, err: message }, 'nudge delivery failed');
      }
    });
    return { nudge, outcomes, failures, delivered: settled.some((result) => result.status === 'fulfilled') };
  }
}
