/**
 * --limit, checked as typed before the request: the server's own page-size rule (plain decimal digits, its range),
 * refused naming '--limit'. Sent as it was, the server's refusal named its field, 'limit', and the request
 * ('list_messages'), neither of which the user typed.
 */
import { z } from 'zod';
import { parseInput } from '../../commands/validation';

/** Refuses `limit` (the flag's text) unless `pageSize` (the server's field) takes it; `command` as the user typed it. */
export function checkLimitFlag(limit: string | undefined, pageSize: z.ZodType, command: string): void {
  if (limit === undefined) return;
  parseInput(z.strictObject({ '--limit': pageSize }), { '--limit': limit }, command);
}
