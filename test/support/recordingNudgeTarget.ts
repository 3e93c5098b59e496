/** A nudge target that delivers every nudge it is handed (a 2xx webhook, say) and keeps them for the test to read. */
import type { Nudge } from '../../src/heartbeat/nudgeDecider';
import type { DeliveryStatus, NudgeTarget } from '../../src/heartbeat/nudgeTarget';

export class RecordingNudgeTarget implements NudgeTarget {
  readonly nudges: Nudge[] = [];

  /** `name` is the `via` a delivered nudge is recorded with (e.g. 'webhook'). */
  constructor(readonly name = 'recording') {}

  appliesTo(): boolean {
    return true;
  }

  async deliver(nudge: Nudge): Promise<DeliveryStatus> {
    this.nudges.push(nudge);
    return 'delivered';
  }

  async close(): Promise<void> {}
}
