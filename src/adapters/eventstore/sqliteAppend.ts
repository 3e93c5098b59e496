/**
 * One append's SQL, run inside the caller's transaction and savepoint
 * ("append"). The common case costs one INSERT per event; anything unusual
 * is settled by the checked path, which decides exactly as a careful append
 * would: a repeat of an append that landed -> its original result; a stale
 * expected revision -> ConcurrencyConflict; otherwise the store's error.
 */
import { ConcurrencyConflict } from '../../errors';
import { describeExpected, type AppendResult, type ExpectedRevision } from '../../events/eventStore';
import type { NewEvent } from '../../events/types';
import type { EventRow, EventStatements } from './sqliteStatements';

const isUniqueViolation = (error: unknown): boolean => (error as { code?: unknown } | null)?.code === 'SQLITE_CONSTRAINT_UNIQUE';

/**
 * Optimistic: a new stream ('no_stream') needs no look-up first, because
 * UNIQUE(stream, revision) refuses revision 0 of an existing stream and
 * UNIQUE(event_id) a repeated event; a bigint expectation needs only the
 * stream's last revision. A refusal is rolled back to the savepoint and
 * handed to the checked path.
 */
export function appendEvents(
  sql: EventStatements,
  stream: string,
  events: readonly NewEvent[],
  expected: ExpectedRevision,
): AppendResult {
  if (events.length === 0 || expected === 'any') return appendChecked(sql, stream, events, expected);
  let last = -1;
  if (expected !== 'no_stream') {
    const actual = (sql.lastRevision.get(stream) as { revision: number | null }).revision;
    if (actual === null || BigInt(actual) !== expected) return appendChecked(sql, stream, events, expected);
    last = actual;
  }
  try {
    return insertEvents(sql, stream, events, last);
  } catch (error) {
    if (!isUniqueViolation(error)) throw error;
    sql.rollbackTo.run(); // undo this append's partial inserts; its savepoint stays open
    return appendChecked(sql, stream, events, expected);
  }
}

/** Duplicate check, then the expected revision, then the inserts. */
function appendChecked(
  sql: EventStatements,
  stream: string,
  events: readonly NewEvent[],
  expected: ExpectedRevision,
): AppendResult {
  const duplicate = findDuplicate(sql, stream, events);
  if (duplicate) return duplicate;
  const row = sql.lastRevision.get(stream) as { revision: number | null };
  const actual = row.revision === null ? 'no_stream' : BigInt(row.revision);
  const matches = expected === 'any' || (expected === 'no_stream' ? actual === 'no_stream' : actual === expected);
  if (!matches) throw new ConcurrencyConflict(stream, describeExpected(expected), String(actual));
  return insertEvents(sql, stream, events, row.revision === null ? -1 : row.revision);
}

function insertEvents(sql: EventStatements, stream: string, events: readonly NewEvent[], lastRevision: number): AppendResult {
  let revision = lastRevision;
  let position = 0n;
  for (const event of events) {
    revision++;
    const info = sql.insert.run(
      event.eventId,
      stream,
      revision,
      event.type,
      JSON.stringify(event.data),
      JSON.stringify(event.metadata),
    );
    position = BigInt(info.lastInsertRowid);
  }
  return { nextExpectedRevision: BigInt(revision), position };
}

/** A retry of an append that already landed: same ids, consecutive, in this stream. */
function findDuplicate(sql: EventStatements, stream: string, events: readonly NewEvent[]): AppendResult | null {
  if (events.length === 0) return null;
  const first = sql.byEventId.get(events[0].eventId) as { stream: string; revision: number; position: number } | undefined;
  if (!first) return null;
  if (first.stream !== stream) throw new Error(`Event id ${events[0].eventId} already exists in stream ${first.stream}`);
  const stored = sql.readStream.all(stream, first.revision) as EventRow[];
  if (stored.length < events.length || events.some((event, i) => stored[i].event_id !== event.eventId)) return null;
  const last = stored[events.length - 1];
  return { nextExpectedRevision: BigInt(last.revision), position: BigInt(last.position) };
}
