/**
 * The size limit of a task's content: the A2A envelope of a send (input parts, metadata, ...) and the artifacts of a
 * completion, counted as the UTF-8 bytes of their JSON, which is what the event stores and every read returns. Bounded
 * otherwise only by the HTTP request limit (320 KiB by default) and, through the library, by nothing.
 */
import type { z } from 'zod';

/**
 * 64 KiB, as a message body by default (MAILBOX_MAX_BODY_BYTES): a task carries content of the same kind, and larger
 * content is linked to (a file part's uri), not carried. A send with a body and a task both at their limit fits the
 * default request limit (4 x the body limit + 64 KiB) unless its body needs escaping in JSON.
 */
export const MAX_TASK_BYTES = 64 * 1024;

export const jsonBytes = (value: unknown): number => Buffer.byteLength(JSON.stringify(value) ?? '', 'utf8');

/** The path (below `value`) of the member holding most of its bytes, followed while one member holds over half. */
function heaviestPath(value: unknown, bytes: number): { path: Array<string | number>; bytes: number } {
  const heaviest = { path: [] as Array<string | number>, bytes };
  let node = value;
  while (node !== null && typeof node === 'object') {
    let next: { key: string | number; value: unknown; bytes: number } | null = null;
    const entries: Array<[string | number, unknown]> = Array.isArray(node) ? node.map((v, i) => [i, v]) : Object.entries(node);
    for (const [key, child] of entries) {
      const size = jsonBytes(child);
      if (next === null || size > next.bytes) next = { key, value: child, bytes: size };
    }
    if (next === null || next.bytes * 2 <= bytes) break;
    heaviest.path.push(next.key);
    heaviest.bytes = next.bytes;
    node = next.value;
  }
  return heaviest;
}

/** A refinement holding the value at `field` to `limit` bytes of JSON, naming its size, the limit and where the bulk is. */
export const withinJsonBytes =
  (field: string, limit = MAX_TASK_BYTES) =>
  (value: unknown, ctx: z.RefinementCtx): void => {
    const bytes = jsonBytes(value);
    if (bytes <= limit) return;
    const heaviest = heaviestPath(value, bytes);
    const where =
      heaviest.path.length > 0 ? `, most of it in '${[field, ...heaviest.path].join('.')}' (${heaviest.bytes} bytes)` : '';
    ctx.addIssue({
      code: 'custom',
      message:
        `is ${bytes} bytes as JSON; the limit is ${limit} bytes (${limit / 1024} KiB)${where}: shorten it, or put the ` +
        "content elsewhere and link to it (a file part's uri).",
      params: { bytes, limit },
    });
  };
