/**
 * The handle on the writer thread (sqliteWriterThread.ts): sends one group of
 * appends at a time, answers each with its result or its own error rebuilt on
 * this side (a stale expectation is a ConcurrencyConflict, as before; a
 * condition of the storage, such as a full disk, is UNAVAILABLE: sqliteErrors.ts;
 * any other error keeps its message and SQLite code), and refuses loudly once the
 * thread is gone: a thread that died (or a store that closed) takes no more
 * appends, and the appends it had are rejected, never left waiting.
 */
import { Worker } from 'node:worker_threads';
import { ConcurrencyConflict } from '../../errors';
import { describeExpected, type AppendResult, type ExpectedRevision } from '../../events/eventStore';
import type { NewEvent } from '../../events/types';
import { translateSqliteWriteError } from './sqliteErrors';
import { WRITER_THREAD_SOURCE } from './sqliteWriterThread';
import { defaultSqliteDriver, type SqliteDriver } from '../../support/sqlite/sqliteDriver';

export interface WriterAppend {
  stream: string;
  events: readonly NewEvent[];
  expected: ExpectedRevision;
}

/** An event as the thread writes it: [eventId, type, data as JSON, metadata as JSON]. */
export type SerializedEvent = [eventId: string, type: string, data: string, metadata: string];

/**
 * `written`: the rows this append inserted, exactly as stored (null when it repeated an append that had landed: the
 * stored rows are the original's, which may differ from this retry's, e.g. in a timestamp).
 */
export type WriterOutcome =
  { ok: true; result: AppendResult; written: readonly SerializedEvent[] | null } | { ok: false; error: Error };

type ThreadError = { conflict: string } | { message: string; code?: string; name?: string };
type ThreadOutcome = { ok: true; revision: number; position: number; fresh: boolean } | { ok: false; error: ThreadError };
type Reply = { id: number; outcomes: ThreadOutcome[] } | { id: number; failed: ThreadError };

interface Waiting {
  appends: readonly WriterAppend[];
  serialized: ReadonlyArray<readonly SerializedEvent[]>;
  resolve: (outcomes: WriterOutcome[]) => void;
  reject: (error: Error) => void;
}

const CLOSE_TIMEOUT_MS = 5000;

/** The thread's description of an error, as an Error of this side: message, SQLite code and name kept. */
function rebuild(error: ThreadError, append?: WriterAppend): Error {
  if ('conflict' in error) {
    if (!append) return new Error(`conflict outside an append (${error.conflict})`);
    return new ConcurrencyConflict(append.stream, describeExpected(append.expected), error.conflict);
  }
  const rebuilt = new Error(error.message) as Error & { code?: string };
  if (error.code) rebuilt.code = error.code;
  if (error.name) rebuilt.name = error.name;
  return translateSqliteWriteError(rebuilt); // a full disk, an I/O error...: 503, not 500 (sqliteErrors.ts)
}

export class SqliteWriter {
  private worker: Worker | null = null;
  private exited: Promise<void> = Promise.resolve();
  private readonly waiting = new Map<number, Waiting>();
  private nextId = 1;
  private stopped: Error | null = null;

  /** The thread starts with the first commit: a store that is only read never starts one. */
  constructor(
    private readonly file: string,
    private checkpointPages: number,
    /** The binding of every connection to this file (support/sqlite/sqliteDriver.ts). */
    private readonly driver: SqliteDriver = defaultSqliteDriver(),
  ) {}

  private start(): Worker {
    const worker = new Worker(WRITER_THREAD_SOURCE, {
      eval: true,
      workerData: {
        file: this.file,
        driver: require.resolve(this.driver),
        checkpointPages: this.checkpointPages,
      },
    });
    worker.unref(); // an idle writer keeps no process alive; ref'd while a commit is due
    this.exited = new Promise((resolve) => worker.once('exit', () => resolve()));
    worker.on('message', (reply: Reply) => this.answer(reply));
    worker.on('error', (error) => this.stop(new Error(`SQLite writer thread failed: ${error.message}`)));
    worker.on('exit', (code) => this.stop(new Error(`SQLite writer thread exited (code ${code})`)));
    return worker;
  }

  /** One transaction for the whole group; resolves with each append's outcome once committed, rejects if nothing was. */
  commit(appends: readonly WriterAppend[]): Promise<WriterOutcome[]> {
    if (this.stopped) return Promise.reject(this.stopped);
    const id = this.nextId++;
    const worker = (this.worker ??= this.start());
    const serialized = appends.map(({ events }) =>
      events.map((e): SerializedEvent => [e.eventId, e.type, JSON.stringify(e.data), JSON.stringify(e.metadata)]),
    );
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { appends, serialized, resolve, reject });
      worker.ref();
      worker.postMessage({
        kind: 'commit',
        id,
        appends: appends.map(({ stream, expected }, i) => ({
          stream,
          expected: describeExpected(expected),
          events: serialized[i],
        })),
      });
    });
  }

  /** The thread's own wal_autocheckpoint, in pages (sqliteCheckpointer.ts decides it). */
  setCheckpointLimit(pages: number): void {
    this.checkpointPages = pages;
    if (!this.stopped) this.worker?.postMessage({ kind: 'limit', pages });
  }

  private answer(reply: Reply): void {
    const waiting = this.waiting.get(reply.id);
    this.waiting.delete(reply.id);
    if (this.waiting.size === 0) this.worker?.unref();
    if (!waiting) return;
    if ('failed' in reply) {
      waiting.reject(rebuild(reply.failed));
      return;
    }
    waiting.resolve(
      reply.outcomes.map((outcome, i) =>
        outcome.ok
          ? {
              ok: true,
              result: { nextExpectedRevision: BigInt(outcome.revision), position: BigInt(outcome.position) },
              written: outcome.fresh ? waiting.serialized[i] : null,
            }
          : { ok: false, error: rebuild(outcome.error, waiting.appends[i]) },
      ),
    );
  }

  private stop(reason: Error): void {
    this.stopped ??= reason;
    for (const waiting of this.waiting.values()) waiting.reject(this.stopped);
    this.waiting.clear();
  }

  /** After the commit in progress (the caller waits for it): closes the connection and ends the thread. */
  async close(): Promise<void> {
    if (this.stopped) return;
    this.stopped = new Error('SQLite event store closed');
    const worker = this.worker;
    if (!worker) return;
    worker.postMessage({ kind: 'close' });
    const timeout = setTimeout(() => void worker.terminate(), CLOSE_TIMEOUT_MS);
    await this.exited;
    clearTimeout(timeout);
  }
}
