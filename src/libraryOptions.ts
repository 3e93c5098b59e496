/**
 * What the library's calls take beside their input: createMailbox's options and a command's options. A key they
 * do not know was ignored, silently: `createMailbox({ datadir: './x' })` opened the default ./data, and
 * `send(input, { idempotency: 'k' })` sent without a key, so that its retry sent the message twice. Each is refused
 * instead (VALIDATION_FAILED, before anything is opened or written), naming the key and the ones that are taken.
 */
import { z } from 'zod';
import { MailboxError } from './errors';
import { editDistance } from './commands/suggestions';
import { pageSize } from './commands/numberFields';
import { parseInput } from './commands/validation';

/** The known key nearest to `key`, when close enough to be a typo (`datadir` -> `dataDir`). */
function nearest(key: string, known: readonly string[]): string | undefined {
  let best: { name: string; distance: number } | undefined;
  for (const name of known) {
    const distance = editDistance(key.toLowerCase(), name.toLowerCase());
    if (!best || distance < best.distance) best = { name, distance };
  }
  if (best && best.distance <= Math.max(1, Math.floor(key.length / 4))) return best.name;
  return known.find((name) => key.length >= 3 && name.toLowerCase().startsWith(key.toLowerCase())); // idempotency
}

export function refuseUnknownKeys(what: string, value: unknown, known: readonly string[], after: string): void {
  if (value === undefined) return;
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new MailboxError(
      'VALIDATION_FAILED',
      'Validation failed',
      `${what} must be an object with some of ${known.join(', ')}, or left out. ${after}`,
      { field: what },
    );
  }
  for (const key of Object.keys(value)) {
    if (known.includes(key)) continue;
    const guess = nearest(key, known);
    throw new MailboxError(
      'UNKNOWN_FIELD',
      'Unknown field',
      `${what} has no option '${key}'${guess ? ` (did you mean '${guess}'?)` : ''}; it takes ${known.join(', ')}. ${after}`,
      { field: key, allowed: [...known] },
    );
  }
}

/** createMailbox's options: the configuration's keys (MailboxConfig), nothing else. */
export function refuseUnknownConfigKeys(input: unknown, known: readonly string[]): void {
  refuseUnknownKeys('createMailbox options', input, known, 'Nothing was opened.');
}

const COMMAND_OPTIONS = ['correlationId', 'idempotencyKey'] as const;

/**
 * A command's options: correlationId; idempotencyKey on a send only (the one write that replays a retry by its key,
 * as over HTTP: any other write given one is refused rather than retried as if it were safe).
 */
export function checkedCommandOptions<O>(method: string, options: O, takesKey: boolean): O {
  const known = takesKey ? COMMAND_OPTIONS : (['correlationId'] as const);
  if (!takesKey && options && typeof options === 'object' && 'idempotencyKey' in options) {
    throw new MailboxError(
      'VALIDATION_FAILED',
      'Validation failed',
      `${method} does not take an idempotencyKey: only send replays a retried call by its key; retried without it, ` +
        'this call is refused or changes nothing a second time, or says what it did (its answer). Nothing was done.',
      { field: 'idempotencyKey' },
    );
  }
  refuseUnknownKeys(`${method} options`, options, known, 'Nothing was done.');
  return options;
}

/** watch's listener: a function of each event ('sync' first, then 'wake', ...); anything else failed at the first event. */
export function checkedListener<F>(emit: F): F {
  if (typeof emit === 'function') return emit;
  throw new MailboxError(
    'VALIDATION_FAILED',
    'Validation failed',
    `watch takes a function called with each wake stream event ('sync' first, then 'wake', ...), not ${
      emit === undefined ? 'nothing' : typeof emit
    }: watch((event) => console.log(event.event, event.data)). No stream was opened.`,
    { field: 'listener' },
  );
}

const auditLimit = z.strictObject({ limit: pageSize(1000, 100) });

/**
 * auditEvents' page, checked as GET /v1/audit/events checks its query. `after` was handed to the log as given: the
 * page's own nextAfter (digits, as the page says it) or a number read nothing ({ events: [], nextAfter: '5' } with
 * events after position 5), 'x' the same, as if the log ended there; a limit of -1 or 10 ** 9 was silently 1 or 1000.
 */
export function checkedAuditPage(after: unknown, limit: unknown): { after: bigint | null; limit: number } {
  const checked = parseInput(auditLimit, { limit }, 'auditEvents').limit;
  if (after === null || after === undefined) return { after: null, limit: checked };
  if (typeof after === 'bigint' && after >= 0n) return { after, limit: checked };
  if (typeof after === 'string' && /^\d+$/.test(after)) return { after: BigInt(after), limit: checked };
  if (typeof after === 'number' && Number.isSafeInteger(after) && after >= 0) return { after: BigInt(after), limit: checked };
  throw new MailboxError(
    'VALIDATION_FAILED',
    'Validation failed',
    `auditEvents: 'after' is a log position, a page's nextAfter as it is ('42') or a bigint (42n), or null for the first ` +
      `page; not ${typeof after === 'string' ? `'${after}'` : typeof after === 'object' ? 'an object' : `the ${typeof after} ${String(after)}`}. Nothing was read.`,
    { field: 'after' },
  );
}
