/** The rejection record in process: a ring buffer of the newest `capacity` rejections. */
import type { RejectionLog, RejectionRecord } from '../../application/rejectionLog';

export class MemoryRejectionLog implements RejectionLog {
  readonly backend = 'memory' as const;
  private readonly ring: Array<RejectionRecord | undefined>;
  private next = 0;
  private count = 0;

  constructor(readonly capacity: number) {
    this.ring = new Array<RejectionRecord | undefined>(capacity);
  }

  record(rejection: RejectionRecord): void {
    this.ring[this.next] = rejection;
    this.next = (this.next + 1) % this.capacity;
    this.count = Math.min(this.count + 1, this.capacity);
  }

  async recent(limit: number): Promise<RejectionRecord[]> {
    const out: RejectionRecord[] = [];
    for (let i = 1; i <= Math.min(limit, this.count); i++) out.push(this.ring[(this.next - i + this.capacity) % this.capacity]!);
    return out;
  }

  async close(): Promise<void> {}
}
