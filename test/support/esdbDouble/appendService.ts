/**
 * Streams.Append (client streaming: options, then proposed messages) and
 * Streams.BatchAppend (bidirectional: batches keyed by correlation id), with
 * EventStoreDB's replies: success with revision and position (no position for
 * an idempotent repeat), wrong expected version, stream deleted.
 */
import { status as GrpcStatus, type sendUnaryData, type ServerDuplexStream, type ServerReadableStream } from '@grpc/grpc-js';
import { Any } from 'google-protobuf/google/protobuf/any_pb';
import { Empty as ProtobufEmpty } from 'google-protobuf/google/protobuf/empty_pb';
import { AllStreamPosition, StreamDeleted, WrongExpectedVersion } from '@eventstore/db-client/generated/shared_pb';
import { Status } from '@eventstore/db-client/generated/status_pb';
import { type AppendReq, AppendResp, type BatchAppendReq, BatchAppendResp } from '@eventstore/db-client/generated/streams_pb';
import type { AppendOutcome, DoubleLog, ExpectedState, ProposedEvent } from './doubleLog';
import type { Faults } from './faults';
import {
  accessDeniedError,
  empty,
  expectedStateOf,
  proposedEventOf,
  streamDeletedError,
  streamIdentifier,
  streamNameOf,
} from './wire';

const LOST_REPLY = {
  code: GrpcStatus.UNAVAILABLE,
  details: 'Connection lost after the write was committed (injected by the test double)',
};

const lostReplyError = () => Object.assign(new Error(LOST_REPLY.details), LOST_REPLY);

export function appendHandler(log: DoubleLog, faults: Faults) {
  return (call: ServerReadableStream<AppendReq, AppendResp>, callback: sendUnaryData<AppendResp>): void => {
    let options: AppendReq.Options | undefined;
    const events: ProposedEvent[] = [];
    call.on('data', (request: AppendReq) => {
      if (request.hasOptions()) options = request.getOptions();
      else if (request.hasProposedMessage()) events.push(proposedEventOf(request.getProposedMessage()!));
    });
    call.on('error', () => undefined); // the client went away; nothing to answer
    call.on('end', () => {
      if (faults.holdIfFrozen(() => callback(LOST_REPLY))) return;
      if (faults.denied) return callback(accessDeniedError());
      if (!options) return callback({ code: GrpcStatus.INVALID_ARGUMENT, details: 'Append: options must come first' });
      const streamName = streamNameOf(options.getStreamIdentifier());
      const expected = expectedStateOf(
        options,
        () => options!.getRevision(),
        () => options!.hasRevision(),
      );
      faults.appending(streamName);
      const outcome = log.append(streamName, expected, events);
      const lost = faults.takeLostAppendReply();
      if (lost === 'silence') return;
      if (lost === 'error') return callback(LOST_REPLY);
      if (outcome.kind === 'stream_deleted') return callback(streamDeletedError(streamName));
      callback(null, appendResponse(outcome));
    });
  };
}

function appendResponse(outcome: Exclude<AppendOutcome, { kind: 'stream_deleted' }>): AppendResp {
  const response = new AppendResp();
  if (outcome.kind === 'success') {
    const success = new AppendResp.Success();
    success.setCurrentRevision(outcome.currentRevision.toString());
    if (outcome.position) {
      const position = new AppendResp.Position();
      position.setCommitPosition(outcome.position.commit.toString());
      position.setPreparePosition(outcome.position.prepare.toString());
      success.setPosition(position);
    } else {
      success.setNoPosition(empty());
    }
    response.setSuccess(success);
    return response;
  }
  const wrong = new AppendResp.WrongExpectedVersion();
  if (outcome.current === null) {
    wrong.setCurrentNoStream(empty());
    wrong.setNoStream2060(empty());
  } else {
    wrong.setCurrentRevision(outcome.current.toString());
    wrong.setCurrentRevision2060(Number(outcome.current));
  }
  setExpected(wrong, outcome.expected);
  response.setWrongExpectedVersion(wrong);
  return response;
}

function setExpected(wrong: AppendResp.WrongExpectedVersion, expected: ExpectedState): void {
  switch (expected.kind) {
    case 'revision':
      wrong.setExpectedRevision(expected.revision.toString());
      wrong.setExpectedRevision2060(Number(expected.revision));
      return;
    case 'no_stream':
      wrong.setExpectedNoStream(empty());
      return;
    case 'any':
      wrong.setExpectedAny(empty());
      wrong.setAny2060(empty());
      return;
    case 'stream_exists':
      wrong.setExpectedStreamExists(empty());
      wrong.setStreamExists2060(empty());
      return;
  }
}

