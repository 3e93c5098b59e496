/**
 * watch's listener, as a library caller gives it. Its own failure went where it fell: thrown on the first 'sync', watch
 * rejected with the caller's own error and no stream stayed open; thrown on a 'wake', the wake bus swallowed it
 * without a word; rejected by an async listener, it was an unhandled rejection, which ends a Node process. Now each is
 * the same: the stream stays open (a wake is a hint, the inbox the authority: a listener that fails once must not
 * leave its agent unwoken from then on), and the error goes to `onError` with the event it was given, or, without
 * one, to the mailbox's logger. To end the stream on an error, call watch's stop from onError.
 */
import type { Logger } from 'pino';
import type { WakeStreamEvent } from './application/mailboxQueries';
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
