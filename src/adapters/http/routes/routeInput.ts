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
  throw new MailboxError('VALIDATION_FAILED', 'Validation failed',
    `${what} needs a JSON body, e.g. ${example}, sent with Content-Type: application/json.`, { field: 'body' });
}
