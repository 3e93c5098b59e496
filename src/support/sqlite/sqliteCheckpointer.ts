/**
 * Background WAL checkpoints for a SQLite file: the event store's, and the views file's (the same story, told
 * here for the log, applies to the views' COMMITs on the event loop). Left to the writing
 * connection, a checkpoint runs inside whichever COMMIT crosses the WAL size
 * limit and blocks the event loop for its copy and fsync (15-25 ms with a
 * 40 MB WAL): every append waiting on that group commit paid for it, which set
 * the send p99 (bench/core/sendThroughput). Here the sidecar connection
 * checkpoints PASSIVE-ly (never blocking writers or readers), continuously
 * while appends keep arriving, so that the WAL stays short and is rewound
 * often (a growing WAL file makes every fsync dearer).
 *
 * While the sidecar checkpoints, the writer's own autocheckpoint is pushed far
 * out (WRITER_LIMIT_WITH_SIDECAR). At the default 1,000 pages it fired
 * whenever a sidecar checkpoint was still running as a commit crossed that
 * size (the WAL rewinds only when a commit begins after a finished one), so
 * the writer copied pages and fsynced the database file inside COMMIT: under
 * 2,000 sends/s 2-5 times a second, and those commits were the slowest ones
 * (bench/http/sustainedLoad with BENCH_SERVER_TRACE; the writer then ran on
 * the event loop; in its own thread now, it would still hold that group's
 * answers). The far limit only bounds the WAL should the sidecar fall behind
 * for long; if the sidecar fails, the default comes back.
 */
import type { SqliteSidecar } from './sqliteSidecar';

/** Below this many commits the writer's own checkpoints are cheap enough: short-lived stores never start a thread. */
const COMMITS_BEFORE_SIDECAR = 100;
/** SQLite's default wal_autocheckpoint: the writer checkpoints on its own (no sidecar yet, or it failed). */
export const WRITER_LIMIT_ALONE = 1000;
/** ~40 MB of 4 KB pages: reached only if the sidecar falls far behind (a heavily loaded machine peaked at ~7,400). */
export const WRITER_LIMIT_WITH_SIDECAR = 10_000;

/** Sets the writing connection's wal_autocheckpoint (in pages). */
export type WriterCheckpointLimit = (pages: number) => void;

export class WalCheckpointer {
  private timer: NodeJS.Timeout | null = null;
  private running = false;
  private pending = false;
  private stopped = false;
  private commits = 0;
  private handedOver = false;

  /** `delayMs`: how long commits gather before a checkpoint starts (fewer, larger checkpoints). */
  constructor(
    private readonly sidecar: SqliteSidecar,
    private readonly setWriterLimit: WriterCheckpointLimit,
    private readonly delayMs = 20,
  ) {}

  /** After a commit that wrote pages: checkpoint soon, or right after the one in progress. */
  noteCommit(): void {
    if (this.stopped || ++this.commits < COMMITS_BEFORE_SIDECAR) return;
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
    if (!this.pending || this.running || this.stopped) return;
    if (!this.sidecar.available) {
      this.stopped = true; // the writer's autocheckpoint takes over; checkpoints only cost the writer again
      this.setWriterLimit(WRITER_LIMIT_ALONE);
      return;
    }
    if (!this.handedOver) this.setWriterLimit(WRITER_LIMIT_WITH_SIDECAR);
    this.handedOver = true;
    this.pending = false;
    this.running = true;
    this.sidecar
      .request({ kind: 'checkpoint' })
      .catch(() => undefined)
      .finally(() => {
        this.running = false;
        if (this.pending && !this.timer) this.schedule();
      });
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}
