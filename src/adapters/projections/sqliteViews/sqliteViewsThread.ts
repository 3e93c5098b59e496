/**
 * The SQLite views' writing side, in a worker thread (started by
 * threadedSqliteProjectionStore.ts): applies batches, claims and marks the
 * views, resets them, each through an ordinary SqliteProjectionStore on its
 * own connection. A live transaction of the views is synchronous (~0.2 ms of
 * CPU per event); on the event loop it was the largest share of a send's cost
 * and the tail of every request queued behind it. Here it no longer stops the
 * event loop: requests are answered while the views are written, and the
 * loop's heap no longer holds the batch's working set.
 *
 * Messages in: {id, op, args} with op one of apply | claim | markLiveWriter | releaseLiveWriter | reset | close.
 * Out: {kind: 'ready'} once the file is open (or {kind: 'failed', error}); {kind: 'answer', id, value} or
 * {kind: 'answer', id, error: {name, message, ...fields}}, with `wakes`: those of the transactions committed since the
 * last answer (the parent publishes them before it hands the answer on). One message per call, not a second one for
 * its wakes: each message wakes the parent's event loop, which a single sender's every send waits for.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { ApplyOptions } from '../../../projections/projectionStore';
import type { WakeBus } from '../../../projections/wakeBus';
import type { ProjectedEvent, WakeEvent } from '../../../projections/viewChanges';
import { SqliteProjectionStore, type SqliteProjectionOptions } from '../sqliteProjectionStore';
import { describeThreadError, type ThreadError } from './sqliteViewsThreadErrors';

export type ViewsThreadRequest =
  | { op: 'apply'; batch: ProjectedEvent[]; options?: ApplyOptions }
  | { op: 'claim' | 'markLiveWriter' | 'releaseLiveWriter'; logIdentity: string }
  | { op: 'reset' | 'close' };
export type ViewsThreadCall = ViewsThreadRequest & { id: number };

export type ViewsThreadMessage =
  | { kind: 'ready' }
  | { kind: 'failed'; error: ThreadError }
  | { kind: 'answer'; id: number; value?: unknown; error?: ThreadError; wakes?: readonly WakeEvent[] };

export interface ViewsThreadData {
  file: string;
  options: SqliteProjectionOptions;
}

const port = parentPort;
if (port === null) throw new Error('sqliteViewsThread runs in a worker thread (threadedSqliteProjectionStore.ts starts it)');
const post = (message: ViewsThreadMessage): void => port.postMessage(message);

/** Wakes committed and not yet sent: they go with the next answer (see the header). */
let committedWakes: WakeEvent[] = [];
const takeWakes = (): { wakes?: WakeEvent[] } => {
  if (committedWakes.length === 0) return {};
  const wakes = committedWakes;
  committedWakes = [];
  return { wakes };
};

/** Wakes go to the parent, which publishes them on the process's wake bus (subscribers live on its event loop). */
const forwardingBus: WakeBus = {
  publish: async (wakes) => {
    for (const wake of wakes) committedWakes.push(wake);
  },
  subscribe: () => Promise.reject(new Error('the views thread publishes wakes; subscribers are on the main thread')),
  close: async () => undefined,
};

/**
 * A live batch is one transaction here: the store cuts batches into short transactions so that requests are answered
 * between them on the event loop, which this thread does not serve; the callers wait for the whole batch anyway, so
 * each cut only added a COMMIT.
 */
const OFF_THE_LOOP: SqliteProjectionOptions = { transactionBudgetMs: 1000 };

function open(): SqliteProjectionStore | null {
  const { file, options } = workerData as ViewsThreadData;
  try {
    return SqliteProjectionStore.open(file, forwardingBus, { ...OFF_THE_LOOP, ...options });
  } catch (error) {
    post({ kind: 'failed', error: describeThreadError(error) });
    return null;
  }
}

async function run(store: SqliteProjectionStore, call: ViewsThreadCall): Promise<unknown> {
  switch (call.op) {
    case 'apply':
      return store.applyBatch(call.batch, call.options); // a replay's wakes are never forwarded: none reaches takeWakes
    case 'claim':
      return store.claim(call.logIdentity);
    case 'markLiveWriter':
      return store.markLiveWriter(call.logIdentity);
    case 'releaseLiveWriter':
      return store.releaseLiveWriter(call.logIdentity);
    case 'reset':
      return store.reset();
    case 'close':
      return store.close();
  }
}

const store = open();
if (store !== null) {
  port.on('message', (call: ViewsThreadCall) => {
    run(store, call).then(
      (value) => {
        post({ kind: 'answer', id: call.id, value, ...takeWakes() });
        if (call.op === 'close') port.close();
      },
      // A batch that failed after some of its transactions committed: their wakes are due all the same.
      (error: unknown) => post({ kind: 'answer', id: call.id, error: describeThreadError(error), ...takeWakes() }),
    );
  });
  post({ kind: 'ready' });
}
