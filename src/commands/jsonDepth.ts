/**
 * The nesting limit of every JSON input (HTTP bodies, MCP tool arguments, JSON
 * sent inside a string field). Checked before validation: deeper structures
 * would overflow the stack of recursive validators and serializers, and no
 * field of this API needs more than a few levels of its own.
 */
import { MailboxError } from '../errors';

export const MAX_JSON_DEPTH = 32;

/** The path (keys and indexes) to the first container deeper than `limit` levels, or null. Iterative: safe at any depth. */
export function pathBeyondDepth(value: unknown, limit = MAX_JSON_DEPTH): Array<string | number> | null {
  const stack: Array<{ value: unknown; depth: number; path: Array<string | number> }> = [{ value, depth: 1, path: [] }];
  while (stack.length > 0) {
    const { value: node, depth, path } = stack.pop()!;
    if (node === null || typeof node !== 'object') continue;
    if (depth > limit) return path;
    const entries: Array<[string | number, unknown]> = Array.isArray(node) ? node.map((v, i) => [i, v]) : Object.entries(node);
    for (const [key, child] of entries) {
      if (child !== null && typeof child === 'object') stack.push({ value: child, depth: depth + 1, path: [...path, key] });
    }
  }
  return null;
}

/** A JSON path as error envelopes name it (`field`): keys and indexes joined by dots, after `prefix`. */
export const jsonField = (path: Array<string | number>, prefix: Array<string | number> = []): string =>
  [...prefix, ...path].map(String).join('.');

export const tooDeep = (
  path: Array<string | number>,
  prefix: Array<string | number> = [],
  limit = MAX_JSON_DEPTH,
): MailboxError => {
  const field = jsonField(path, prefix);
  return new MailboxError(
    'VALIDATION_FAILED',
    'Validation failed',
    `'${field || '(root)'}' is nested deeper than the limit of ${limit} levels; flatten the structure or send it as a string.`,
    { field, limit },
  );
};

/** Throws VALIDATION_FAILED when `value` is nested deeper than `limit` levels. */
export function assertJsonDepth(value: unknown, prefix: Array<string | number> = [], limit = MAX_JSON_DEPTH): void {
  const path = pathBeyondDepth(value, limit);
  if (path) throw tooDeep(path, prefix, limit);
}