/** One in-progress BatchAppend request: its options arrive with the first batch, events over several. */
interface PendingBatch {
  streamName: string;
  expected: ExpectedState;
  events: ProposedEvent[];
}

export function batchAppendHandler(log: DoubleLog, faults: Faults) {
  return (call: ServerDuplexStream<BatchAppendReq, BatchAppendResp>): void => {
    const pending = new Map<string, PendingBatch>();
    call.on('error', () => undefined);
    call.on('end', () => call.end());
    call.on('data', (request: BatchAppendReq) => {
      const correlationId = request.getCorrelationId()?.getString() ?? '';
      let batch = pending.get(correlationId);
      const options = request.getOptions();
      if (!batch && options) {
        batch = {
          streamName: streamNameOf(options.getStreamIdentifier()),
          expected: expectedStateOf(
            options,
            () => options.getStreamPosition(),
            () => options.hasStreamPosition(),
          ),
          events: [],
        };
        pending.set(correlationId, batch);
      }
      if (!batch) return; // a batch without options first: the real server ignores it too
      batch.events.push(...request.getProposedMessagesList().map(proposedEventOf));
      if (!request.getIsFinal()) return;
      pending.delete(correlationId);
      if (faults.holdIfFrozen(() => call.emit('error', lostReplyError()))) return;
      if (faults.denied) {
        call.emit('error', accessDeniedError());
        return;
      }
      faults.appending(batch.streamName);
      const outcome = log.append(batch.streamName, batch.expected, batch.events);
      const lost = faults.takeLostAppendReply();
      if (lost === 'silence') return;
      if (lost === 'error') {
        // The whole BatchAppend call breaks, as when its connection drops: every pending batch fails.
        call.emit('error', lostReplyError());
        return;
      }
      call.write(batchResponse(request, batch, outcome));
    });
  };
}

function batchResponse(request: BatchAppendReq, batch: PendingBatch, outcome: AppendOutcome): BatchAppendResp {
  const response = new BatchAppendResp();
  response.setCorrelationId(request.getCorrelationId());
  response.setStreamIdentifier(streamIdentifier(batch.streamName));
  if (outcome.kind === 'success') {
    const success = new BatchAppendResp.Success();
    success.setCurrentRevision(outcome.currentRevision.toString());
    if (outcome.position) {
      const position = new AllStreamPosition();
      position.setCommitPosition(outcome.position.commit.toString());
      position.setPreparePosition(outcome.position.prepare.toString());
      success.setPosition(position);
    } else {
      success.setNoPosition(new ProtobufEmpty());
    }
    response.setSuccess(success);
    return response;
  }
  response.setError(outcome.kind === 'stream_deleted' ? streamDeletedStatus(batch.streamName) : wrongVersionStatus(outcome));
  return response;
}

function wrongVersionStatus(outcome: Extract<AppendOutcome, { kind: 'wrong_expected_version' }>): Status {
  const details = new WrongExpectedVersion();
  if (outcome.current === null) details.setCurrentNoStream(new ProtobufEmpty());
  else details.setCurrentStreamRevision(outcome.current.toString());
  const expected = outcome.expected;
  if (expected.kind === 'revision') details.setExpectedStreamPosition(expected.revision.toString());
  else if (expected.kind === 'no_stream') details.setExpectedNoStream(new ProtobufEmpty());
  else if (expected.kind === 'stream_exists') details.setExpectedStreamExists(new ProtobufEmpty());
  else details.setExpectedAny(new ProtobufEmpty());
  return status(
    GrpcStatus.FAILED_PRECONDITION,
    'WrongExpectedVersion',
    details.serializeBinary(),
    'event_store.client.WrongExpectedVersion',
  );
}

function streamDeletedStatus(streamName: string): Status {
  const details = new StreamDeleted();
  details.setStreamIdentifier(streamIdentifier(streamName));
  return status(
    GrpcStatus.FAILED_PRECONDITION,
    `Stream ${streamName} is deleted`,
    details.serializeBinary(),
    'event_store.client.StreamDeleted',
  );
}

function status(code: number, message: string, details: Uint8Array, typeName: string): Status {
  const packed = new Any();
  packed.pack(details, typeName);
  const result = new Status();
  result.setCode(code);
  result.setMessage(message);
  result.setDetails(packed);
  return result;
}
