/**
 * Listens to wake events for every known agent. A wake is an activity hint
 * (the agent was just told about new mail, so give it a moment before nudging)
 * and a sample of the pipeline's wake latency.
 */
import type { EventStore } from '../events/eventStore';
import type { WakeEvent } from '../projections/viewChanges';
import type { Unsubscribe, WakeBus } from '../projections/wakeBus';

/** Latency lookups cost one log read each; a few per tick are enough for a histogram. */
const MAX_SAMPLES_PER_TICK = 20;

export class WakeWatcher {
  private readonly subscriptions = new Map<string, Unsubscribe>();
  private readonly lastWakeAt = new Map<string, number>();
  private samples: Array<{ position: bigint; receivedAt: number }> = [];
  private received = 0;

  constructor(
    private readonly wakeBus: WakeBus,
    private readonly now: () => number,
  ) {}

  /** Subscribes to agents not watched yet (new agents appear between ticks). */
  async watch(identities: Iterable<string>): Promise<void> {
    for (const identity of identities) {
      if (this.subscriptions.has(identity)) continue;
      this.subscriptions.set(identity, await this.wakeBus.subscribe(identity, (wake) => this.onWake(wake)));
    }
  }

  lastWakeFor(identity: string): number | null {
    return this.lastWakeAt.get(identity) ?? null;
  }

  /** Wakes received since the last call. */
  takeReceivedCount(): number {
    const count = this.received;
    this.received = 0;
    return count;
  }

  /** Wake latency in ms for the wakes sampled since the last call, from each event's command time. */
  async takeLatenciesMs(store: EventStore): Promise<number[]> {
    const samples = this.samples;
    this.samples = [];
    const latencies: number[] = [];
    for (const sample of samples) {
      const [event] = await store.readAll(sample.position - 1n, 1);
      if (event?.position === sample.position) latencies.push(Math.max(0, sample.receivedAt - Date.parse(event.metadata.at)));
    }
    return latencies;
  }

  async close(): Promise<void> {
    const unsubscribes = [...this.subscriptions.values()];
    this.subscriptions.clear();
    await Promise.all(unsubscribes.map((unsubscribe) => unsubscribe()));
  }

  private onWake(wake: WakeEvent): void {
    const at = this.now();
    this.received++;
    this.lastWakeAt.set(wake.recipient, at);
    if (this.samples.length < MAX_SAMPLES_PER_TICK && /^\d+$/.test(wake.position)) {
      this.samples.push({ position: BigInt(wake.position), receivedAt: at });
    }
  }
}
