/**
 * Background WAL checkpoints for the SQLite event store. Left to the writing
 * connection, a checkpoint runs inside whichever COMMIT crosses the WAL size
 * limit and blocks the event loop for its copy and fsync (15-25 ms with a
 * 40 MB WAL): every append waiting on that group commit paid for it, which set
 * the send p99 (bench/core/sendThroughput). Here a second connection in a
 * worker thread checkpoints PASSIVE-ly (never blocking writers or readers),
 * continuously while appends keep arriving, so that the WAL stays short and
 * is rewound often (a growing WAL file makes every fsync dearer). The
 * writer's own autocheckpoint stays as the fallback if the worker cannot
 * keep up or fails.
 */
import { Worker } from 'node:worker_threads';

/** Plain JS (eval'd), so that it runs the same from compiled output and under ts-jest. */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.file);
db.pragma('busy_timeout = 5000');
parentPort.on('message', (message) => {
  if (message === 'close') {
    db.close();
    parentPort.close();
    return;
  }
  try {
    db.pragma('wal_checkpoint(PASSIVE)');
    parentPort.postMessage({ ok: true });
  } catch (error) {
    parentPort.postMessage({ ok: false, error: String((error && error.message) || error) });
  }
});`;

const CLOSE_TIMEOUT_MS = 5000;
/** Below this many commits the writer's own checkpoints are cheap enough: short-lived stores never start a thread. */
const COMMITS_BEFORE_WORKER = 100;

export class WalCheckpointer {
  private worker: Worker | null = null;
  private timer: NodeJS.Timeout | null = null;
  private running = false;
  private pending = false;
  private failed = false;
  private commits = 0;

  /** `delayMs`: how long commits gather before a checkpoint starts (fewer, larger checkpoints). */
  constructor(private readonly file: string, private readonly delayMs = 20) {}

  /** After a commit that wrote pages: checkpoint soon, or right after the one in progress. */
  noteCommit(): void {
    if (this.failed || (!this.worker && ++this.commits < COMMITS_BEFORE_WORKER)) return;
    this.pending = true;
    if (!this.running && !this.timer) this.schedule();
  }

  private schedule(): void {
    this.timer = setTimeout(() => {
      this.timer = null;
      this.checkpoint();
    }, this.delayMs);
    this.timer.unref();
  }

  private checkpoint(): void {
    if (!this.pending || this.running || this.failed) return;
    this.pending = false;
    this.running = true;
    (this.worker ??= this.start()).postMessage('checkpoint');
  }

  private finished(): void {
    this.running = false;
    if (this.pending && !this.timer) this.schedule();
  }

  /** Started on first use, once the store has shown it is busy. */
  private start(): Worker {
    const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { file: this.file, driver: require.resolve('libsql') } });
    worker.unref();
    worker.on('message', () => this.finished());
    worker.on('error', () => this.giveUp());
    worker.on('exit', () => {
      if (this.worker === worker) this.giveUp();
    });
    return worker;
  }

  /** The writer's autocheckpoint takes over; nothing is lost, checkpoints only cost the writer again. */
  private giveUp(): void {
    this.failed = true;
    this.worker = null;
    this.running = false;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  async close(): Promise<void> {
    this.failed = true; // no new checkpoints
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const worker = this.worker;
    this.worker = null;
    if (!worker) return;
    // Let a checkpoint in progress finish and the connection close; terminate only if it hangs.
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    worker.postMessage('close');
    const timeout = setTimeout(() => void worker.terminate(), CLOSE_TIMEOUT_MS);
    await exited;
    clearTimeout(timeout);
  }
}
