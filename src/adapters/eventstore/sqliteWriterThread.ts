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
 *
 * Before each COMMIT the thread checks that the log's file (and, once there is one, its WAL) is still the one it
 * opened: deleted, moved or replaced under a running server, SQLite goes on writing into the file it holds open,
 * which is no longer at its path, and every event acknowledged after that is gone at the next start. A group that
 * finds it so is rolled back and answered SQLITE_READONLY_DBMOVED (SQLite's own code for a database file moved
 * since it was opened; it checks only when it creates a rollback journal, never in WAL mode): nothing is
 * acknowledged into a file nobody will open again. One stat per file per group commit.
 */
export const WRITER_THREAD_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const fs = require('node:fs');
const Database = require(workerData.driver);
const db = new Database(workerData.file);
db.pragma('synchronous = FULL');
/** The files this connection writes, as [path, identity at open]; the WAL's is taken once it exists. */
const identityOf = (path) => {
  const stat = fs.statSync(path, { throwIfNoEntry: false });
  return stat === undefined ? null : stat.dev + ':' + stat.ino;
};
const opened = { log: identityOf(workerData.file), wal: null };
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

class Moved extends Error {
  constructor(path) {
    super('the event log file ' + path + ' was deleted, moved or replaced while the server ran: it is no longer the file this server writes; restart the server to open the log at that path');
    this.code = 'SQLITE_READONLY_DBMOVED';
  }
}

/** Throws Moved when the log's file (or its WAL, once it had one) is no longer the one this connection holds. */
function checkStillInPlace() {
  if (identityOf(workerData.file) !== opened.log) throw new Moved(workerData.file);
  const wal = workerData.file + '-wal';
  if (opened.wal === null) opened.wal = identityOf(wal);
  else if (identityOf(wal) !== opened.wal) throw new Moved(wal);
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
    checkStillInPlace();
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
