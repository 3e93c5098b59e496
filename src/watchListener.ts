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

/**
 * The library's open watches. close() shut the wake bus under them and a listener was never told: its agent waited for
 * wakes that could not come. Now close() ends each one first, with a last `closed` event, once; the function watch
 * resolved to ends one without it (its caller knows), and after either nothing more reaches the listener.
 */
export class OpenWatches {
  private readonly open = new Set<(reason?: string) => Promise<void>>();
  private closedWith: string | null = null;

  /** `listener` fed by the stream `subscribe` opens; resolves to the function that stops it. */
  async watch(listener: WatchListener, subscribe: (emit: (event: WakeStreamUpdate) => void) => Promise<Unsubscribe>) {
    let ended = false;
    const unsubscribe = await subscribe((event) => {
      if (!ended) listener(event);
    });
    const end = async (reason?: string): Promise<void> => {
      if (ended) return;
      ended = true;
      this.open.delete(end);
      if (reason === undefined) return unsubscribe();
      // Not awaited: with Redis unreachable an unsubscribe waits for it, and close() must not (it closes the bus next).
      void unsubscribe().catch(() => undefined);
      listener({ event: 'closed', data: { reason } });
    };
    this.open.add(end);
    if (this.closedWith !== null) await end(this.closedWith); // close() began while this one was opening
    return (): Promise<void> => end();
  }

  /** Ends every open watch with its `closed` event. */
  async closeAll(reason: string): Promise<void> {
    this.closedWith = reason;
    await Promise.all([...this.open].map((end) => end(reason)));
  }
}
