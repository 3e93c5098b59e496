/**
 * The configuration of a command that answers in JSON envelopes on stderr (`mailbox audit`, `mailbox projections`,
 * `mailbox backup`), and how such a command reports a failure (reportCommandFailure, at the end).
 * A bad value is a StartupError, whose message `mailbox serve` prints as its one line; these commands caught it as
 * an unknown failure and printed {"error":"Audit failed","code":"INTERNAL"} (or "Projections command failed") around
 * it, so a configuration error read as a bug of the mailbox. It is now what it is: the VALIDATION_FAILED envelope,
 * 'Invalid configuration', with serve's message for the same environment and the variable as `field` (exit code 2,
 * as serve's). `stores`: the command opens the configured stores, whose names are checked as serve checks them
 * (an event store URL that names no log was opened anyway and failed as 'unable to open database file').
 */
import { configFromEnv, type MailboxConfig } from '../../config';
import { isMailboxError, MailboxError } from '../../errors';
import type * as StartupChecks from '../../startupChecks';
import { isStartupError, type StartupError } from '../../startupError';
import { unreadableEventRefusal } from '../../application/unreadableEventRefusal';

/** The checks of the stores' names, loaded when a command reads them: --help and a usage error do not load the adapters. */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const startupChecks = () => require('../../startupChecks') as typeof StartupChecks;

export function commandConfig(env: NodeJS.ProcessEnv, { stores = true }: { stores?: boolean } = {}): MailboxConfig {
  try {
    const config = configFromEnv(env);
    if (stores) startupChecks().checkStoreNames(config);
    return config;
  } catch (error) {
    throw isStartupError(error) ? startupRefusal(error) : error;
  }
}

/**
 * The log level of the operator's tools (`mailbox audit`, `mailbox projections`), whose stderr carries their
 * envelopes: warn while MAILBOX_LOG_LEVEL is unset, else the variable as serve reads it (a bad value, or an empty one,
 * refused in serve's words). `projections` logged at warn whatever the variable said (MAILBOX_LOG_LEVEL=debug showed
 * nothing more), and `audit` handed the raw text to pino: MAILBOX_LOG_LEVEL= (empty) failed as INTERNAL "default
 * level: must be included in custom levels".
 */
export function toolLogLevel(env: NodeJS.ProcessEnv): MailboxConfig['logLevel'] {
  return env.MAILBOX_LOG_LEVEL === undefined ? 'warn' : commandConfig(env, { stores: false }).logLevel;
}

/**
 * A refusal at start (what `mailbox serve` prints as its one line, exit code 2) as these commands' envelope: its own
 * title and code when it has them (a damaged views file: 'Views file damaged', UNAVAILABLE, with the remedy), a
 * configuration error when it names a variable, else 'Refused at start'. They printed any but a configuration error
 * as {"error":"Audit failed"|"Projections command failed","code":"INTERNAL"}, as if it were a bug of the mailbox.
 */
export function startupRefusal(error: StartupError): MailboxError {
  const { variable, ...details } = error.details;
  const field = variable === undefined ? {} : { field: variable };
  if (error.refusal) return new MailboxError(error.refusal.code, error.refusal.error, error.message, { ...field, ...details });
  if (variable !== undefined)
    return new MailboxError('VALIDATION_FAILED', 'Invalid configuration', error.message, { ...field, ...details });
  return new MailboxError('UNAVAILABLE', 'Refused at start', error.message, details);
}

/**
 * A damaged page of the SQLite log met while reading it, after it opened: as a log that cannot be read at open is said
 * (`Event log unreadable`, naming the file, its variable and the remedies, exit code 2). `mailbox audit replay` printed
 * {"error":"Audit failed","code":"INTERNAL","message":"database disk image is malformed"}. So is a stored event this
 * build cannot read (unreadableEventRefusal), which was INTERNAL too. Anything else as it is.
 */
