/** EventStoreDB's write checks as the double applies them: the expected revision, and idempotent repeats. */
export type ExpectedState =
  { kind: 'any' } | { kind: 'no_stream' } | { kind: 'stream_exists' } | { kind: 'revision'; revision: bigint };

interface Identified {
  id: string;
  revision: bigint;
}

/** Whether a stream at `current` (null: no events) satisfies the expectation. */
export function matches(expected: ExpectedState, current: bigint | null): boolean {
  switch (expected.kind) {
    case 'any':
      return true;
    case 'no_stream':
      return current === null;
    case 'stream_exists':
      return current !== null;
    case 'revision':
      return current === expected.revision;
  }
}

/**
 * The idempotency check: when the proposed ids are already the stream's events
 * right after the expected revision (or, for 'any' and 'stream_exists',
 * wherever the first id sits), the write is a repeat: it succeeds without
 * writing and without a position, reporting the revision of the last repeated
 * event. A partial match is not a repeat (the revision check then applies).
 */
export function idempotentRepeat(
  records: readonly Identified[] | undefined,
  expected: ExpectedState,
  events: readonly { id: string }[],
): { kind: 'success'; currentRevision: bigint; position: null } | undefined {
  if (!records || events.length === 0) return undefined;
  let start: number;
  if (expected.kind === 'revision') start = Number(expected.revision + 1n);
  else if (expected.kind === 'no_stream') start = 0;
  else start = records.findIndex((record) => record.id === events[0].id);
  if (start < 0 || start + events.length > records.length) return undefined;
  for (let i = 0; i < events.length; i++) if (records[start + i].id !== events[i].id) return undefined;
  return { kind: 'success', currentRevision: records[start + events.length - 1].revision, position: null };
}
