/**
 * The SQLite event store's writing connection, in a worker thread
 * (sqliteWriter.ts starts it): one message is one group commit, one
 * IMMEDIATE transaction with a savepoint per append, answered once the COMMIT
 * (synchronous=FULL: fsynced) has returned. Its fsync, and the occasional
 * checkpoint of its own, no longer stop the event loop.
 *
 * One append's rules (the common case costs one INSERT per event):
 * optimistic, a new stream ('no_stream') needs no look-up first because
 * UNIQUE(stream, revision) refuses revision 0 of an existing stream and
 * UNIQUE(event_id) a repeated event; a revision expectation needs only the
 * stream's last revision. A refusal is rolled back to the savepoint and
 * settled by the checked path, which decides exactly as a careful append
 * would: a repeat of an append that landed -> its original result; a stale
 * expected revision -> a conflict; an event id used in another stream -> an
 * error; otherwise the store's error.
 *
 * Messages in: {kind: 'commit', id, appends: [{stream, events: [[eventId, type, data, metadata]], expected}]}
 * (data and metadata as JSON text; expected 'any', 'no_stream' or the revision in decimal),
 * {kind: 'limit', pages} (wal_autocheckpoint), {kind: 'close'}.
 * Out: {id, outcomes: [{ok: true, revision, position, fresh} | {ok: false, error}]} or {id, failed: error}
 * (fresh: true when this append inserted its rows now, at consecutive positions; false when it repeated an append
 * that had landed, whose result it answers)
 * (BEGIN or COMMIT failed: nothing of the group is written); error = {conflict: actual} | {message, code, name}.
 * Plain JS (eval'd), so that it runs the same from compiled output and under ts-jest.
 */
export const WRITER_THREAD_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.file);
db.pragma('synchronous = FULL');
db.pragma('busy_timeout = 5000');
db.pragma('wal_autocheckpoint = ' + Number(workerData.checkpointPages));
const sql = {
  lastRevision: db.prepare('SELECT MAX(revision) AS revision FROM events WHERE stream = ?'),
  byEventId: db.prepare('SELECT stream, revision, position FROM events WHERE event_id = ?'),
  insert: db.prepare('INSERT INTO events (event_id, stream, revision, type, data, metadata) VALUES (?, ?, ?, ?, ?, ?)'),
  streamFrom: db.prepare('SELECT event_id, revision, position FROM events WHERE stream = ? AND revision >= ? ORDER BY revision'),
  begin: db.prepare('BEGIN IMMEDIATE'),
  commit: db.prepare('COMMIT'),
  rollback: db.prepare('ROLLBACK'),
  savepoint: db.prepare('SAVEPOINT append'),
  release: db.prepare('RELEASE append'),
  rollbackTo: db.prepare('ROLLBACK TO append'),
};

class Conflict {
  constructor(actual) {
    this.actual = actual;
  }
}
const isUniqueViolation = (error) => Boolean(error) && error.code === 'SQLITE_CONSTRAINT_UNIQUE';
const describe = (error) =>
  error instanceof Conflict
    ? { conflict: error.actual }
    : { message: String((error && error.message) || error), code: error && error.code, name: error && error.name };

function append(request) {
  const { stream, events, expected } = request;
  if (events.length === 0 || expected === 'any') return appendChecked(request);
  let last = -1;
  if (expected !== 'no_stream') {
    const actual = sql.lastRevision.get(stream).revision;
    if (actual === null || String(actual) !== expected) return appendChecked(request);
    last = actual;
  }
  try {
    return insertEvents(stream, events, last);
  } catch (error) {
    if (!isUniqueViolation(error)) throw error;
    sql.rollbackTo.run(); // undo this append's partial inserts; its savepoint stays open
    return appendChecked(request);
  }
}

/** Duplicate check, then the expected revision, then the inserts. */
function appendChecked({ stream, events, expected }) {
  const duplicate = findDuplicate(stream, events);
  if (duplicate) return duplicate;
  const row = sql.lastRevision.get(stream);
  const actual = row.revision === null ? 'no_stream' : String(row.revision);
  if (expected !== 'any' && actual !== expected) throw new Conflict(actual);
  return insertEvents(stream, events, row.revision === null ? -1 : row.revision);
}

function insertEvents(stream, events, lastRevision) {
  let revision = lastRevision;
  let position = 0;
  let first = 0;
  for (const [eventId, type, data, metadata] of events) {
    revision++;
    position = Number(sql.insert.run(eventId, stream, revision, type, data, metadata).lastInsertRowid);
    if (first === 0) first = position;
  }
  // fresh: these rows were inserted now, at consecutive positions (checked, not assumed)
  return { revision, position, fresh: events.length > 0 && position - first + 1 === events.length };
}

/** A retry of an append that already landed: same ids, consecutive, in this stream. */
function findDuplicate(stream, events) {
  if (events.length === 0) return null;
  const first = sql.byEventId.get(events[0][0]);
  if (!first) return null;
  if (first.stream !== stream) throw new Error('Event id ' + events[0][0] + ' already exists in stream ' + first.stream);
  const stored = sql.streamFrom.all(stream, first.revision);
  if (stored.length < events.length || events.some((event, i) => stored[i].event_id !== event[0])) return null;
  const last = stored[events.length - 1];
  return { revision: last.revision, position: last.position, fresh: false };
}

function appendInSavepoint(request) {
  sql.savepoint.run();
  try {
    const result = append(request);
    sql.release.run();
    return { ok: true, revision: result.revision, position: result.position, fresh: result.fresh };
  } catch (error) {
    sql.rollbackTo.run();
    sql.release.run();
    return { ok: false, error: describe(error) };
  }
}

parentPort.on('message', (message) => {
  if (message.kind === 'close') {
    db.close();
    parentPort.close();
    return;
  }
  if (message.kind === 'limit') {
    db.pragma('wal_autocheckpoint = ' + Number(message.pages));
    return;
  }
  let outcomes;
  try {
    sql.begin.run();
    outcomes = message.appends.map(appendInSavepoint);
    sql.commit.run();
  } catch (error) {
    try {
      if (db.inTransaction) sql.rollback.run();
    } catch {}
    parentPort.postMessage({ id: message.id, failed: describe(error) });
    return;
  }
  parentPort.postMessage({ id: message.id, outcomes });
});`;
