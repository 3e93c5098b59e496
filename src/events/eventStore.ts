/** The event store port: a few operations every adapter (memory, SQLite, EventStoreDB) implements alike. */
import type { NewEvent, StoredEvent } from './types';

/** 'no_stream': must not exist yet; 'any': no check; a bigint: the revision of the stream's last event. */
export type ExpectedRevision = 'no_stream' | 'any' | bigint;

export interface AppendResult {
  nextExpectedRevision: bigint; // revision of the stream's last event after the append
  position: bigint; // global log position of the last appended event
}

export interface EventSubscription extends AsyncIterable<StoredEvent> {
  close(): Promise<void>;
}

export interface EventStore {
  /**
   * True when an append expecting 'no_stream' is refused on every stream written before: nothing deletes a stream under
   * the mailbox (SQLite, memory). False (EventStoreDB) or absent: a soft-deleted stream may take such an append, undeleted
   * by it, its earlier events hidden for good; so a writer claims a stream new without reading it first only when it
   * generated the stream's name just now (CommandHandler.handle's freshName), never a name that may have been used.
   */
  readonly noStreamNeverUndeletes?: boolean;
  /**
   * Appends atomically (all or nothing) if the stream is at `expected`;
   * otherwise throws ConcurrencyConflict. Re-appending events whose ids are
   * already at those positions succeeds without writing (de-duplication).
   */
  append(streamName: string, events: readonly NewEvent[], expected: ExpectedRevision): Promise<AppendResult>;
  /** Events of one stream in order, from a revision (inclusive); [] when the stream does not exist. */
  readStream(streamName: string, fromRevision?: bigint): Promise<StoredEvent[]>;
  /** One page of the ordered log of mailbox events strictly after `after` (null: from the start). */
  readAll(after: bigint | null, limit: number): Promise<StoredEvent[]>;
  /** Catch-up then live subscription to the ordered log, strictly after `after`. */
  subscribe(after: bigint | null): EventSubscription;
  /** Position of the newest mailbox event, or null for an empty log. */
  headPosition(): Promise<bigint | null>;
  /**
   * How many mailbox events the log holds after `after` (null: from the start) up to `through` (inclusive), counted up
   * to `atMost` (atMost: that many or more). Positions are not counts: EventStoreDB's are byte offsets in its log.
   */
  countEvents(after: bigint | null, through: bigint, atMost: number): Promise<number>;
  /**
   * The name of the stream that holds the event with this id, or null when none does. Optional: a store that cannot
   * look an event up by its id (EventStoreDB) leaves it out, and callers say less (get_message naming a task).
   */
  streamOfEvent?(eventId: string): Promise<string | null>;
  /**
   * This log's identity: given once when the log is created and kept with it
   * (a new, emptied or other log has another one). Projections record it, so
   * that views of one log are never served or overwritten as another's.
   */
  logIdentity(): Promise<string>;
  close(): Promise<void>;
}

export const describeExpected = (expected: ExpectedRevision): string =>
  typeof expected === 'bigint' ? expected.toString() : expected;
