/** Wake bus inside one process (embedded default). Listener errors are contained so one bad subscriber cannot block others. */
import type { Unsubscribe, WakeBus, WakeListener } from '../../projections/wakeBus';
import type { WakeEvent } from '../../projections/viewChanges';

export class InProcessWakeBus implements WakeBus {
  private readonly listeners = new Map<string, Set<WakeListener>>();

  async publish(wakes: readonly WakeEvent[]): Promise<void> {
    for (const wake of wakes) {
      for (const listener of this.listeners.get(wake.recipient) ?? []) {
        try {
          listener(wake);
        } catch {
          // A subscriber's failure is its own; the inbox remains the authority.
        }
      }
    }
  }

  async subscribe(identity: string, listener: WakeListener): Promise<Unsubscribe> {
    const set = this.listeners.get(identity) ?? new Set<WakeListener>();
    set.add(listener);
    this.listeners.set(identity, set);
    return async () => {
      set.delete(listener);
      if (set.size === 0) this.listeners.delete(identity);
    };
  }

  async close(): Promise<void> {
    this.listeners.clear();
  }
}
