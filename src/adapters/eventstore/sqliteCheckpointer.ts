/**
 * Background WAL checkpoints for the SQLite event store. Left to the writing
 * connection, a checkpoint runs inside whichever COMMIT crosses the WAL size
 * limit and blocks the event loop for its copy and fsync (15-25 ms with a
 * 40 MB WAL): every append waiting on that group commit paid for it, which set
 * the send p99 (bench/core/sendThroughput). Here the sidecar connection
 * checkpoints PASSIVE-ly (never blocking writers or readers), continuously
 * while appends keep arriving, so that the WAL stays short and is rewound
 * often (a growing WAL file makes every fsync dearer). The writer's own
 * autocheckpoint stays as the fallback if the sidecar is unavailable.
 */
import type { SqliteSidecar } from './sqliteSidecar';

/** Below this many commits the writer's own checkpoints are cheap enough: short-lived stores never start a thread. */
const COMMITS_BEFORE_SIDECAR = 100;

export class WalCheckpointer {
  private timer: NodeJS.Timeout | null = null;
  private running = false;
  private pending = false;
  private stopped = false;
  private commits = 0;

  /** `delayMs`: how long commits gather before a checkpoint starts (fewer, larger checkpoints). */
  constructor(
    private readonly sidecar: SqliteSidecar,
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
      return;
    }
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
