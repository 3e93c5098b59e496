/**
 * Wake latency = a send request arriving here -> each wake for that message
 * written to an SSE stream. The two ends meet in either order: a wake usually
 * goes out before the send is acknowledged (the send waits for the views), so
 * whichever end comes second records the observation. Entries expire so the
 * maps stay bounded (sends with no subscriber, wakes of sends made elsewhere).
 */
const TTL_MS = 30_000;
/**
 * Entries per map, at most. Measured at 2,000 sends/s with no subscriber (issue 15, heap snapshots of the
 * server after 50k and 150k messages): sendStarts full is ~6.5 MB (a 131,072-slot table, 3.7 MB, and the
 * message ids), and it stays there.
 */
export const WAKE_LATENCY_MAX_ENTRIES = 50_000;
const MAX_ENTRIES = WAKE_LATENCY_MAX_ENTRIES;

export class WakeLatencyTracker {
  private readonly sendStarts = new Map<string, number>();
  private readonly deliveries = new Map<string, number[]>();

  constructor(
    private readonly observe: (seconds: number) => void,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** The send of `messageId`, which arrived at `startedAt`, was acknowledged. */
  sendAcknowledged(messageId: string, startedAt: number): void {
    const delivered = this.deliveries.get(messageId);
    this.deliveries.delete(messageId);
    for (const at of delivered ?? []) this.observe((at - startedAt) / 1000);
    this.remember(this.sendStarts, messageId, startedAt);
  }

  /** Entries held (sends waiting for a wake, wakes waiting for their send). */
  get size(): number {
    return this.sendStarts.size + this.deliveries.size;
  }

  wakeWritten(messageId: string): void {
    const now = this.now();
    const startedAt = this.sendStarts.get(messageId);
    if (startedAt !== undefined) {
      this.observe((now - startedAt) / 1000);
      return;
    }
    const list = this.deliveries.get(messageId);
    if (list) list.push(now);
    else this.remember(this.deliveries, messageId, [now]);
  }

  private remember<V>(map: Map<string, V>, key: string, value: V): void {
    map.set(key, value);
    if (map.size > MAX_ENTRIES) this.expire();
  }

  /** Maps keep insertion order, so the oldest entries are first. */
  private expire(): void {
    const cutoff = this.now() - TTL_MS;
    for (const [key, at] of this.sendStarts) {
      if (at >= cutoff && this.sendStarts.size <= MAX_ENTRIES / 2) break;
      this.sendStarts.delete(key);
    }
    for (const [key, times] of this.deliveries) {
      if (times[0] >= cutoff && this.deliveries.size <= MAX_ENTRIES / 2) break;
      this.deliveries.delete(key);
    }
  }
}
