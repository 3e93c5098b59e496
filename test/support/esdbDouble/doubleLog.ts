/**
 * The test double's storage: one ordered log ($all) and per-stream views of
 * it, with EventStoreDB's rules for expected revisions, idempotent (repeated)
 * writes, soft deletes and tombstones. Pure in-memory state; the gRPC
 * services in this folder translate it to and from the wire.
 *
 * Positions imitate EventStoreDB 20+: every event written over gRPC has
 * commit position == prepare position == its own byte offset in the
 * transaction log. Offsets grow by the record's size, so they are unique and
 * increasing but not consecutive (an adapter that computes position + 1 fails here).
 */
import { randomUUID } from 'node:crypto';
import { idempotentRepeat, matches, type ExpectedState } from './expectedRevision';

export type { ExpectedState } from './expectedRevision';

export interface ProposedEvent {
  id: string;
  type: string;
  contentType: string;
  data: Uint8Array;
  customMetadata: Uint8Array;
}

export interface LogRecord extends ProposedEvent {
  streamName: string;
  revision: bigint;
  position: bigint;
  createdTicks: bigint; // .NET ticks (100 ns) since the Unix epoch, as the server sends them
}

interface StreamState {
  records: LogRecord[]; // every record ever written to the stream, in revision order
  truncateBefore: bigint; // soft delete: revisions below this are no longer readable (every one: DELETED_STREAM)
  softDeleted: boolean; // deleted (soft) and not written to since: the next write undeletes it
  tombstoned: boolean;
}

export type AppendOutcome =
  | { kind: 'success'; currentRevision: bigint; position: { commit: bigint; prepare: bigint } | null }
  | { kind: 'wrong_expected_version'; current: bigint | null; expected: ExpectedState }
  | { kind: 'stream_deleted' };

export type DeleteOutcome =
  | { kind: 'success'; position: bigint }
  | { kind: 'wrong_expected_version'; current: bigint | null; expected: ExpectedState }
  | { kind: 'stream_deleted' };

const FIRST_POSITION = 4096n; // the real log starts after epoch and system records too
const RECORD_OVERHEAD = 88n;
const TOMBSTONE_REVISION = (1n << 63n) - 1n; // EventStoreDB's tombstone event number (long.MaxValue)
/** EventStoreDB's EventNumber.DeletedStream (long.MaxValue): the `$tb` a soft delete writes, hiding every event. */
const DELETED_STREAM = (1n << 63n) - 1n;
const textBytes = (text: string) => Buffer.from(text, 'utf8');

export class DoubleLog {
  readonly records: LogRecord[] = [];
  /** Append requests received (writes, repeats and refusals alike), e.g. to see that a client retried. */
  appendRequests = 0;
  /** The stream each one-shot read and each append request named, in order (what a command cost, stream by stream). */
  readonly streamCalls: Array<{ call: 'read' | 'append'; stream: string }> = [];
  private readonly streams = new Map<string, StreamState>();
  private nextPosition = FIRST_POSITION;
  private listeners = new Set<() => void>();

  /**
   * Revision of the stream's last event, or null when it has none (never written). As the server's write check sees
   * it: a soft-deleted stream keeps its last revision (its events are hidden from reads, not from the revision check).
   */
  currentRevision(streamName: string): bigint | null {
    const stream = this.streams.get(streamName);
    if (!stream || stream.records.length === 0) return null;
    return stream.records[stream.records.length - 1].revision;
  }

  /**
   * The server's commit check (IndexWriter.CheckCommit), soft deletes included: a soft-deleted stream takes a write
   * expecting its last revision, `any`, or no stream (the one case where "no stream" passes on a stream with events),
   * and refuses one expecting that it exists (stream deleted). Such a write undeletes it (StorageWriterService's
   * SoftUndeleteStream): its metadata's `$tb` becomes the write's first revision, so the events before stay hidden.
   */
  append(streamName: string, expected: ExpectedState, events: readonly ProposedEvent[]): AppendOutcome {
    this.appendRequests++;
    this.streamCalls.push({ call: 'append', stream: streamName });
    const stream = this.streams.get(streamName);
    if (stream?.tombstoned) return { kind: 'stream_deleted' };
    const softDeleted = stream?.softDeleted === true;
    if (softDeleted && expected.kind === 'stream_exists') return { kind: 'stream_deleted' };
    const current = this.currentRevision(streamName);
    const idempotent = idempotentRepeat(stream?.records, expected, events);
    if (idempotent !== undefined) return idempotent;
    const acceptedAsNew = softDeleted && expected.kind === 'no_stream';
    if (!acceptedAsNew && !matches(expected, current)) return { kind: 'wrong_expected_version', current, expected };
    if (events.length === 0) return { kind: 'success', currentRevision: current ?? -1n, position: null };
    const state = stream ?? this.createStream(streamName);
    // A soft-deleted stream continues numbering after its last revision.
    let revision = current ?? -1n;
    const first = this.nextPosition;
    let last = first;
    for (const event of events) {
      last = this.write({ ...event, streamName, revision: ++revision }, state);
    }
    if (softDeleted) {
      const recreatedFrom = (current ?? -1n) + 1n;
      state.softDeleted = false;
      state.truncateBefore = recreatedFrom;
      this.writeMetadata(streamName, recreatedFrom);
    }
    this.notify();
    // As EventStoreDB reports it: commit = the last event's position, prepare = the transaction's first.
    return { kind: 'success', currentRevision: revision, position: { commit: last, prepare: first } };
  }

