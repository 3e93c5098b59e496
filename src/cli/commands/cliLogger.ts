/**
 * The CLI's logger: human lines (pino-pretty) when the log goes to a terminal, JSON lines
 * otherwise (files, docker, log shippers); MAILBOX_LOG_FORMAT=json|pretty forces one.
 * Both write synchronously, so the shutdown lines come out in order before the process exits.
 */
import type * as Pino from 'pino';
import type { Logger } from 'pino';
import type * as PinoPretty from 'pino-pretty';
import type { MailboxConfig } from '../../config';

export interface CliLoggerOptions {
  name: string;
  config: Pick<MailboxConfig, 'logLevel' | 'logFormat'>;
  /** stderr where stdout carries a result (heartbeat --once prints its report there). */
  fd?: 1 | 2;
}

export function cliLogger({ name, config, fd = 1 }: CliLoggerOptions): Logger {
  const tty = Boolean((fd === 1 ? process.stdout : process.stderr).isTTY);
  const human = config.logFormat === 'pretty' || (config.logFormat === 'auto' && tty);
  const options = { level: config.logLevel, name };
  // Loaded when a logger is made, not with the command: a start refused at its settings (serve's MAILBOX_PORT=abc,
  // before any logger) does not pay its load.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { pino } = require('pino') as typeof Pino;
  if (!human) return pino(options, pino.destination({ fd, sync: true }));
  // Loaded for human lines only: a JSON log (a service, a pipe, a test) does not pay its load.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const pretty = (require('pino-pretty') as typeof PinoPretty).default;
  return pino(
    options,
    pretty({
      destination: fd,
      sync: true,
      colorize: tty,
      singleLine: true,
      translateTime: 'SYS:HH:MM:ss.l',
      ignore: 'pid,hostname',
    }),
  );
}
