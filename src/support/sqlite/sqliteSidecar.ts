/**
 * A second connection to a SQLite file, in a worker thread, for work that must
 * not block the event loop: WAL checkpoints (sqliteCheckpointer.ts), of the
 * event log and of the views file, and reading the log ahead during long
 * catch-ups (adapters/eventstore/sqliteReadAhead.ts, the only user of
 * `readAllSql`). Infrastructure shared by the two SQLite adapters: it knows
 * no table of either.
 * Started on first use; if it fails, every request is refused and the
 * callers fall back to doing the work on the main connection.
 */
import { Worker } from 'node:worker_threads';
import { defaultSqliteDriver, type SqliteDriver } from './sqliteDriver';

export type SidecarRequest = { kind: 'checkpoint' } | { kind: 'readAll'; after: number; limit: number };

/**
 * PASSIVE checkpoints in a row, at most. A PASSIVE checkpoint never blocks the writer, but it copies only the frames
 * the WAL held when it began, and SQLite rewinds the WAL (writes from its start again) only for a transaction that
 * begins once every frame is copied. Under a steady stream of commits (64 senders: a views COMMIT every ~2.5 ms, a
 * checkpoint 10-20 ms) one checkpoint never got there: the WAL grew to the writer's own limit
 * (sqliteCheckpointer.ts), whose checkpoint then ran inside a COMMIT, 8-22 ms, about once every 40 views
 * transactions (with that limit out of reach, 4 COMMITs over 8 ms in 1,388 instead of 30-34). Passes that follow
 * each other copy what the commits during the one before added, fewer frames each time, until a pass finds nothing
 * new. Measured with 64 senders in process, same session, interleaved: views COMMITs over 8 ms 30-34 -> 21-28 per
 * 1,388, views apply p99 18-20 -> 12-14 ms; bench core/sendThroughput p99 22.2-23.3 -> 18.4-19.8 ms at the same rate
 * (6,921-7,299 -> 6,774-7,305 sends/s). At 2,000 sends/s over HTTP the tail did not move (p99.9 60.2 -> 62.4 ms, and
 * 65.1 with no in-COMMIT checkpoint at all: that tail is not these) and the passes cost 0-4% more CPU per send
 * (bench http/requestCost, all threads: 523-536 -> 530-550 us).
 */
const MAX_CHECKPOINT_PASSES = 8;

/** Plain JS (eval'd), so that it runs the same from compiled output and under ts-jest. */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.file);
db.pragma('busy_timeout = 5000');
const readAll = workerData.readAllSql ? db.prepare(workerData.readAllSql).raw() : null;
// Pass after pass until one finds nothing the one before had not copied (MAX_CHECKPOINT_PASSES above says why).
function checkpoint() {
  let result;
  let before = -1;
  for (let pass = 0; pass < ${MAX_CHECKPOINT_PASSES}; pass++) {
    result = db.pragma('wal_checkpoint(PASSIVE)');
    const { busy, log, checkpointed } = result[0];
    if (busy || checkpointed < log || log <= before) break; // held by a reader, or nothing new: the WAL can be rewound
    before = log;
  }
  return result;
}
parentPort.on('message', (message) => {
  if (message.kind === 'close') {
    db.close();
    parentPort.close();
    return;
  }
  try {
    const result = message.kind === 'checkpoint' ? checkpoint() : readAll.all(message.after, message.limit);
    parentPort.postMessage({ id: message.id, ok: true, result });
  } catch (error) {
    parentPort.postMessage({ id: message.id, ok: false, error: String((error && error.message) || error) });
  }
});`;

const CLOSE_TIMEOUT_MS = 5000;

interface Reply {
  id: number;
  ok: boolean;
  result?: unknown;
  error?: string;
}

export class SqliteSidecar {
  private worker: Worker | null = null;
  private failed = false;
  private nextId = 1;
  private readonly waiting = new Map<number, { resolve: (result: unknown) => void; reject: (error: Error) => void }>();

  constructor(
    private readonly file: string,
    /** The log's page query, for readAll requests (none for a file that is only checkpointed). */
    private readonly readAllSql: string | null = null,
    /**
     * The SQLite binding every other connection to this file uses: two copies of SQLite in one process must never
     * open the same file (each keeps its own table of POSIX locks, and closing a descriptor drops the other's).
     */
    private readonly driver: SqliteDriver = defaultSqliteDriver(),
  ) {}

  get available(): boolean {
    return !this.failed;
  }

  request(request: SidecarRequest): Promise<unknown> {
    if (this.failed) return Promise.reject(new Error('SQLite sidecar unavailable'));
    const id = this.nextId++;
    const worker = (this.worker ??= this.start());
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      worker.ref(); // keep the process alive while an answer is due
      worker.postMessage({ ...request, id });
    });
  }

  private start(): Worker {
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: { file: this.file, driver: require.resolve(this.driver), readAllSql: this.readAllSql },
    });
    worker.unref();
    worker.on('message', (reply: Reply) => {
      const waiter = this.waiting.get(reply.id);
      this.waiting.delete(reply.id);
      if (this.waiting.size === 0) worker.unref();
      if (reply.ok) waiter?.resolve(reply.result);
      else waiter?.reject(new Error(reply.error));
    });
    worker.on('error', (error) => this.fail(error));
    worker.on('exit', () => {
      if (this.worker === worker) this.fail(new Error('SQLite sidecar exited'));
    });
    return worker;
  }

  private fail(error: Error): void {
    this.failed = true;
    this.worker = null;
    for (const waiter of this.waiting.values()) waiter.reject(error);
    this.waiting.clear();
  }

  /** Lets a request in progress finish and the connection close; terminates the thread only if it hangs. */
  async close(): Promise<void> {
    this.failed = true;
    const worker = this.worker;
    this.worker = null;
    if (!worker) return;
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    worker.postMessage({ kind: 'close' });
    const timeout = setTimeout(() => void worker.terminate(), CLOSE_TIMEOUT_MS);
    await exited;
    clearTimeout(timeout);
    for (const waiter of this.waiting.values()) waiter.reject(new Error(`SQLite file ${this.file} closed`));
    this.waiting.clear();
  }
}
