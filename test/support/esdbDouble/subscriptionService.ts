/**
 * Catch-up subscriptions (Streams.Read with the `subscription` option), to a
 * stream or to $all, as EventStoreDB 23.10+ serves them: a confirmation first,
 * the backlog strictly after the starting point, one `caughtUp`, then live
 * events as they are written. With a filter, a checkpoint (the position of the
 * last event considered) goes out every `window x multiplier` events
 * considered, so a client can advance its checkpoint past filtered-out events.
 */
import { randomUUID } from 'node:crypto';
import type { ReadReq, ReadResp } from '@eventstore/db-client/generated/streams_pb';
import type { DoubleLog, LogRecord } from './doubleLog';
import type { Faults } from './faults';
import { filterOf } from './filters';
import type { ResponseWriter } from './responseWriter';
import {
  caughtUpResponse,
  checkpointResponse,
  confirmationResponse,
  eventResponse,
  permissionDeniedError,
  streamNameOf,
} from './wire';

/** What a client asked for, recorded so that tests can see where a resubscription resumed. */
export interface SubscriptionRequest {
  target: string; // '$all' or a stream name
  from: 'start' | 'end' | bigint; // a position for $all, a revision for a stream (exclusive)
  filter: string;
}

export async function subscribe(
  log: DoubleLog,
  faults: Faults,
  options: ReadReq.Options,
  writer: ResponseWriter<ReadResp>,
  onSubscribe: (request: SubscriptionRequest) => void,
): Promise<void> {
  const filter = filterOf(options);
  const { target, from, include, startIndex } = startingPoint(log, options);
  onSubscribe({ target, from, filter: filter.description });
  // The right to read $all taken away while it runs: the node ends the subscription with access denied.
  const stopCutting = target === '$all' ? faults.onReadsOfAllDenied(() => writer.fail(permissionDeniedError())) : null;
  try {
    await follow(log, writer, { filter, from, include, startIndex });
  } finally {
    stopCutting?.();
  }
}

async function follow(
  log: DoubleLog,
  writer: ResponseWriter<ReadResp>,
  {
    filter,
    from,
    include,
    startIndex,
  }: { filter: ReturnType<typeof filterOf> } & Omit<ReturnType<typeof startingPoint>, 'target'>,
): Promise<void> {
  if (!(await writer.write(confirmationResponse(randomUUID())))) return;
  let cursor = from === 'end' ? log.records.length : startIndex;
  let considered = 0;
  let caughtUp = false;
  for (;;) {
    while (cursor < log.records.length) {
      const record = log.records[cursor++];
      if (!include(record)) continue;
      considered++;
      if (filter.matches(record) && !(await writer.write(eventResponse(record)))) return;
      if (filter.checkpointEvery !== null && considered % filter.checkpointEvery === 0) {
        if (!(await writer.write(checkpointResponse(record.position)))) return;
      }
    }
    if (!caughtUp) {
      caughtUp = true;
      if (!(await writer.write(caughtUpResponse()))) return;
    }
    await writer.waitFor((wake) => log.onAppend(wake));
    if (writer.cancelled) return;
  }
}

function startingPoint(log: DoubleLog, options: ReadReq.Options) {
  if (options.hasStream()) {
    const stream = options.getStream()!;
    const name = streamNameOf(stream.getStreamIdentifier());
    const after = stream.hasRevision() ? BigInt(stream.getRevision()) : null;
    const from: SubscriptionRequest['from'] = stream.hasEnd() ? 'end' : (after ?? 'start');
    const include = (record: LogRecord) => record.streamName === name && (after === null || record.revision > after);
    return { target: name, from, include, startIndex: 0 };
  }
  const all = options.getAll()!;
  const after = all.hasPosition() ? BigInt(all.getPosition()!.getCommitPosition()) : null;
  const from: SubscriptionRequest['from'] = all.hasEnd() ? 'end' : (after ?? 'start');
  const include = (record: LogRecord) => after === null || record.position > after;
  return { target: '$all', from, include, startIndex: after === null ? 0 : log.indexAtOrAfter(after) };
}
