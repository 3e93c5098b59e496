/**
 * The open wake streams: per-agent caps, revocation, and one place to end them
 * all on shutdown. A slot is reserved synchronously before a stream starts to
 * open (subscribing and counting take I/O), so concurrent opens cannot all pass
 * the cap while none has opened yet. With shared limits (Redis) the cap also
 * holds across the API nodes: the slot then takes a place in the shared count
 * too, and gives it back when it closes.
 */
import { IGNORE_SHARED_LIMITS, type SharedLimits, type SharedLimitsObserver } from '../../application/sharedLimits';
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
  /** Gives back what the slot holds elsewhere (its place in the shared count). */
  onRelease: (() => void) | null = null;

  constructor(
    readonly identity: string,
    /** The hash of the token that opened the stream (null: not known), for recheck(). */
    readonly tokenHash: string | null,
    private readonly free: (slot: Slot) => void,
  ) {}

  attach(stream: SseStream): void {
    this.stream = stream;
    stream.whenClosed(() => this.release());
    if (this.revokedBecause !== null) this.revoke(this.revokedBecause); // revoked while it was opening
  }

  release(): void {
    this.free(this);
    const onRelease = this.onRelease;
    this.onRelease = null;
    onRelease?.();
  }

  revoke(reason: string): void {
    this.revokedBecause = reason;
    if (!this.stream) return;
    this.stream.send('revoked', { identity: this.identity, reason });
    this.stream.close();
  }
}

/**
 * How often the tokens of open streams (wake and audit) are looked up again: a retirement or a rotation done through
 * another API node reaches this one only through the registry (a token lookup answers from a read this recent).
 */
export const TOKEN_RECHECK_MS = 1000;

/** Why a token no longer works ('agent retired', 'token rotated'), or null while it does. */
export type TokenRevocation = (tokenHash: string) => Promise<string | null>;

export class WakeStreams {
  private readonly byIdentity = new Map<string, Set<Slot>>();
  private rechecking: Promise<void> | null = null;

  constructor(
    private readonly maxPerAgent: number,
    private readonly shared: SharedLimits | null = null,
    private readonly observer: SharedLimitsObserver = IGNORE_SHARED_LIMITS,
    /** What the streams are, in a refusal ("wake streams"; the audit streams are capped by another instance). */
    private readonly what = 'wake streams',
  ) {}

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

  /**
   * Takes one of `identity`'s places, or throws RATE_LIMITED when it already holds its maximum. `tokenHash`: the
   * hash of the token that opens the stream, so that recheck() can end it once that token stops working.
   */
  reserve(identity: string, tokenHash: string | null = null): WakeSlot {
    const slots = this.byIdentity.get(identity) ?? new Set<Slot>();
    if (slots.size >= this.maxPerAgent) throw this.tooMany(identity, slots.size);
    const slot = new Slot(identity, tokenHash, (done) => {
      slots.delete(done);
      if (slots.size === 0 && this.byIdentity.get(identity) === slots) this.byIdentity.delete(identity);
    });
    slots.add(slot);
    this.byIdentity.set(identity, slots);
    return slot;
  }

  /**
   * reserve(), then a place in the count shared by every API node when there is one. Should the
   * shared count not answer, this node's own cap holds the line (`observer` is told).
   */
  async reserveAcrossNodes(identity: string, tokenHash: string | null = null): Promise<WakeSlot> {
    const slot = this.reserve(identity, tokenHash) as Slot; // first, synchronously: concurrent opens here count at once
    if (this.shared === null) return slot;
    let hold: Awaited<ReturnType<SharedLimits['holdWakeStream']>>;
    try {
      hold = await this.shared.holdWakeStream(identity, this.maxPerAgent);
    } catch (error) {
      this.observer.unavailable(error);
      return slot;
    }
    this.observer.answered();
    if (!hold.held) {
      slot.release();
      throw this.tooMany(identity, hold.open, ' across the API nodes');
    }
    slot.onRelease = () => void hold.release().catch((error: unknown) => this.observer.unavailable(error));
    return slot;
  }

  private tooMany(identity: string, open: number, where = ''): MailboxError {
    return new MailboxError(
      'RATE_LIMITED',
      `Too many ${this.what}`,
      `${identity} already has ${open} open ${this.what}${where} (the limit is ${this.maxPerAgent}); close one before opening another.`,
      { retryAfterSeconds: 5, limit: this.maxPerAgent },
    );
  }

  /** Ends `identity`'s streams now, each with a last `revoked` event, including those still opening. */
  revoke(identity: string, reason: string): void {
    for (const slot of [...(this.byIdentity.get(identity) ?? [])]) slot.revoke(reason);
  }

  /**
   * Asks whether the token of each stream (reserved or open) still works, and ends with `revoked` those whose token
   * stopped: retired, or rotated, through another API node, which this node hears of only by reading the registry
   * (revoke() is the at-once path of the node that ran the command). Overlapping calls share one pass; a token whose
   * check fails (the store unavailable) keeps its streams until a later pass can tell.
   */
  recheck(revocationOf: TokenRevocation): Promise<void> {
    this.rechecking ??= this.recheckOnce(revocationOf).finally(() => (this.rechecking = null));
    return this.rechecking;
  }

  private async recheckOnce(revocationOf: TokenRevocation): Promise<void> {
    const byToken = new Map<string, Slot[]>();
    for (const slots of this.byIdentity.values())
      for (const slot of slots)
        if (slot.tokenHash !== null) byToken.set(slot.tokenHash, [...(byToken.get(slot.tokenHash) ?? []), slot]);
    for (const [tokenHash, slots] of byToken) {
      const reason = await revocationOf(tokenHash).catch(() => null);
      if (reason !== null) for (const slot of slots) slot.revoke(reason);
    }
  }

  closeAll(reason: string): void {
    for (const slots of [...this.byIdentity.values()]) for (const slot of [...slots]) slot.stream?.close(reason);
  }
}
