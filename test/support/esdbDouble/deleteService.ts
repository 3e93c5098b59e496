/** Streams.Delete (soft delete) and Streams.Tombstone (hard delete), with the server's error trailers. */
import type { sendUnaryData, ServerUnaryCall } from '@grpc/grpc-js';
import { DeleteResp, TombstoneResp, type DeleteReq, type TombstoneReq } from '@eventstore/db-client/generated/streams_pb';
import type { DeleteOutcome, DoubleLog, ExpectedState } from './doubleLog';
import type { Faults } from './faults';
import { expectedStateOf, streamDeletedError, streamNameOf, wrongExpectedVersionError } from './wire';

type DeleteLike = DeleteReq | TombstoneReq;

function parse(request: DeleteLike): { streamName: string; expected: ExpectedState } {
  const options = request.getOptions()!;
  return {
    streamName: streamNameOf(options.getStreamIdentifier()),
    expected: expectedStateOf(
      options,
      () => options.getRevision(),
      () => options.hasRevision(),
    ),
  };
}

function reply<Res extends DeleteResp | TombstoneResp>(
  outcome: DeleteOutcome,
  streamName: string,
  expected: ExpectedState,
  callback: sendUnaryData<Res>,
  make: () => Res,
): void {
  if (outcome.kind === 'stream_deleted') return callback(streamDeletedError(streamName));
  if (outcome.kind === 'wrong_expected_version')
    return callback(wrongExpectedVersionError(streamName, expected, outcome.current));
  const response = make();
  const position = response instanceof DeleteResp ? new DeleteResp.Position() : new TombstoneResp.Position();
  position.setCommitPosition(outcome.position.toString());
  position.setPreparePosition(outcome.position.toString());
  (response as DeleteResp).setPosition(position as DeleteResp.Position);
  callback(null, response);
}

export function deleteHandler(log: DoubleLog, faults: Faults) {
  return (call: ServerUnaryCall<DeleteReq, DeleteResp>, callback: sendUnaryData<DeleteResp>): void => {
    if (faults.holdIfFrozen(() => undefined)) return;
    const { streamName, expected } = parse(call.request);
    reply(log.softDelete(streamName, expected), streamName, expected, callback, () => new DeleteResp());
  };
}

export function tombstoneHandler(log: DoubleLog, faults: Faults) {
  return (call: ServerUnaryCall<TombstoneReq, TombstoneResp>, callback: sendUnaryData<TombstoneResp>): void => {
    if (faults.holdIfFrozen(() => undefined)) return;
    const { streamName, expected } = parse(call.request);
    reply(log.tombstone(streamName, expected), streamName, expected, callback, () => new TombstoneResp());
  };
}
