/**
 * The list query (DESIGN section 4). A filter that does not apply to the chosen
 * box is rejected, never silently ignored (seed 003: lossy input -> loud error).
 */
import { z } from 'zod';
import { MailboxError } from '../errors';
import { prioritySchema } from '../commands/messageFields';
import { identitySchema } from '../commands/schemas';
import { parseInput } from '../commands/validation';

/** A list as an array, a JSON-encoded array or comma-separated text; malformed JSON is a 400, never a crash. */
const csvOrArray = z.preprocess((value, ctx) => {
  if (typeof value !== 'string') return value;
  if (!value.trim().startsWith('[')) return value.split(',');
  try {
    return JSON.parse(value);
  } catch {
    ctx.addIssue({ code: 'custom', message: 'starts with [ but is not a valid JSON array; send a JSON array or comma-separated values.' });
    return z.NEVER;
  }
}, z.array(z.string().min(1)).max(32));

export const listQuerySchema = z.strictObject({
  box: z.enum(['inbox', 'outbox']).default('inbox'),
  status: z.enum(['unread', 'read', 'all']).optional(),
  from: identitySchema.optional(),
  to: z.string().optional(),
  threadId: z.string().optional(),
  tags: csvOrArray.optional(),
  priority: prioritySchema.optional(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
  cursor: z.string().optional(),
});
export type ListQuery = z.output<typeof listQuerySchema>;

export const APPLICABLE_FILTERS: Record<ListQuery['box'], readonly string[]> = {
  inbox: ['status', 'from', 'threadId', 'tags', 'priority', 'limit', 'cursor'],
  outbox: ['to', 'threadId', 'tags', 'priority', 'limit', 'cursor'],
};

export function parseListQuery(input: unknown): ListQuery {
  const query = parseInput(listQuerySchema, input ?? {}, 'list_messages');
  // A key whose value is undefined was not given (library callers spread optional fields).
  const given = Object.entries(input ?? {}).filter(([key, value]) => key !== 'box' && value !== undefined).map(([key]) => key);
  const applicable = APPLICABLE_FILTERS[query.box];
  const inapplicable = given.filter((key) => !applicable.includes(key));
  if (inapplicable.length > 0) {
    throw new MailboxError('FILTER_NOT_APPLICABLE', 'Filter not applicable',
      `Filter '${inapplicable[0]}' does not apply to box=${query.box}; applicable filters for box=${query.box}: ` +
      `${applicable.join(', ')}.`, { filter: inapplicable[0], box: query.box, applicable });
  }
  return query;
}

/** Cursors are opaque to callers: the log position of the last entry returned. */
export const encodeCursor = (position: bigint): string => Buffer.from(position.toString()).toString('base64url');

export function decodeCursor(cursor: string | undefined): bigint | null {
  if (cursor === undefined) return null;
  const text = Buffer.from(cursor, 'base64url').toString();
  if (!/^\d+$/.test(text)) {
    throw new MailboxError('VALIDATION_FAILED', 'Validation failed',
      "'cursor' is not a cursor this server issued; pass nextCursor from the previous page unchanged.", { field: 'cursor' });
  }
  return BigInt(text);
}
