/**
 * Connection settings read from the connection string, with defaults that make
 * a dead or unreachable server fail fast instead of hanging a command:
 *
 * - `defaultDeadline` (ms, default 5000): every call (append, read, catch-up
 *   page) must finish, or for reads make progress, within it; else UNAVAILABLE.
 * - `keepAliveInterval` / `keepAliveTimeout` (ms, default 10000 each, the
 *   client's recommended minimum): gRPC HTTP/2 pings on idle connections, so a
 *   silently dropped connection (NAT, load balancer, crashed node) is noticed
 *   and a long-lived subscription does not wait forever on a dead socket.
 *
 * Missing ones are added to the string the client parses, so the client and
 * the adapter agree on them.
 */
import { MailboxError } from '../../errors';

export interface EsdbSettings {
  connectionString: string;
  deadlineMs: number;
}

const DEFAULTS: Record<string, number> = { defaultDeadline: 5000, keepAliveInterval: 10_000, keepAliveTimeout: 10_000 };

/** The client matches option keys case-insensitively and ignores '-' and '_'. */
const flat = (key: string) => key.toLowerCase().replace(/[-_]/g, '');

export function esdbSettings(url: string): EsdbSettings {
  const queryStart = url.indexOf('?');
  const query = new URLSearchParams(queryStart < 0 ? '' : url.slice(queryStart + 1));
  const given = new Map([...query.entries()].map(([key, value]) => [flat(key), value]));
  const added = Object.entries(DEFAULTS)
    .filter(([key]) => !given.has(flat(key)))
    .map(([key, value]) => `${key}=${value}`);
  const connectionString = added.length === 0 ? url : `${url}${queryStart < 0 ? '?' : '&'}${added.join('&')}`;
  const deadline = Number(given.get(flat('defaultDeadline')) ?? DEFAULTS.defaultDeadline);
  if (!Number.isInteger(deadline) || deadline <= 0) {
    throw new MailboxError(
      'VALIDATION_FAILED',
      'Invalid configuration',
      `MAILBOX_EVENTSTORE_URL: defaultDeadline must be a positive number of milliseconds, got '${given.get(flat('defaultDeadline'))}'.`,
      { field: 'MAILBOX_EVENTSTORE_URL' },
    );
  }
  return { connectionString, deadlineMs: deadline };
}
