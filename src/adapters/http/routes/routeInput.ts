/** Route input rules that sit beside the command schemas: a required body, and no input a route would ignore. */
import { z } from 'zod';
import { parseInput } from '../../../commands/validation';
import { MailboxError } from '../../../errors';

const nothing = z.strictObject({});

/** Routes whose whole input is the path refuse a body or query they would otherwise ignore. */
export function noExtraInput(value: unknown, what: string): void {
  if (value === undefined || value === null) return;
  parseInput(nothing, value, what);
}

export function requireBody(body: unknown, what: string, example: string): unknown {
  if (body !== undefined) return body;
  throw new MailboxError(
    'VALIDATION_FAILED',
    'Validation failed',
    `${what} needs a JSON body, e.g. ${example}, sent with Content-Type: application/json.`,
    { field: 'body' },
  );
}

/**
 * The query parser turns `?status=unread&status=read` into an array; a
 * parameter that takes one value says it was repeated (rather than failing on
 * an array nobody sent). List parameters (`tags`) may repeat: each is one item.
 */
export function singleValuedQuery(query: unknown, listParameters: readonly string[], what: string): unknown {
  if (!query || typeof query !== 'object') return query;
  for (const [name, value] of Object.entries(query)) {
    if (!Array.isArray(value) || listParameters.includes(name)) continue;
    throw new MailboxError(
      'VALIDATION_FAILED',
      'Validation failed',
      `${what}: the query parameter '${name}' was repeated (${value.map((v) => `${name}=${String(v)}`).join('&')}); give it once.`,
      { field: name, values: value },
    );
  }
  return query;
}
