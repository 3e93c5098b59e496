/**
 * Who checkpoints the SQLite WAL: the writer itself (default threshold) until
 * the sidecar thread takes over; then the writer's threshold is pushed far
 * out, so that its COMMIT on the event loop no longer copies pages and fsyncs
 * the database file; and it comes back if the sidecar fails.
 */
import { WalCheckpointer, WRITER_LIMIT_ALONE, WRITER_LIMIT_WITH_SIDECAR } from '../../src/support/sqlite/sqliteCheckpointer';
import type { SidecarRequest, SqliteSidecar } from '../../src/support/sqlite/sqliteSidecar';

/** A sidecar that records each request (and the writer limit in force then) and answers when told. */
function fakeSidecar(limits: number[]) {
  const requests: Array<{ request: SidecarRequest; writerLimit: number | undefined; answer: () => void }> = [];
  let onRequest: (() => void) | null = null;
  const sidecar = {
    available: true,
    request(request: SidecarRequest): Promise<unknown> {
      return new Promise((resolve) => {
        requests.push({ request, writerLimit: limits.at(-1), answer: () => resolve([{ busy: 0, log: 0, checkpointed: 0 }]) });
        onRequest?.();
      });
    },
  };
  const nextRequest = () => new Promise<void>((resolve) => (onRequest = resolve));
  return { sidecar, requests, nextRequest };
}

describe('WalCheckpointer', () => {
  it('leaves short-lived stores to the writer, then hands checkpoints to the sidecar with the writer limit pushed out first', async () => {
    const limits: number[] = [];
    const { sidecar, requests, nextRequest } = fakeSidecar(limits);
    const checkpointer = new WalCheckpointer(sidecar as unknown as SqliteSidecar, (pages) => limits.push(pages), 0);
    try {
      for (let i = 0; i < 99; i += 1) checkpointer.noteCommit();
      const first = nextRequest();
      checkpointer.noteCommit(); // the 100th commit
      await first;
      expect(requests.map((r) => r.request)).toEqual([{ kind: 'checkpoint' }]);
      expect(requests[0].writerLimit).toBe(WRITER_LIMIT_WITH_SIDECAR); // set before the first background checkpoint
      expect(WRITER_LIMIT_WITH_SIDECAR).toBeGreaterThanOrEqual(10 * WRITER_LIMIT_ALONE);

      // Commits during a checkpoint: one more right after it, the limit set once.
      checkpointer.noteCommit();
      checkpointer.noteCommit();
      const second = nextRequest();
      requests[0].answer();
      await second;
      expect(requests).toHaveLength(2);
      expect(limits).toEqual([WRITER_LIMIT_WITH_SIDECAR]);
    } finally {
      checkpointer.stop();
    }
  });

  it('gives checkpoints back to the writer (default limit) once the sidecar has failed', async () => {
    const limits: number[] = [];
    const { sidecar, requests, nextRequest } = fakeSidecar(limits);
    const checkpointer = new WalCheckpointer(sidecar as unknown as SqliteSidecar, (pages) => limits.push(pages), 0);
    try {
      const first = nextRequest();
      for (let i = 0; i < 100; i += 1) checkpointer.noteCommit();
      await first;
      sidecar.available = false; // e.g. the worker thread died
      checkpointer.noteCommit();
      const restored = new Promise<void>((resolve) => {
        const poll = () => (limits.length === 2 ? resolve() : setImmediate(poll));
        poll();
      });
      requests[0].answer();
      await restored;
      expect(limits).toEqual([WRITER_LIMIT_WITH_SIDECAR, WRITER_LIMIT_ALONE]);
      checkpointer.noteCommit(); // stopped: schedules nothing
      await new Promise((resolve) => setImmediate(resolve));
      expect(requests).toHaveLength(1);
    } finally {
      checkpointer.stop();
    }
  });
});
