/**
 * Translation between the double's log and the EventStoreDB v1 wire messages,
 * using the client package's own generated protobuf classes (so a message the
 * double builds is exactly what the real client parses).
 */
import { Metadata, status as GrpcStatus, type ServiceError } from '@grpc/grpc-js';
import { Empty, StreamIdentifier, UUID } from '@eventstore/db-client/generated/shared_pb';
import { ReadResp } from '@eventstore/db-client/generated/streams_pb';
import type { ExpectedState, LogRecord, ProposedEvent } from './doubleLog';

export const streamNameOf = (identifier: StreamIdentifier | undefined): string =>
  Buffer.from(identifier?.getStreamName_asU8() ?? new Uint8Array()).toString('utf8');

export function streamIdentifier(streamName: string): StreamIdentifier {
  const identifier = new StreamIdentifier();
  identifier.setStreamName(Buffer.from(streamName, 'utf8'));
  return identifier;
}

/** The expected-revision oneof shared (by shape) by Append, BatchAppend, Delete and Tombstone options. */
interface ExpectedOneof {
  hasAny(): boolean;
  hasNoStream(): boolean;
  hasStreamExists(): boolean;
}

export function expectedStateOf(options: ExpectedOneof, revision: () => string, hasRevision: () => boolean): ExpectedState {
  if (hasRevision()) return { kind: 'revision', revision: BigInt(revision()) };
  if (options.hasNoStream()) return { kind: 'no_stream' };
  if (options.hasStreamExists()) return { kind: 'stream_exists' };
  return { kind: 'any' };
}

/** A proposed message of Append or BatchAppend (same shape) as the double stores it. */
export function proposedEventOf(message: {
  getId(): UUID | undefined;
  getMetadataMap(): { get(key: string): string | undefined };
  getData_asU8(): Uint8Array;
  getCustomMetadata_asU8(): Uint8Array;
}): ProposedEvent {
  const metadata = message.getMetadataMap();
  return {
    id: message.getId()?.getString() ?? '',
    type: metadata.get('type') ?? '',
    contentType: metadata.get('content-type') ?? 'application/octet-stream',
    data: message.getData_asU8(),
    customMetadata: message.getCustomMetadata_asU8(),
  };
}

export function eventResponse(record: LogRecord): ReadResp {
  const recorded = new ReadResp.ReadEvent.RecordedEvent();
  const id = new UUID();
  id.setString(record.id);
  recorded.setId(id);
  recorded.setStreamIdentifier(streamIdentifier(record.streamName));
  recorded.setStreamRevision(record.revision.toString());
  recorded.setCommitPosition(record.position.toString());
  recorded.setPreparePosition(record.position.toString());
  const metadata = recorded.getMetadataMap();
  metadata.set('type', record.type);
  metadata.set('content-type', record.contentType);
  metadata.set('created', record.createdTicks.toString());
  recorded.setData(record.data);
  recorded.setCustomMetadata(record.customMetadata);
  const event = new ReadResp.ReadEvent();
  event.setEvent(recorded);
  event.setCommitPosition(record.position.toString());
  const response = new ReadResp();
  response.setEvent(event);
  return response;
}

export function checkpointResponse(position: bigint): ReadResp {
  const checkpoint = new ReadResp.Checkpoint();
  checkpoint.setCommitPosition(position.toString());
  checkpoint.setPreparePosition(position.toString());
  const response = new ReadResp();
  response.setCheckpoint(checkpoint);
  return response;
}

export function confirmationResponse(subscriptionId: string): ReadResp {
  const confirmation = new ReadResp.SubscriptionConfirmation();
  confirmation.setSubscriptionId(subscriptionId);
  const response = new ReadResp();
  response.setConfirmation(confirmation);
  return response;
}

export function caughtUpResponse(): ReadResp {
  const response = new ReadResp();
  response.setCaughtUp(new ReadResp.CaughtUp());
  return response;
}

export function streamNotFoundResponse(streamName: string): ReadResp {
  const notFound = new ReadResp.StreamNotFound();
  notFound.setStreamIdentifier(streamIdentifier(streamName));
  const response = new ReadResp();
  response.setStreamNotFound(notFound);
  return response;
}

export const empty = () => new Empty();

/**
 * A gRPC error the way EventStoreDB raises them outside Append's reply:
 * the `exception` trailer names the error, the client maps it to its error class.
 */
export function serverError(
  code: GrpcStatus,
  exception: string,
  details: string,
  trailers: Record<string, string> = {},
): Partial<ServiceError> {
  const metadata = new Metadata();
  metadata.set('exception', exception);
  for (const [key, value] of Object.entries(trailers)) metadata.set(key, value);
  return { code, details, metadata };
}

/** A call refused for its credentials (gRPC UNAUTHENTICATED: the client's AccessDeniedError). */
export const accessDeniedError = (): Partial<ServiceError> => ({
  code: GrpcStatus.UNAUTHENTICATED,
  details: 'Access denied: bad username or password',
  metadata: new Metadata(),
});

/**
 * A call refused for the user's rights (credentials accepted, the stream's access list refuses it): gRPC
 * PERMISSION_DENIED with the `access-denied` exception trailer, as EventStoreDB raises it (the client's AccessDeniedError).
 */
export const permissionDeniedError = (): Partial<ServiceError> =>
  serverError(GrpcStatus.PERMISSION_DENIED, 'access-denied', 'Access Denied');

/** Expected revision as the `expected-version` trailer spells it (EventStoreDB's long: -1 no stream, -2 any, -4 exists). */
export function expectedVersionTrailer(expected: ExpectedState): string {
  switch (expected.kind) {
    case 'revision':
      return expected.revision.toString();
    case 'no_stream':
      return '-1';
    case 'any':
      return '-2';
    case 'stream_exists':
      return '-4';
  }
}

export function wrongExpectedVersionError(streamName: string, expected: ExpectedState, current: bigint | null) {
  return serverError(
    GrpcStatus.FAILED_PRECONDITION,
    'wrong-expected-version',
    `Append failed due to WrongExpectedVersion. Stream: ${streamName}`,
    {
      'stream-name': streamName,
      'expected-version': expectedVersionTrailer(expected),
      ...(current === null ? {} : { 'actual-version': current.toString() }),
    },
  );
}

export function streamDeletedError(streamName: string) {
  return serverError(GrpcStatus.FAILED_PRECONDITION, 'stream-deleted', `Event stream '${streamName}' is deleted.`, {
    'stream-name': streamName,
  });
}
