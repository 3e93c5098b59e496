/**
 * Fault injection for the test double: the failures a production client must
 * survive, made deterministic.
 *
 * - 'error': the write is applied, then the call fails with UNAVAILABLE, as when
 *   the connection breaks between the server's commit and its reply.
 * - 'silence': the write is applied and no reply is ever sent (a hung node or a
 *   lost packet); the client only finds out through its own deadline.
 */
export type LostReply = 'error' | 'silence';

export class Faults {
  private lostAppendReplies: LostReply[] = [];
  private lostReplyWaiters: Array<() => void> = [];
  private frozenFlag = false;
  private held = new Set<() => void>();

  /** The next append's write happens but its reply is lost (once per call of this method). */
  dropNextAppendReply(mode: LostReply = 'error'): void {
    this.lostAppendReplies.push(mode);
  }

  /** Called by the append services after the write is applied: the reply to lose, if any. */
  takeLostAppendReply(): LostReply | null {
    const lost = this.lostAppendReplies.shift() ?? null;
    if (lost !== null) for (const resolve of this.lostReplyWaiters.splice(0)) resolve();
    return lost;
  }

  /**
   * Resolves once the write whose reply is lost has been applied (the positive signal a test
   * waits for: on a loaded machine the client's deadline may fire before the server got to it).
   */
  lostReplyApplied(): Promise<void> {
    return new Promise((resolve) => this.lostReplyWaiters.push(resolve));
  }

  /** While frozen the server accepts calls and answers none (a hung node), so clients must rely on deadlines. */
  freeze(): void {
    this.frozenFlag = true;
  }

  /** Ends the freeze; calls held meanwhile get an UNAVAILABLE error (their clients gave up long ago). */
  thaw(): void {
    this.frozenFlag = false;
    const held = [...this.held];
    this.held.clear();
    for (const release of held) release();
  }

  private deniedFlag = false;

  /**
   * Every read and append is refused, unauthenticated, before anything is read or written: the node's answer to a
   * client whose credentials are wrong (or were changed under it). allowAccess() ends it.
   */
  denyAccess(): void {
    this.deniedFlag = true;
  }

  allowAccess(): void {
    this.deniedFlag = false;
    this.allDeniedFlag = false;
  }

  private allDeniedFlag = false;

  /**
   * Reads of $all (one-shot reads and subscriptions) are refused, permission denied, while the mailbox's streams stay
   * readable and writable: a user whose credentials are right but whom $all's access list does not name (by default
   * only $admins may read $all). Live $all subscriptions end with that error (onReadsOfAllDenied). allowAccess() ends it.
   */
  denyReadsOfAll(): void {
    this.allDeniedFlag = true;
    for (const cut of [...this.allDeniedListeners]) cut();
  }

  private readonly allDeniedListeners = new Set<() => void>();

  /**
   * Calls `cut` when reads of $all become denied, until the returned function is called: a live $all subscription
   * ends then with the access-denied error, as the node ends a subscription whose user lost the right to read.
   */
  onReadsOfAllDenied(cut: () => void): () => void {
    this.allDeniedListeners.add(cut);
    return () => this.allDeniedListeners.delete(cut);
  }

  get readsOfAllDenied(): boolean {
    return this.allDeniedFlag;
  }

  get denied(): boolean {
    return this.deniedFlag;
  }

  get frozen(): boolean {
    return this.frozenFlag;
  }

  private readonly beforeAppends = new Map<string, () => void>();

  /**
   * Runs `act` once, just before the next append to `streamName` is applied: what another writer (or an operator's
   * delete) did between the mailbox's look at a stream and its write, made deterministic.
   */
  beforeNextAppendTo(streamName: string, act: () => void): void {
    this.beforeAppends.set(streamName, act);
  }

  /** Called by the append services before an append to `streamName` is applied. */
  appending(streamName: string): void {
    const act = this.beforeAppends.get(streamName);
    this.beforeAppends.delete(streamName);
    act?.();
  }

  /** Parks a call while frozen; `release` runs on thaw. Returns true when the caller must stop handling the call. */
  holdIfFrozen(release: () => void): boolean {
    if (!this.frozenFlag) return false;
    this.held.add(release);
    return true;
  }
}
