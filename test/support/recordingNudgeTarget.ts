/** A nudge target that delivers every nudge it is handed (a 2xx webhook, say) and keeps them for the test to read. */
import type { Nudge } from '../../src/heartbeat/nudgeDecider';
import type { DeliveryStatus, NudgeTarget } from '../../src/heartbeat/nudgeTarget';

export class RecordingNudgeTarget implements NudgeTarget {
  readonly nudges: Nudge[] = [];

  /**
   * `name` is the `via` a delivered nudge is recorded with (e.g. 'webhook'); `only`: the identities it serves (a
   * webhook configured per agent), else every one.
   */
  constructor(
    readonly name = 'recording',
    private readonly only?: readonly string[],
  ) {}

  appliesTo(identity: string): boolean {
    return this.only === undefined || this.only.includes(identity);
  }

  async deliver(nudge: Nudge): Promise<DeliveryStatus> {
    this.nudges.push(nudge);
    return 'delivered';
  }

  async close(): Promise<void> {}
}
