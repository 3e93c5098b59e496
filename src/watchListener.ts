/**
 * watch's listener, as a library caller gives it. Its own failure went where it fell: thrown on the first 'sync', watch
 * rejected with the caller's own error and no stream stayed open; thrown on a 'wake', the wake bus swallowed it
 * without a word; rejected by an async listener, it was an unhandled rejection, which ends a Node process. Now each is
 * the same: the stream stays open (a wake is a hint, the inbox the authority: a listener that fails once must not
 * leave its agent unwoken from then on), and the error goes to `onError` with the event it was given, or, without
 * one, to the mailbox's logger. To end the stream on an error, call watch's stop from onError.
 */
import type { Logger } from 'pino';
import type { WakeStreamEvent, WakeStreamUpdate } from './application/mailboxQueries';
import type { Unsubscribe } from './projections/wakeBus';
import { checkedListener, refuseUnknownKeys } from './libraryOptions';
import { MailboxError } from './errors';

export type WatchListener = (event: WakeStreamEvent) => void;

export interface WatchOptions {
  /** Told each error the listener threw (or its promise rejected with), with the event; the stream stays open. */
  onError?: (error: unknown, event: WakeStreamEvent) => void;
}

/** The listener as the stream calls it: it never throws, and a promise it returns is never left to reject unheard. */
export function guardedListener(listener: unknown, options: unknown, logger: Logger): WatchListener {
  const emit = checkedListener(listener) as (event: WakeStreamEvent) => unknown;
  refuseUnknownKeys('watch options', options, ['onError'], 'No stream was opened.');
  const onError = (options as WatchOptions | undefined)?.onError;
  if (onError !== undefined && typeof onError !== 'function') {
    throw new MailboxError(
      'VALIDATION_FAILED',
      'Validation failed',
      `watch's onError is a function told each error the listener throws, with its event: { onError: (error, event) => ... }; ` +
        `not ${onError === null ? 'null' : typeof onError}. No stream was opened.`,
      { field: 'onError' },
    );
  }
  const failed = (error: unknown, event: WakeStreamEvent): void => {
    if (onError) {
      try {
        return void Promise.resolve(onError(error, event)).catch((again: unknown) => unheard(again, event, 'onError'));
      } catch (again) {
        return unheard(again, event, 'onError');
      }
    }
    unheard(error, event, 'listener');
  };
  const unheard = (error: unknown, event: WakeStreamEvent, which: 'listener' | 'onError'): void =>
    logger.error(
      { err: error, event: event.event },
      `watch: its ${which} failed on a '${event.event}' event; the stream stays open` +
        (which === 'listener' ? " (give watch { onError } to handle a listener's errors yourself)" : ''),
    );
  return (event) => {
    try {
      const result = emit(event);
      if (result !== null && typeof (result as PromiseLike<unknown> | undefined)?.then === 'function')
        (result as PromiseLike<unknown>).then(undefined, (error: unknown) => failed(error, event));
    } catch (error) {
      failed(error, event);
    }
  };
}

/** What the last event of a watch that mailbox.close() ended says (`{ event: 'closed', data: { reason } }`). */
export const WATCH_CLOSED_REASON =
  'mailbox.close() ended this stream: no more wakes come on it; createMailbox opens the mailbox again, and watch with it.';

/** Why a token no longer works ('agent retired', 'token rotated'), or null while it does (Authenticator.revocationOf). */
export type TokenRevocation = (tokenHash: string) => Promise<string | null>;
/** 'agent retired' when the identity was retired, else null (Authenticator.retirementOf). */
export type IdentityRetirement = (identity: string) => Promise<string | null>;

/** Whom a watch is for: its agent, and the hash of the token its client was taken with (null: a client of asActor). */
export interface Watcher {
  identity: string;
  tokenHash: string | null;
}

interface OpenWatch extends Watcher {
  /** Ends the watch; `last` is told to its listener first (its caller's stop ends it without a word). */
  end(last?: WakeStreamEvent): Promise<void>;
}

/**
 * The library's open watches. close() shut the wake bus under them and a listener was never told: its agent waited for
 * wakes that could not come. Now close() ends each one first, with a last `closed` event, once. A watch whose agent was
 * retired or whose token was rotated went on (or, its agent retired, went quiet for good): it now ends with a last
 * `revoked` event, `{ identity, reason }`, as an HTTP wake stream does. The function watch resolved to ends one without
 * a word (its caller knows); after any of them nothing more reaches the listener.
 */
