/**
 * Streams.Read: one-shot reads of a stream or of $all (forwards/backwards,
 * from start/end/revision/position, `count`), and subscriptions (see
 * subscriptionService.ts). Read positions follow the server: forwards reads are
 * inclusive of the given position or revision, backwards reads of $all are exclusive.
 */
import { status as GrpcStatus, type ServerWritableStream } from '@grpc/grpc-js';
import { ReadReq, type ReadResp } from '@eventstore/db-client/generated/streams_pb';
import type { DoubleLog, LogRecord } from './doubleLog';
import type { Faults } from './faults';
import { filterOf } from './filters';
import { ResponseWriter } from './responseWriter';
import { subscribe, type SubscriptionRequest } from './subscriptionService';
import {
  accessDeniedError,
  eventResponse,
  permissionDeniedError,
  streamDeletedError,
  streamNameOf,
  streamNotFoundResponse,
} from './wire';

const BACKWARDS = ReadReq.Options.ReadDirection.BACKWARDS;

export interface ReadOfAll {
  direction: 'forwards' | 'backwards';
  /** Events sent (after the filter, up to the count asked). */
  sent: number;
}

export function readHandler(
  log: DoubleLog,
  faults: Faults,
  onSubscribe: (request: SubscriptionRequest) => void,
  onReadOfAll: (read: ReadOfAll) => void = () => undefined,
) {
  return (call: ServerWritableStream<ReadReq, ReadResp>): void => {
    const options = call.request.getOptions();
    if (faults.holdIfFrozen(() => call.emit('error', { code: GrpcStatus.UNAVAILABLE, details: 'frozen' }))) return;
    if (faults.denied) {
      call.emit('error', accessDeniedError());
      return;
    }
    if (!options) {
      call.emit('error', { code: GrpcStatus.INVALID_ARGUMENT, details: 'Read: options are required' });
      return;
    }
    if (faults.readsOfAllDenied && options.hasAll()) {
      call.emit('error', permissionDeniedError());
      return;
    }
    const writer = new ResponseWriter(call);
    const run = options.hasSubscription()
      ? subscribe(log, faults, options, writer, onSubscribe)
      : readOnce(log, options, writer, call, onReadOfAll);
    run.catch((error: Error) => call.emit('error', { code: GrpcStatus.INTERNAL, details: error.message }));
  };
}

async function readOnce(
  log: DoubleLog,
  options: ReadReq.Options,
  writer: ResponseWriter<ReadResp>,
  call: ServerWritableStream<ReadReq, ReadResp>,
  onReadOfAll: (read: ReadOfAll) => void,
) {
  const count = options.hasCount() ? BigInt(options.getCount()) : BigInt(Number.MAX_SAFE_INTEGER);
  let records: Iterable<LogRecord>;
  if (options.hasStream()) {
    const streamOptions = options.getStream()!;
    const streamName = streamNameOf(streamOptions.getStreamIdentifier());
    log.streamCalls.push({ call: 'read', stream: streamName });
    const found = log.streamRecords(streamName);
    if (found === 'deleted') {
      call.emit('error', streamDeletedError(streamName));
      return;
    }
    if (found === 'not_found') {
      await writer.write(streamNotFoundResponse(streamName));
      writer.end();
      return;
    }
    records = streamSlice(found, streamOptions, options.getReadDirection() === BACKWARDS);
  } else {
    records = allSlice(log, options.getAll()!, options.getReadDirection() === BACKWARDS);
  }
  const filter = filterOf(options);
  let sent = 0n;
  for (const record of records) {
    if (sent >= count) break;
    if (!filter.matches(record)) continue;
    if (!(await writer.write(eventResponse(record)))) return;
    sent++;
  }
  if (!options.hasStream())
    onReadOfAll({ direction: options.getReadDirection() === BACKWARDS ? 'backwards' : 'forwards', sent: Number(sent) });
  writer.end();
}

function* streamSlice(records: LogRecord[], options: ReadReq.Options.StreamOptions, backwards: boolean): Iterable<LogRecord> {
  const from = options.hasRevision() ? BigInt(options.getRevision()) : null;
  if (!backwards) {
    if (options.hasEnd()) return;
    for (const record of records) if (from === null || record.revision >= from) yield record;
    return;
  }
  if (options.hasStart()) {
    if (records[0]?.revision === 0n) yield records[0];
    return;
  }
  for (let i = records.length - 1; i >= 0; i--) if (from === null || records[i].revision <= from) yield records[i];
}

function* allSlice(log: DoubleLog, options: ReadReq.Options.AllOptions, backwards: boolean): Iterable<LogRecord> {
  const records = log.records;
  const position = options.hasPosition() ? BigInt(options.getPosition()!.getCommitPosition()) : null;
  if (!backwards) {
    if (options.hasEnd()) return;
    for (let i = position === null ? 0 : log.indexAtOrAfter(position); i < records.length; i++) yield records[i];
    return;
  }
  if (options.hasStart()) return;
  for (let i = (position === null ? records.length : log.indexAtOrAfter(position)) - 1; i >= 0; i--) yield records[i];
}
