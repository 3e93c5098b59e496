/**
 * The list query as callers send it (DESIGN section 4). A filter that does not
 * apply to the chosen box is rejected, never silently ignored (seed 003: lossy
 * input -> loud error). The cursor stays opaque here: MailboxQueries checks it
 * against the listing (cursorCodec.ts) before the store sees a position.
 */
import { z } from 'zod';
import { pageSize } from '../commands/numberFields';
import { pageCursor } from '../commands/pageCursor';
import { MailboxError } from '../errors';
import { prioritySchema, tagListSchema } from '../commands/messageFields';
import { identityRefused, identitySchema } from '../commands/schemas';
import { threadIdSchema } from '../commands/threadIds';
import { BROADCAST, IDENTITY_PATTERN } from '../commands/recipients';
import { parseInput } from '../commands/validation';
import type { ListBox, ListQuery } from '../projections/listQuery';

/**
 * The outbox's `to` names what a send's `to` holds: one identity (alone or in a list) or the broadcast.
 * Any other value matches no message, so it is refused with the forms, never answered with an empty page
 * (`to=bob` would read as "you never wrote to bob").
 */
const recipientFilterSchema = z
  .string()
  .refine((value) => value === BROADCAST || IDENTITY_PATTERN.test(value), {
    error: (issue) =>
      `must be one recipient: an @identity (e.g. @neo-gpt; also matches the lists that include it) or the literal ` +
      `${BROADCAST} (your broadcasts); not a list or comma-separated text${identityRefused(issue.input)}`,
  })
  // The advertised schema (OpenAPI, tools/list) says the same as the check.
  .meta({ pattern: '^(?:@[A-Za-z0-9_-]{1,64}|AGENT:\\*)$' });

/** A thread id as a send takes it (a message id or a named thread, threadIds.ts): nothing else matches. */
const threadFilterSchema = threadIdSchema;

export const CURSOR_DESCRIPTION =
  'Opaque: pass `nextCursor` from the previous page unchanged, with the same box and filters, as the ' +
  'same caller. A cursor is bound to the listing that issued it (signed by the server); used with another box, other filters, ' +
  'by another caller, or altered, it is refused with 400 CURSOR_MISMATCH: start again without a cursor. `limit` may change between pages.';

export const listQuerySchema = z.strictObject({
  box: z.enum(['inbox', 'outbox']).default('inbox'),
  status: z.enum(['unread', 'read', 'all', 'archived']).optional(),
  from: identitySchema.optional(),
  to: recipientFilterSchema.optional(),
  threadId: threadFilterSchema.optional(),
  tags: tagListSchema.optional(), // as a send takes them (messageFields.ts): one rule, every form
  priority: prioritySchema.optional(),
  limit: pageSize(200, 50),
  cursor: pageCursor(CURSOR_DESCRIPTION),
});
export type ParsedListQuery = z.output<typeof listQuerySchema>;

export const APPLICABLE_FILTERS: Record<ListBox, readonly string[]> = {
  inbox: ['status', 'from', 'threadId', 'tags', 'priority', 'limit', 'cursor'],
  outbox: ['to', 'threadId', 'tags', 'priority', 'limit', 'cursor'],
};

export function parseListQuery(input: unknown): ParsedListQuery {
  const query = parseInput(listQuerySchema, input ?? {}, 'list_messages');
  // A key whose value is undefined was not given (library callers spread optional fields).
  const given = Object.entries(input ?? {})
    .filter(([key, value]) => key !== 'box' && value !== undefined)
    .map(([key]) => key);
  const applicable = APPLICABLE_FILTERS[query.box];
  const inapplicable = given.filter((key) => !applicable.includes(key));
  if (inapplicable.length > 0) {
    throw new MailboxError(
      'FILTER_NOT_APPLICABLE',
      'Filter not applicable',
      `Filter '${inapplicable[0]}' does not apply to box=${query.box}; applicable filters for box=${query.box}: ` +
        `${applicable.join(', ')}.`,
      { filter: inapplicable[0], box: query.box, applicable },
    );
  }
  return query;
}

/** The store's query: the parsed filters and limit, with the position bound the cursor stood for. */
export function viewQuery({ cursor: _cursor, ...query }: ParsedListQuery, before: bigint | null): ListQuery {
  return { ...query, before };
}

/**
 * What a cursor is bound to besides its caller: the box and every filter, in one fixed order, tags as a set
 * (`ops,db` and `db,ops` list the same), status `all` as no status (the inbox's default: the same listing). Not the
 * limit: a caller may change the page size between pages.
 */
export function listingOf(query: ParsedListQuery): unknown[] {
  return [
    query.box,
    query.status === 'all' ? null : (query.status ?? null),
    query.from ?? null,
    query.to ?? null,
    query.threadId ?? null,
    query.tags ? [...new Set(query.tags)].sort() : null,
    query.priority ?? null,
  ];
}