  /**
   * Soft delete: reads of the stream stop finding its events; a later append re-creates it, numbering on. The server
   * records it as the stream's metadata in the system stream $$<name>: `$tb` (truncate before) = long.MaxValue.
   */
  softDelete(streamName: string, expected: ExpectedState): DeleteOutcome {
    const stream = this.streams.get(streamName);
    if (stream?.tombstoned) return { kind: 'stream_deleted' };
    const current = this.currentRevision(streamName);
    if (!matches(expected, current)) return { kind: 'wrong_expected_version', current, expected };
    const state = stream ?? this.createStream(streamName);
    state.truncateBefore = DELETED_STREAM;
    state.softDeleted = true;
    return { kind: 'success', position: this.writeMetadata(streamName, DELETED_STREAM) };
  }

  /** The stream's metadata event ($$<name>, `$metadata`) with its truncation, spelled as the server writes the long. */
  private writeMetadata(streamName: string, truncateBefore: bigint): bigint {
    return this.writeSystem(`$$${streamName}`, '$metadata', `{"$tb":${truncateBefore}}`);
  }

  /**
   * An operator's mend of a soft-deleted stream (its events restored from a backup): readable again from its start, and
   * a write expecting it to exist is taken. Its metadata says nothing is hidden (`$tb` 0).
   */
  restore(streamName: string): void {
    const stream = this.streams.get(streamName);
    if (!stream?.softDeleted) throw new Error(`${streamName} is not soft-deleted: nothing to restore`);
    stream.softDeleted = false;
    stream.truncateBefore = 0n;
    this.writeMetadata(streamName, 0n);
  }

  /** Hard delete: the stream can never be read or written again. */
  tombstone(streamName: string, expected: ExpectedState): DeleteOutcome {
    const existing = this.streams.get(streamName);
    if (existing?.tombstoned) return { kind: 'stream_deleted' };
    const current = this.currentRevision(streamName);
    if (!matches(expected, current)) return { kind: 'wrong_expected_version', current, expected };
    const stream = existing ?? this.createStream(streamName);
    const position = this.write(
      {
        id: randomUUID(),
        type: '$streamDeleted',
        contentType: 'application/octet-stream',
        data: new Uint8Array(),
        customMetadata: new Uint8Array(),
        streamName,
        revision: TOMBSTONE_REVISION,
      },
      stream,
    );
    stream.tombstoned = true;
    this.notify();
    return { kind: 'success', position };
  }

  /**
   * An event the server itself writes (stats, settings, metadata): in $all, in a `$`-prefixed stream. `data` is
   * written as JSON; text is taken as JSON already (a long beyond a double's precision, as the server spells it).
   */
  writeSystem(streamName: string, type: string, data: unknown): bigint {
    const stream = this.streams.get(streamName) ?? this.createStream(streamName);
    const revision = BigInt(stream.records.length);
    const position = this.write(
      {
        id: randomUUID(),
        type,
        contentType: 'application/json',
        data: textBytes(typeof data === 'string' ? data : JSON.stringify(data)),
        customMetadata: new Uint8Array(),
        streamName,
        revision,
      },
      stream,
    );
    this.notify();
    return position;
  }

  /** 'not_found' | 'deleted' (tombstoned) | the readable records of a stream. */
  streamRecords(streamName: string): LogRecord[] | 'not_found' | 'deleted' {
    const stream = this.streams.get(streamName);
    if (!stream) return 'not_found';
    if (stream.tombstoned) return 'deleted';
    const visible = stream.records.filter((record) => record.revision >= stream.truncateBefore);
    return visible.length === 0 ? 'not_found' : visible;
  }

  /** Index in `records` of the first record whose position is >= `position`. */
  indexAtOrAfter(position: bigint): number {
    let low = 0;
    let high = this.records.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (this.records[mid].position < position) low = mid + 1;
      else high = mid;
    }
    return low;
  }

  /** Forgets every record and stream, as a node whose database was deleted (positions start again). */
  clear(): void {
    this.records.length = 0;
    this.streams.clear();
    this.nextPosition = FIRST_POSITION;
    this.appendRequests = 0;
    this.streamCalls.length = 0;
  }

  /** Calls `listener` after every write until the returned function is called. */
  onAppend(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private createStream(streamName: string): StreamState {
    const state: StreamState = { records: [], truncateBefore: 0n, softDeleted: false, tombstoned: false };
    this.streams.set(streamName, state);
    return state;
  }

  private write(event: Omit<LogRecord, 'position' | 'createdTicks'>, stream: StreamState): bigint {
    const position = this.nextPosition;
    const record: LogRecord = { ...event, position, createdTicks: BigInt(Date.now()) * 10_000n };
    this.records.push(record);
    stream.records.push(record);
    const size =
      RECORD_OVERHEAD + BigInt(event.data.length + event.customMetadata.length + event.streamName.length + event.type.length);
    this.nextPosition += size;
    return position;
  }

  private notify(): void {
    for (const listener of [...this.listeners]) listener();
  }
}
