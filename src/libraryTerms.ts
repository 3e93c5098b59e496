/**
 * The library's refusals in its own terms. createMailbox's caller is told to catch a MailboxError and to read its
 * `code`; a refusal met while opening was mailbox serve's instead: a second createMailbox on a data dir another
 * process serves rejected with a ViewsFileInUse (a StartupError, no `code`, no envelope) telling it to "give this one
 * another MAILBOX_DATA_DIR", a log SQLite cannot read with an UnreadableLogFile, views of another log with a
 * StartupError, and an unreachable Redis with a MailboxError naming MAILBOX_REDIS_URL (its `field` too).
 */
import { inOptionTerms, optionOf } from './config';
import { isMailboxError, MailboxError } from './errors';
import { isStartupError } from './startupError';

/**
 * A refusal at open (after translateStartupError phrased serve's) as a MailboxError naming createMailbox's options:
 * a StartupError by its own title and code when it has them (an unreadable log: 'Event log unreadable',
 * UNAVAILABLE), else VALIDATION_FAILED when it names the option to change, else UNAVAILABLE; its `field` the option,
 * the StartupError kept as the cause. Anything else as it is.
 */
export function openRefusalInOptionTerms(error: unknown): unknown {
  if (isStartupError(error)) {
    const { variable, ...details } = error.details;
    const field = typeof variable === 'string' ? { field: optionOf(variable) } : {};
    const [code, title] = error.refusal
      ? [error.refusal.code, error.refusal.error]
      : variable !== undefined
        ? (['VALIDATION_FAILED', 'Invalid configuration'] as const)
        : (['UNAVAILABLE', 'Refused at open'] as const);
    return withCause(new MailboxError(code, title, inLibraryWords(error.message), { ...field, ...details }), error);
  }
  if (isMailboxError(error) && /\bMAILBOX_[A-Z_]+\b/.test(JSON.stringify(error.envelope))) {
    const { error: title, code, message, field, ...details } = error.envelope;
    const named = typeof field === 'string' ? { field: optionOf(field) } : field === undefined ? {} : { field };
    return withCause(new MailboxError(code, title, inLibraryWords(message), { ...named, ...details }), error);
  }
  return error;
}

/** A variable set to a value (`MAILBOX_PROJECTIONS_ON_FOREIGN=take-over`) as the option given it, then every variable. */
const inLibraryWords = (message: string): string =>
  inOptionTerms(
    message.replace(/\b(MAILBOX_[A-Z_]+)=([\w-]+)/g, (_, variable: string, value: string) => `${optionOf(variable)}: '${value}'`),
  );

function withCause(error: MailboxError, cause: unknown): MailboxError {
  (error as Error).cause = cause;
  return error;
}
