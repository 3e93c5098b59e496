/**
 * `mailbox watch`: follows the wake stream, reconnecting with backoff when the
 * connection drops (each reconnect starts with a fresh `sync`, so nothing is
 * missed: the inbox is the authority). Authentication errors end it.
 */
import type { Command } from 'commander';
import { z } from 'zod';
import { parseInput } from '../../commands/validation';
import { isMailboxError, MailboxError } from '../../errors';
import { fromDecimalText } from '../../support/decimalText';
import { backoffDelay, sleep, type Backoff } from '../../support/retry';
import { action, clientFrom, print, printJson, withClientOptions, type ClientOptions } from './clientOptions';
import { formatWakeEvent } from './format';

/**
 * Reconnects spread out (jitter) so that watchers dropped by one server restart do not return in step. At most 5 s
 * apart: it grew to 30 s, so a watcher came back up to ~28 s after a server that was down for a while was back.
 */
const RECONNECT: Backoff = { initialDelayMs: 500, maxDelayMs: 5000, jitter: 0.2 };
const FATAL = new Set(['UNAUTHENTICATED', 'FORBIDDEN']);

/**
 * --count in plain decimal digits, 1 or more: Number() read --count 0x2 as 2, and --count abc (NaN) or 0 ended the
 * watch at once without a line or an error.
 */
const countTeaches = 'takes a whole number of wake events, 1 or more (e.g. --count 1)';
const watchFlagsSchema = z.strictObject({
  '--count': fromDecimalText(z.number({ error: countTeaches }).int({ error: countTeaches }).min(1, { error: countTeaches }), {
    teaches: countTeaches,
  }).optional(),
});

/**
 * A stream that ended while --no-reconnect was given, before --count was reached (or, without --count, at all) is a
 * failure: it exited 0, and `mailbox watch --no-reconnect --count 1 && mailbox inbox` went on as if a wake had come
 * when the server had only shut down.
 */
function endedEarly(lost: string, wakes: number, count: number | undefined): MailboxError {
  const progress = count === undefined ? '' : ` after ${wakes} of the ${count} wake(s) --count asked for`;
  return new MailboxError(
    'UNAVAILABLE',
    'Unavailable',
    `The wake stream ended (${lost})${progress}, and --no-reconnect was given: nothing more will be seen. Watch ` +
      'again (without --no-reconnect it reconnects by itself); the sync line then gives your unread count.',
  );
}

export function registerWatchCommand(program: Command): void {
  withClientOptions(program.command('watch'))
    .description(
      'follow your wake events: a "sync:" line first (your unread count), then one line per wake: "wake:" a message ' +
        'delivered to you, "task:" a change to a task you sent or hold, "reply overdue:" a reply you expect is late',
    )
    .option(
      '--count <n>',
      'exit after n wakes, of any of the three kinds (sync lines and reconnects do not count); --count 1 waits for ' +
        'the next one: then read what it names (mailbox inbox --status unread, mailbox task list)',
    )
    .option(
      '--no-reconnect',
      'exit when the stream ends instead of reconnecting, with exit code 1 (the stream ended before --count was reached)',
    )
    .action(
      action(async (options: ClientOptions & { count?: string; reconnect: boolean }) => {
        const { '--count': count } = parseInput(watchFlagsSchema, { '--count': options.count }, 'mailbox watch');
        const client = clientFrom(options);
        const limit = count ?? Infinity;
        const abort = new AbortController();
        const onSignal = () => abort.abort();
        process.once('SIGINT', onSignal);
        let wakes = 0;
        let failures = 0;
        // One line when the stream is lost and one when it is back, not one per attempt (a line every few seconds
        // for as long as a server is down buried the wakes around it).
        let lostAt: number | null = null;
        try {
          while (!abort.signal.aborted && wakes < limit) {
            let lost = 'the server ended it';
            try {
              for await (const event of client.watch(abort.signal)) {
                failures = 0;
                if (lostAt !== null) {
                  const seconds = ((Date.now() - lostAt) / 1000).toFixed(1);
                  process.stderr.write(`back on the stream to ${client.wakeStreamUrl} (lost for ${seconds} s)\n`);
                  lostAt = null;
                }
                if (options.json) printJson(event);
                else print(formatWakeEvent(event));
                if (event.event === 'wake' && ++wakes >= limit) abort.abort();
                if (event.event === 'shutdown') lost = `the server ended it: ${event.data.reason}`;
                if (event.event === 'revoked') {
                  // retired or a new token: reconnecting with this one can only fail
                  throw new MailboxError(
                    'UNAUTHENTICATED',
                    'Unauthenticated',
                    `The wake stream of ${event.data.identity} was revoked (${event.data.reason}); watch again with the current token.`,
                  );
                }
              }
            } catch (error) {
              if (abort.signal.aborted) break;
              if (!options.reconnect || (isMailboxError(error) && FATAL.has(error.code))) throw error;
              lost = (error as Error).message;
            }
            if (abort.signal.aborted) break;
            if (!options.reconnect) throw endedEarly(lost, wakes, count);
            const delay = Math.round(backoffDelay(RECONNECT, ++failures));
            if (lostAt === null) {
              lostAt = Date.now();
              // A reason is a sentence ("... Set --url or MAILBOX_URL."): its period before "; reconnecting" read ".;".
              process.stderr.write(`lost the stream to ${client.wakeStreamUrl}: ${lost.replace(/\.$/, '')}; reconnecting\n`);
            }
            await sleep(delay, abort.signal); // Ctrl-C ends the wait at once
          }
        } finally {
          process.removeListener('SIGINT', onSignal);
        }
      }),
    );
}
