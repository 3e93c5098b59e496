/**
 * The configuration of a command that answers in JSON envelopes on stderr (`mailbox audit`, `mailbox projections`).
 * A bad value is a StartupError, whose message `mailbox serve` prints as its one line; these commands caught it as
 * an unknown failure and printed {"error":"Audit failed","code":"INTERNAL"} (or "Projections command failed") around
 * it, so a configuration error read as a bug of the mailbox. It is now what it is: the VALIDATION_FAILED envelope,
 * 'Invalid configuration', with serve's message for the same environment and the variable as `field` (exit code 2,
 * as serve's). `stores`: the command opens the configured stores, whose names are checked as serve checks them
 * (an event store URL that names no log was opened anyway and failed as 'unable to open database file').
 */
import { configFromEnv, type MailboxConfig } from '../../config';
import { MailboxError } from '../../errors';
import { checkStoreNames } from '../../startupChecks';
import { isStartupError } from '../../startupError';

export function commandConfig(env: NodeJS.ProcessEnv, { stores = true }: { stores?: boolean } = {}): MailboxConfig {
  try {
    const config = configFromEnv(env);
    if (stores) checkStoreNames(config);
    return config;
  } catch (error) {
    if (!isStartupError(error)) throw error;
    const { variable, ...details } = error.details;
    throw new MailboxError('VALIDATION_FAILED', 'Invalid configuration', error.message, {
      ...(variable === undefined ? {} : { field: variable }),
      ...details,
    });
  }
}
