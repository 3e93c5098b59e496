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

/** Plain JS (eval'd), so that it runs the same from compiled output and under ts-jest. */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.file);
db.pragma('busy_timeout = 5000');
const readAll = workerData.readAllSql ? db.prepare(workerData.readAllSql).raw() : null;
parentPort.on('message', (message) => {
  if (message.kind === 'close') {
    db.close();
    parentPort.close();
    return;
  }
  try {
    const result = message.kind === 'checkpoint'
      ? db.pragma('wal_checkpoint(PASSIVE)')
      : readAll.all(message.after, message.limit);
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