export class OpenWatches {
  private readonly open = new Set<OpenWatch>();
  private closedWith: string | null = null;
  private rechecking: Promise<void> | null = null;

  /** `listener` fed by the stream `subscribe` opens, for `watcher`; resolves to the function that stops it. */
  async watch(
    watcher: Watcher,
    listener: WatchListener,
    subscribe: (emit: (event: WakeStreamUpdate) => void) => Promise<Unsubscribe>,
  ): Promise<() => Promise<void>> {
    let ended = false;
    let opened = false;
    let endedWhileOpening: WakeStreamEvent | null = null;
    let unsubscribe: Unsubscribe = async () => undefined;
    const watch: OpenWatch = {
      ...watcher,
      end: async (last) => {
        if (ended) return;
        if (!opened) {
          // Revoked while it was opening: it ends so once open.
          endedWhileOpening ??= last ?? null;
          return;
        }
        ended = true;
        this.open.delete(watch);
        if (last === undefined) return unsubscribe();
        // Not awaited: with Redis unreachable an unsubscribe waits for it, and close() must not (it closes the bus next).
        void unsubscribe().catch(() => undefined);
        listener(last);
      },
    };
    this.open.add(watch);
    try {
      unsubscribe = await subscribe((event) => {
        if (!ended) listener(event);
      });
    } catch (error) {
      this.open.delete(watch);
      throw error;
    }
    opened = true;
    // close() began while this one was opening, or its token stopped working.
    const early = this.closedWith !== null ? closedEvent(this.closedWith) : endedWhileOpening;
    if (early !== null) await watch.end(early);
    return (): Promise<void> => watch.end();
  }

  /**
   * Ends `identity`'s watches now, each with a last `revoked` event: every one when the agent was retired; when its
   * token was rotated, those taken with a token (a client of asActor holds none, and keeps working).
   */
  async revoke(identity: string, reason: string): Promise<void> {
    const all = reason === 'agent retired';
    const watches = [...this.open].filter((w) => w.identity === identity && (all || w.tokenHash !== null));
    await Promise.all(watches.map((w) => w.end(revoked(w.identity, reason))));
  }

  /** Whether a watch is open (recheck has something to look up). */
  any(): boolean {
    return this.open.size > 0;
  }

  /**
   * Asks whether the token of each open watch still works, and ends with `revoked` those whose token stopped: retired,
   * or rotated, by another mailbox on the same log (an API node), which this one hears of only by reading the registry.
   * A watch of a client without a token (asActor) is asked after by its identity: retired, it ends too. It ended only
   * on a retirement this mailbox heard of (its own, or one another node made that a read here happened to notice), and
   * went quiet for good on any other. Overlapping calls share one pass; a look-up that fails (the log unavailable)
   * keeps its watches until a later pass can tell.
   */
  recheck(revocationOf: TokenRevocation, retirementOf: IdentityRetirement): Promise<void> {
    this.rechecking ??= this.recheckOnce(revocationOf, retirementOf).finally(() => (this.rechecking = null));
    return this.rechecking;
  }

  private async recheckOnce(revocationOf: TokenRevocation, retirementOf: IdentityRetirement): Promise<void> {
    const byToken = new Map<string, OpenWatch[]>();
    const byIdentity = new Map<string, OpenWatch[]>();
    for (const w of this.open) {
      if (w.tokenHash !== null) byToken.set(w.tokenHash, [...(byToken.get(w.tokenHash) ?? []), w]);
      else byIdentity.set(w.identity, [...(byIdentity.get(w.identity) ?? []), w]);
    }
    const lookUps = [
      ...[...byToken].map(([tokenHash, watches]) => [() => revocationOf(tokenHash), watches] as const),
      ...[...byIdentity].map(([identity, watches]) => [() => retirementOf(identity), watches] as const),
    ];
    for (const [lookUp, watches] of lookUps) {
      const reason = await lookUp().catch(() => null);
      if (reason !== null) await Promise.all(watches.map((w) => w.end(revoked(w.identity, reason))));
    }
  }

  /** Ends every open watch with its `closed` event. */
  async closeAll(reason: string): Promise<void> {
    this.closedWith = reason;
    await Promise.all([...this.open].map((w) => w.end(closedEvent(reason))));
  }
}

const closedEvent = (reason: string): WakeStreamEvent => ({ event: 'closed', data: { reason } });
const revoked = (identity: string, reason: string): WakeStreamEvent => ({ event: 'revoked', data: { identity, reason } });
