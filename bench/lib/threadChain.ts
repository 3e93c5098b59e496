/**
 * What the embedded default's threads cost one caller with no mailbox work at all: the floor of a sequential durable
 * send in this design, measured on this machine now. A message to a writer thread that commits one append into a log
 * file of the log's schema (WAL, synchronous=FULL, a savepoint, one INSERT: the ~5 WAL frames a send's commit writes),
 * its answer, then a message to a views thread that commits one transaction into a views file (WAL,
 * synchronous=NORMAL, as many WAL frames as a direct send's views transaction writes: ~14, counted with strace as
 * 27.5 pwrite calls per transaction, a header and a page per frame), and its answer. Same binding as the mailbox's
 * files (support/sqlite/sqliteDriver.ts), no decision, no validation, no projection, nothing serialized but a few
 * strings.
 *
 * And the same with the two threads overlapped, as designed in issue 9 and not built: the views thread writes its
 * transaction while the log's is on its way to disk and commits it only on the writer's word that the log's COMMIT
 * returned (a channel between the two threads), so the caller waits for the slower of the two, not for both. The
 * views thread here has its rows at once; a real one would wait for the writer's positions first, so this is a
 * lower bound of what the overlap gains.
 *
 * Why: a sequential send's target is a ratio of the raw fsync floor (issue 9). The difference between these and the
 * sequential send of the same run is the mailbox's own work on the threads one caller waits for, which no change to
 * the threads' plumbing removes; these say how much of the target that plumbing leaves for it.
 */
import path from 'node:path';
import { MessageChannel, Worker } from 'node:worker_threads';
import { defaultSqliteDriver } from '../../src/support/sqlite/sqliteDriver';
import { summarize } from './stats';
import { nowMs } from './timing';
import { withTmpDir } from './tmp';

/** Tables (each with one index) a views transaction inserts a row into: two WAL frames each. */
const VIEW_TABLES = 7;

const LOG_SCHEMA = `CREATE TABLE IF NOT EXISTS events (position INTEGER PRIMARY KEY AUTOINCREMENT, event_id TEXT NOT NULL UNIQUE,
  stream TEXT NOT NULL, revision INTEGER NOT NULL, type TEXT NOT NULL, data TEXT NOT NULL, metadata TEXT NOT NULL,
  UNIQUE (stream, revision));`;
const VIEWS_SCHEMA = Array.from(
  { length: VIEW_TABLES },
  (_, i) =>
    `CREATE TABLE IF NOT EXISTS t${i} (id INTEGER PRIMARY KEY, k TEXT NOT NULL, v TEXT NOT NULL); CREATE INDEX IF NOT EXISTS t${i}_k ON t${i}(k);`,
).join('\n');

/**
 * One thread, one file. In: {port} (the channel between the writer and the views thread), then {seq, id, data, meta,
 * overlap}. The writer commits and, when overlapping, tells the views thread through the channel; the views thread,
 * when overlapping, commits once the writer has told it that this seq is durable. Each answers {seq} when committed.
 */
const THREAD = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.file);
db.pragma('journal_mode = WAL');
db.pragma('synchronous = ' + (workerData.kind === 'log' ? 'FULL' : 'NORMAL'));
db.exec(workerData.schema);
const begin = db.prepare('BEGIN IMMEDIATE');
const commit = db.prepare('COMMIT');
let write;
if (workerData.kind === 'log') {
  const savepoint = db.prepare('SAVEPOINT append');
  const release = db.prepare('RELEASE append');
  const insert = db.prepare('INSERT INTO events (event_id, stream, revision, type, data, metadata) VALUES (?, ?, ?, ?, ?, ?)');
  write = (m) => {
    savepoint.run();
    insert.run(m.id, 'stream-' + m.id, 0, 'MessageSent', m.data, m.meta);
    release.run();
  };
} else {
  const inserts = [];
  for (let i = 0; i < workerData.tables; i++) inserts.push(db.prepare('INSERT INTO t' + i + ' (k, v) VALUES (?, ?)'));
  write = (m) => {
    for (const insert of inserts) insert.run(m.id, m.data.slice(0, 120));
  };
}
let channel = null;
const durable = new Set();
let held = null;
const done = (seq) => {
  commit.run();
  parentPort.postMessage({ seq });
};
parentPort.on('message', (m) => {
  if (m.port) {
    channel = m.port;
    channel.on('message', ({ seq }) => {
      if (held !== null && held === seq) {
        held = null;
        done(seq);
      } else durable.add(seq);
    });
    return;
  }
  begin.run();
  write(m);
  if (!m.overlap) return done(m.seq);
  if (workerData.kind === 'log') {
    commit.run();
    channel.postMessage({ seq: m.seq });
    parentPort.postMessage({ seq: m.seq });
  } else if (durable.delete(m.seq)) done(m.seq);
  else held = m.seq;
});`;

export interface ThreadChainFigures {
  /** Log commit on the writer thread, then views commit on the views thread, one after the other: p50, ms. */
  serialP50: number;
  /** The two overlapped (the views transaction committed on the log's word): p50, ms. */
  overlappedP50: number;
}

/** `rounds` alternations of `perRound` serial then `perRound` overlapped operations, back to back as the bench's sends. */
export function threadChainFloor(rounds = 4, perRound = 100): Promise<ThreadChainFigures> {
  return withTmpDir(async (dir) => {
    const driver = require.resolve(defaultSqliteDriver());
    const start = (kind: 'log' | 'views', schema: string) =>
      new Worker(THREAD, {
        eval: true,
        workerData: { kind, schema, driver, tables: VIEW_TABLES, file: path.join(dir, `${kind}.sqlite`) },
      });
    const writer = start('log', LOG_SCHEMA);
    const views = start('views', VIEWS_SCHEMA);
    try {
      const channel = new MessageChannel();
      writer.postMessage({ port: channel.port1 }, [channel.port1]);
      views.postMessage({ port: channel.port2 }, [channel.port2]);
      const answer = (worker: Worker) => new Promise<void>((resolve) => worker.once('message', () => resolve()));
      const data = JSON.stringify({ subject: 's', body: 'x'.repeat(200), to: ['@agent-00001'], from: '@agent-00000' });
      const meta = JSON.stringify({ actor: '@agent-00000', at: new Date().toISOString() });
      let seq = 0;
      const serial = async () => {
        const message = { seq: ++seq, id: `e${seq}`, data, meta, overlap: false };
        writer.postMessage(message);
        await answer(writer);
        views.postMessage(message);
        await answer(views);
      };
      const overlapped = async () => {
        const message = { seq: ++seq, id: `e${seq}`, data, meta, overlap: true };
        const logged = answer(writer);
        const viewed = answer(views);
        writer.postMessage(message);
        views.postMessage(message);
        await Promise.all([logged, viewed]);
      };
      await serial(); // both threads started and their files created: not measured
      const times: { serial: number[]; overlapped: number[] } = { serial: [], overlapped: [] };
      for (let round = 0; round < rounds; round++) {
        for (const [name, operation] of [
          ['serial', serial],
          ['overlapped', overlapped],
        ] as const) {
          for (let i = 0; i < perRound; i++) {
            const started = nowMs();
            await operation();
            times[name].push(nowMs() - started);
          }
        }
      }
      return { serialP50: summarize(times.serial).p50, overlappedP50: summarize(times.overlapped).p50 };
    } finally {
      await Promise.all([writer.terminate(), views.terminate()]);
    }
  }, 'mailbox-bench-thread-chain-');
}
