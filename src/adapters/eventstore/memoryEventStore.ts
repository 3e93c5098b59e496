/** In-memory event store: the reference behaviour of the port, for tests and scratch rebuilds. Reads go through readEvent like every store's. */
import { randomUUID } from 'node:crypto';
import { ConcurrencyConflict } from '../../errors';
import {
  describeExpected,
  type AppendResult,
  type EventStore,
  type EventSubscription,
  type ExpectedRevision,
} from '../../events/eventStore';
import { readEvent } from '../../events/readEvent';
import type { NewEvent, StoredEvent } from '../../events/types';
import { AppendSignal } from './appendSignal';
import { localSubscription } from './localSubscription';
import { findDuplicateAppend } from './duplicateAppend';
import { consecutiveCount } from './consecutiveCount';

export class MemoryEventStore implements EventStore {
  /** Nothing deletes a stream here: 'no_stream' holds only for one never written. */
  readonly noStreamNeverUndeletes = true;
  private readonly log: StoredEvent[] = [];
  private readonly streams = new Map<string, StoredEvent[]>();
  /** Event id -> its stream (streamOfEvent: a lookup, not a scan of the log). */
  private readonly streamById = new Map<string, string>();
  private readonly signal = new AppendSignal();
  private readonly identity = randomUUID(); // a new log per instance

  async append(streamName: string, events: readonly NewEvent[], expected: ExpectedRevision): Promise<AppendResult> {
    const stream = this.streams.get(streamName) ?? [];
    const duplicate = findDuplicateAppend(stream, events);
    if (duplicate) return duplicate;
    const actual = stream.length === 0 ? 'no_stream' : BigInt(stream.length - 1);
    const matches = expected === 'any' || (expected === 'no_stream' ? actual === 'no_stream' : actual === expected);
    if (!matches) throw new ConcurrencyConflict(streamName, describeExpected(expected), String(actual));
    for (const event of events) {
      const stored: StoredEvent = {
        ...structuredClone(event),
        streamName,
        revision: BigInt(stream.length),
        position: BigInt(this.log.length + 1),
      };
      stream.push(stored);
      this.log.push(stored);
      this.streamById.set(stored.eventId, streamName);
    }
    this.streams.set(streamName, stream);
    if (events.length > 0) this.signal.notify();
    return { nextExpectedRevision: BigInt(stream.length - 1), position: BigInt(this.log.length) };
  }

  async readStream(streamName: string, fromRevision = 0n): Promise<StoredEvent[]> {
    return (this.streams.get(streamName) ?? []).slice(Number(fromRevision)).map(readEvent);
  }

  async streamOfEvent(eventId: string): Promise<string | null> {
    return this.streamById.get(eventId) ?? null;
  }

  async readAll(after: bigint | null, limit: number): Promise<StoredEvent[]> {
    const start = after === null ? 0 : Number(after); // position p is at index p - 1
    return this.log.slice(start, start + limit).map(readEvent);
  }

  subscribe(after: bigint | null): EventSubscription {
    return localSubscription((a, l) => this.readAll(a, l), this.signal, after);
  }

  async headPosition(): Promise<bigint | null> {
    return this.log.length === 0 ? null : BigInt(this.log.length);
  }

  async countEvents(after: bigint | null, through: bigint, atMost: number): Promise<number> {
    return consecutiveCount(after, through, atMost); // position p is the p-th event
  }

  async logIdentity(): Promise<string> {
    return this.identity;
  }

  async close(): Promise<void> {
    this.signal.releaseAll();
  }
}
