/**
 * The open wake streams: per-agent caps, revocation, and one place to end them
 * all on shutdown. A slot is reserved synchronously before a stream starts to
 * open (subscribing and counting take I/O), so concurrent opens cannot all pass
 * the cap while none has opened yet.
 */
import { MailboxError } from '../../errors';
import type { SseStream } from './sseStream';

/** One reserved place of an agent's cap: freed when its stream closes, or released if the stream never opens. */
export interface WakeSlot {
  attach(stream: SseStream): void;
  release(): void;
}

class Slot implements WakeSlot {
  stream: SseStream | null = null;
  revokedBecause: string | null = null;

  constructor(
    readonly identity: string,
    private readonly free: (slot: Slot) => void,
  ) {}

  attach(stream: SseStream): void {
    this.stream = stream;
    stream.whenClosed(() => this.release());
    if (this.revokedBecause !== null) this.revoke(this.revokedBecause); // revoked while it was opening
  }

  release(): void {
    this.free(this);
  }

  revoke(reason: string): void {
    this.revokedBecause = reason;
    if (!this.stream) return;
    this.stream.send('revoked', { identity: this.identity, reason });
    this.stream.close();
  }
}

export class WakeStreams {
  private readonly byIdentity = new Map<string, Set<Slot>>();

  constructor(private readonly maxPerAgent: number) {}

  /** Open streams (reserved slots still opening are not counted). */
  get size(): number {
    let open = 0;
    for (const slots of this.byIdentity.values()) for (const slot of slots) if (slot.stream && !slot.stream.isClosed) open += 1;
    return open;
  }

  /** Open streams per identity (this node's), for the console's agents table. */
  openByIdentity(): Map<string, number> {
    const open = new Map<string, number>();
    for (const [identity, slots] of this.byIdentity) {
      const count = [...slots].filter((slot) => slot.stream && !slot.stream.isClosed).length;
      if (count > 0) open.set(identity, count);
    }
    return open;
  }

  /** Takes one of `identity`'s places, or throws RATE_LIMITED when it already holds its maximum. */
  reserve(identity: string): WakeSlot {
    const slots = this.byIdentity.get(identity) ?? new Set<Slot>();
    if (slots.size >= this.maxPerAgent) {
      throw new MailboxError(
        'RATE_LIMITED',
        'Too many wake streams',
        `${identity} already has ${slots.size} open wake streams (the limit is ${this.maxPerAgent}); close one before opening another.`,
        { retryAfterSeconds: 5, limit: this.maxPerAgent },
      );
    }
    const slot = new Slot(identity, (done) => {
      slots.delete(done);
      if (slots.size === 0 && this.byIdentity.get(identity) === slots) this.byIdentity.delete(identity);
    });
    slots.add(slot);
    this.byIdentity.set(identity, slots);
    return slot;
  }

  /** Ends `identity`'s streams now, each with a last `revoked` event, including those still opening. */
  revoke(identity: string, reason: string): void {
    for (const slot of [...(this.byIdentity.get(identity) ?? [])]) slot.revoke(reason);
  }

  closeAll(reason: string): void {
    for (const slots of [...this.byIdentity.values()]) for (const slot of [...slots]) slot.stream?.close(reason);
  }
}
