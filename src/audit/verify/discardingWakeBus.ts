/**
 * The wake bus of a scratch rebuild. A rebuild replays history: its "wakes"
 * describe mail that was delivered long ago, and publishing them would wake
 * agents for nothing. Discarding them is the point, so it is done here, by name.
 */
import type { Unsubscribe, WakeBus } from '../../projections/wakeBus';

export class DiscardingWakeBus implements WakeBus {
  async publish(): Promise<void> {}

  async subscribe(): Promise<Unsubscribe> {
    return async () => {};
  }

  async close(): Promise<void> {}
}