export function readingFailure(caught: unknown, env: NodeJS.ProcessEnv): unknown {
  // The configuration is read again only for such a log (it parsed before the log was opened): a configuration error,
  // the caught one, would be thrown again here.
  if (caught instanceof Error && caught.name === 'UnreadableLogFile')
    return startupChecks().readerLogRefusal(caught, commandConfig(env, { stores: false }));
  return unreadableEventRefusal(caught) ?? caught; // a stored event this build cannot read: its position and remedy
}

/** A command's own failure as an envelope, with whether it means "nothing to work on" (exit code 1). */
export interface KnownFailure {
  envelope: Record<string, unknown>;
  notFound: boolean;
}

/**
 * How `mailbox audit`, `mailbox projections` and `mailbox backup` end on a failure: one line on stderr, `mailbox:
 * <message>` (failureLine), or with --json (`json`) the JSON envelope, and the exit code, which the caller sets. They
 * printed the envelope with or without --json, where serve, the heartbeat and the client commands say a failure in one
 * line. A refusal at start is said as itself (startupRefusal), a MailboxError as its envelope, a failure the command
 * knows by `known` as it says; anything else is a bug of the mailbox: INTERNAL under the command's `title`. Exit code 1
 * when there was nothing to work on (404: no event log), 2 for anything else (as serve's refusals).
 */
export function reportCommandFailure(
  caught: unknown,
  { stderr, json }: { stderr: { write(text: string): unknown }; json: boolean },
  title: string,
  known: (error: unknown) => KnownFailure | undefined = () => undefined,
): 1 | 2 {
  const error = isStartupError(caught) ? startupRefusal(caught) : caught;
  const failure: KnownFailure = isMailboxError(error)
    ? { envelope: error.envelope, notFound: error.status === 404 }
    : (known(error) ?? { envelope: { error: title, code: 'INTERNAL', message: (error as Error).message }, notFound: false });
  stderr.write(json ? `${JSON.stringify(failure.envelope)}\n` : failureLine(failure.envelope, title));
  return failure.notFound ? 1 : 2;
}

/**
 * A failure's envelope as the one line a person reads: `mailbox: <message>`, then what the envelope says beside the
 * message that they need and the message does not hold: the remedy (operatorAction, remedy), where a replay that
 * stopped part way goes on (resumeFrom), where the log ends (head), when to retry (retryAfterSeconds). A bug of the
 * mailbox (INTERNAL) is said under `failed` ('heartbeat failed: ...'), its code at the end. Line breaks inside a
 * message are spaces: one line.
 */
export function failureLine(envelope: Record<string, unknown>, failed: string): string {
  const message = String(envelope.message);
  // A remedy the message already gives, in full or its command without the parenthesis that explains it ('mailbox
  // projections rebuild --take-over (rebuilds the views from this log)'), is not said twice.
  const unsaid = (text: string | null): string =>
    text === null || message.includes(text) || message.includes(text.split(' (')[0]) ? '' : ` ${text}`;
  const text = (value: unknown): string | null => (typeof value === 'string' && value !== '' ? value : null);
  const { code, operatorAction, remedy, resumeFrom, head, retryAfterSeconds } = envelope;
  const resume = text(resumeFrom);
  const end = text(head);
  const internal = code === 'INTERNAL';
  const line =
    `mailbox: ${internal ? `${failed.charAt(0).toLowerCase()}${failed.slice(1)}: ` : ''}${message}` +
    unsaid(text(operatorAction)) +
    unsaid(text(remedy)) +
    (resume === null || message.includes(`--from ${resume}`) ? '' : ` Go on with --from ${resume}.`) +
    (end === null || message.includes(end) ? '' : ` The log ends at position ${end}.`) +
    (typeof retryAfterSeconds === 'number' ? ` (retry after ${retryAfterSeconds} s)` : '') +
    (internal ? ' (INTERNAL)' : '');
  return `${line.replace(/\s*\n\s*/g, ' ')}\n`;
}
