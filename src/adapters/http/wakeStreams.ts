/** The open wake streams: per-agent caps, and one place to end them all on shutdown. */
import { MailboxError } from '../../errors';
import type { SseStream } from './sseStream';

export class WakeStreams {
  private readonly byIdentity = new Map<string, Set<SseStream>>();
  private total = 0;

  constructor(private readonly maxPerAgent: number) {}

  get size(): number {
    return this.total;
  }

  /** Throws RATE_LIMITED when `identity` already holds its maximum of open streams. */
  reserve(identity: string): void {
    const open = this.byIdentity.get(identity)?.size ?? 0;
    if (open >= this.maxPerAgent) {
      throw new MailboxError('RATE_LIMITED', 'Too many wake streams',
        `${identity} already has ${open} open wake streams (the limit is ${this.maxPerAgent}); close one before opening another.`,
        { retryAfterSeconds: 5, limit: this.maxPerAgent });
    }
  }

  add(identity: string, stream: SseStream): void {
    const set = this.byIdentity.get(identity) ?? new Set<SseStream>();
    set.add(stream);
    this.byIdentity.set(identity, set);
    this.total += 1;
    stream.whenClosed(() => {
      set.delete(stream);
      this.total -= 1;
      if (set.size === 0) this.byIdentity.delete(identity);
    });
  }

  closeAll(reason: string): void {
    for (const set of [...this.byIdentity.values()]) for (const stream of [...set]) stream.close(reason);
  }
}
