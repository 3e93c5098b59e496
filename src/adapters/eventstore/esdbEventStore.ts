/**
 * The event store port on EventStoreDB (the production store). Appends state
 * the expected revision every time and carry our deterministic event ids, so
 * the server de-duplicates a retried append; every call has a deadline; $all is
 * read forwards in bounded pages and followed by a filtered catch-up
 * subscription. Client-generation differences live in esdbClientCompat.ts,
 * event and position mapping in esdbEvents.ts, error translation in esdbErrors.ts.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { AppendResult, EventStore, EventSubscription, ExpectedRevision } from '../../events/eventStore';
import { ConcurrencyConflict, isMailboxError, needsOperator } from '../../errors';
import { MAILBOX_STREAM_PREFIX } from '../../events/streams';
import type { NewEvent, StoredEvent } from '../../events/types';
import { CompatClient, type EsdbClient, type EsdbFilter, type EsdbReadPosition, type ResolvedAllEvent } from './esdbClientCompat';
import {
  isStreamDeleted,
  isStreamNotFound,
  streamEventsGone,
  streamUndeletedByWrite,
  translateAppendError,
  translateError,
  translateReadOfAllError,
  withDeadline,
} from './esdbErrors';
import { LOG_IDENTITY_EVENT, LOG_IDENTITY_STREAM, logIdentityEvent, logIdentityOf } from './esdbLogIdentity';
import { drainWithProgressDeadline, readRetryingReset } from './esdbReads';
import { isMailboxRecord, positionOf, toEventData, toReadPosition, toStoredEvent } from './esdbEvents';
import { esdbSettings } from './esdbSettings';
import { EsdbEventCount } from './esdbEventCount';
import { DEFAULT_RESUBSCRIBE, EsdbCatchUpSubscription, type ResubscribePolicy } from './esdbSubscription';

export interface EsdbEventStoreOptions {
  /** How many $all events one read request asks for. */
  readPageSize?: number;
  resubscribe?: ResubscribePolicy;
  logger?: Logger;
}

const DEFAULT_PAGE_SIZE = 1000;
/** EventStoreDB's largest event number (long.MaxValue): a soft delete's `$tb`, read by JSON as a float above it. */
const MAX_REVISION = Number((1n << 63n) - 1n);
/** The head's first backwards page (headPosition). */
const FIRST_HEAD_PAGE = 8;
/** An unchecked append's rounds of "exists? no: new? no: exists?" at most (appendUnchecked). */
const UNCHECKED_ROUNDS = 3;

type EsdbAppendResult = Awaited<ReturnType<EsdbClient['appendToStream']>>;

export class EsdbEventStore implements EventStore {
  /** A soft-deleted stream takes an append expecting no stream, and is undeleted by it (EventStore.noStreamNeverUndeletes). */
  readonly noStreamNeverUndeletes = false;
  private readonly pageSize: number;
  private readonly filter: EsdbFilter;
  private readonly counter: EsdbEventCount;

  constructor(
    private readonly compat: CompatClient,
    private readonly deadlineMs: number,
    private readonly options: EsdbEventStoreOptions = {},
  ) {
    this.pageSize = options.readPageSize ?? DEFAULT_PAGE_SIZE;
    // Server-side: only streams under the mailbox prefix (system streams start with '$').
    this.filter = compat.module.streamNameFilter({ prefixes: [MAILBOX_STREAM_PREFIX] });
    this.counter = new EsdbEventCount(
      (after, limit) => this.readAllAs(after, limit, (_, position) => ({ position })),
      this.pageSize,
    );
  }

  /** Connects (lazily: the first call dials) to `esdb://...` or `kurrentdb://...`. */
  static connect(url: string, options: EsdbEventStoreOptions = {}): EsdbEventStore {
    const settings = esdbSettings(url);
    const compat = CompatClient.connect(settings.connectionString);
    options.logger?.info({ client: compat.description, deadlineMs: settings.deadlineMs }, 'event store: EventStoreDB');
    return new EsdbEventStore(compat, settings.deadlineMs, options);
  }

  async append(streamName: string, events: readonly NewEvent[], expected: ExpectedRevision): Promise<AppendResult> {
    const result =
      expected === 'any' ? await this.appendUnchecked(streamName, events) : await this.appendAs(streamName, events, expected);
    const nextExpectedRevision = result.nextExpectedRevision;
    if (result.position) return { nextExpectedRevision, position: result.position.commit };
    // No position: nothing was written. For a de-duplicated repeat, report where its events are;
    // for an empty append (which only checked the expected revision), the head of the log.
    const position =
      events.length > 0 ? await this.positionOfRevision(streamName, nextExpectedRevision) : ((await this.headPosition()) ?? 0n);
    return { nextExpectedRevision, position };
  }

  /**
   * An append without a check ('any': the seen marks, the delivery ledger, which decide nothing). EventStoreDB takes an
   * `any` write on a soft-deleted stream and undeletes it, hiding its earlier events for good; it refuses one expecting
   * the stream to exist (stream-deleted). So `any` is sent as "the stream exists": the same one call on the hot path (a
   * live stream takes it as it takes `any`, de-duplication alike), no read before it and nothing cached, and a
   * soft-deleted stream is refused with nothing written. Only a stream's first write costs a second call: refused as
   * missing, it is sent expecting no stream (which a soft-deleted stream would take, but one was just found missing,
   * not deleted; a delete in between is caught from the write's result, appendAs).
   */
  private async appendUnchecked(streamName: string, events: readonly NewEvent[]): Promise<EsdbAppendResult> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.appendAs(streamName, events, 'stream_exists');
      } catch (error) {
        if (!(error instanceof ConcurrencyConflict)) throw error; // expecting it to exist: only a missing stream conflicts
      }
      try {
        return await this.appendAs(streamName, events, 'no_stream');
      } catch (error) {
        // Created by another writer in between: an existing stream again (bounded: each round, someone else wrote).
        if (!(error instanceof ConcurrencyConflict) || attempt >= UNCHECKED_ROUNDS) throw error;
      }
    }
  }

  /** One append call, its refusals translated: a stream-deleted answer is told a soft delete from a tombstone. */
  private async appendAs(
    streamName: string,
    events: readonly NewEvent[],
    expected: Exclude<ExpectedRevision, 'any'> | 'stream_exists',
  ): Promise<EsdbAppendResult> {
    let result: EsdbAppendResult;
    try {
      const call = this.compat.client.appendToStream(
        streamName,
        events.map(toEventData),
        this.compat.appendOptions(expected, this.deadlineMs),
      );
      result = await withDeadline(call, this.deadlineMs, `append to ${streamName}`);
    } catch (error) {
      if (isStreamDeleted(error)) {
        // Tombstoned, or soft-deleted (refused only to a write expecting the stream to exist): its metadata says which.
        const truncatedBefore = await this.truncatedBefore(streamName).catch(() => null);
        if (truncatedBefore !== null) throw streamEventsGone(streamName, truncatedBefore, null);
      }
      throw translateAppendError(error, streamName, expected);
    }
    if (expected === 'no_stream') refuseUndeleted(streamName, result, events.length);
    return result;
  }

  async readStream(streamName: string, fromRevision = 0n): Promise<StoredEvent[]> {
    return this.readStreamEvents(streamName, fromRevision);
  }

  /**
   * One page of mailbox events strictly after `after`. $all also holds system
   * events; where the client cannot filter reads server-side (6.x) they are
   * skipped here, reading further bounded pages until `limit` mailbox events
   * or the end of the log.
   */
  async readAll(after: bigint | null, limit: number): Promise<StoredEvent[]> {
    return this.readAllAs(after, limit, toStoredEvent);
  }

  /**
   * readAll's page, each event as `as` makes it: the count of the views' lag takes only its position, so a stored event
   * this build cannot read is counted, not a failure of /readyz's and /metrics' count (/metrics answered 500).
   */
  private async readAllAs<T>(
    after: bigint | null,
    limit: number,
    as: (event: Parameters<typeof toStoredEvent>[0], position: bigint) => T,
  ): Promise<T[]> {
    const page: T[] = [];
    let from: bigint | null = after;
    while (page.length < limit) {
      // A forwards read from a position includes the event at it: ask for one more than is still wanted.
      const overlap = from === null ? 0 : 1;
      const maxCount = Math.min(this.pageSize, limit - page.length) + overlap;
      const batch = await this.readAllBatch(
        from === null ? this.compat.module.START : toReadPosition(from),
        maxCount,
        'forwards',
      );
      for (const resolved of batch) {
        const event = resolved.event;
        if (!event) continue;
        const position = positionOf(event);
        if (from !== null && position <= from) continue;
        from = position;
        if (isMailboxRecord(event) && page.length < limit) page.push(as(event, position));
      }
      if (batch.length < maxCount) break; // the end of the log
    }
    return page;
  }

  subscribe(after: bigint | null): EventSubscription {
    return new EsdbCatchUpSubscription(
      this.compat,
      this.filter,
      after,
      this.options.resubscribe ?? DEFAULT_RESUBSCRIBE,
      this.options.logger,
    );
  }

  /**
   * Position of the newest mailbox event: read $all backwards in bounded pages past any system events. The first page
   * is small and each next one twice as large, up to the page size: the newest event is nearly always a mailbox one or
   * a few system events before it, and a first page of the full size made the server send a thousand events for one
   * (each /readyz, /metrics scrape and heartbeat tick reads the head).
   */
  async headPosition(): Promise<bigint | null> {
    let from: EsdbReadPosition = this.compat.module.END;
    let size = Math.min(FIRST_HEAD_PAGE, this.pageSize);
    for (;;) {
      const batch = await this.readAllBatch(from, size, 'backwards');
      for (const resolved of batch) {
        if (resolved.event && isMailboxRecord(resolved.event)) return positionOf(resolved.event);
      }
      const last = batch[batch.length - 1]?.event;
      if (batch.length < size || !last) return null;
      from = toReadPosition(positionOf(last)); // backwards reads are exclusive of their starting position
      size = Math.min(size * 2, this.pageSize);
    }
  }

  /**
   * $all's positions are byte offsets in the server's log, hundreds apart for one event: counted by reading the events
   * after `after`, in pages, up to `through` or `atMost` of them (bounded), remembering what was read so that the next
   * count reads only the events appended since (esdbEventCount.ts).
   */
  async countEvents(after: bigint | null, through: bigint, atMost: number): Promise<number> {
    return this.counter.count(after, through, atMost);
  }

  /**
   * The identity stream is written once, with expected revision no-stream: of
   * two concurrent creators one wins, the other gets a wrong expected version
   * and reads the winner's. Its name is outside the mailbox prefix, so the log
   * and its subscription never carry it.
   */
  async logIdentity(): Promise<string> {
    const existing = await this.readLogIdentity();
    if (existing !== null) return existing;
    const identity = randomUUID();
    const events = logIdentityEvent(identity);
    let result: EsdbAppendResult;
    try {
      const call = this.compat.client.appendToStream(
        LOG_IDENTITY_STREAM,
        events,
        this.compat.appendOptions('no_stream', this.deadlineMs),
      );
      result = await withDeadline(call, this.deadlineMs, `append to ${LOG_IDENTITY_STREAM}`);
    } catch (error) {
      const translated = translateAppendError(error, LOG_IDENTITY_STREAM, 'no_stream');
      if (!(translated instanceof ConcurrencyConflict)) throw translated;
      const winner = await this.readLogIdentity();
      if (winner === null)
        throw translateError(new Error(`${LOG_IDENTITY_STREAM} exists but holds no ${LOG_IDENTITY_EVENT} event`));
      return winner;
    }
    // The identity soft-deleted between the look and this write (another start wrote it, then it was deleted): the node
    // took the write and undeleted the stream, and the log would start again under a second identity, its views then
    // another log's. Refused, as a start on a soft-deleted identity is.
    refuseUndeleted(LOG_IDENTITY_STREAM, result, events.length);
    return identity;
  }

  private async readLogIdentity(): Promise<string | null> {
    try {
      const read = await readRetryingReset(() =>
        this.drain(
          this.compat.client.readStream(LOG_IDENTITY_STREAM, { fromRevision: this.compat.module.START, maxCount: 1 }),
          `read of ${LOG_IDENTITY_STREAM}`,
        ),
      );
      return read.length === 0 ? null : logIdentityOf(read[0].event);
    } catch (error) {
      if (!isStreamNotFound(error)) throw translateError(error);
    }
    // Not found: a new log, or its identity soft-deleted (a write would then give the log a second identity, and its
    // views would read as another log's).
    const truncatedBefore = await this.truncatedBefore(LOG_IDENTITY_STREAM);
    if (truncatedBefore !== null) throw streamEventsGone(LOG_IDENTITY_STREAM, truncatedBefore, null);
    return null;
  }

  async close(): Promise<void> {
    await this.compat.client.dispose();
  }

  private readAllBatch(
    fromPosition: EsdbReadPosition,
    maxCount: number,
    direction: 'forwards' | 'backwards',
  ): Promise<ResolvedAllEvent[]> {
    return readRetryingReset(
      () => this.drain(this.compat.readAll({ fromPosition, maxCount, direction, filter: this.filter }), 'read of $all'),
      translateReadOfAllError,
    );
  }

  private async positionOfRevision(streamName: string, revision: bigint): Promise<bigint> {
    const [event] = await this.readStreamEvents(streamName, revision, 1);
    if (!event) throw translateError(new Error(`${streamName} has no event at revision ${revision} after a successful append`));
    return event.position;
  }

  /** Events of a stream from a revision (inclusive); [] when the stream does not exist. */
  private async readStreamEvents(streamName: string, fromRevision: bigint, maxCount?: number): Promise<StoredEvent[]> {
    const options: Parameters<EsdbClient['readStream']>[1] = {
      fromRevision: fromRevision === 0n ? this.compat.module.START : fromRevision,
      ...(maxCount ? { maxCount } : {}),
    };
    const read = await readRetryingReset(() =>
      this.drain(this.compat.client.readStream(streamName, options), `read of ${streamName}`),
    ).catch(async (error: unknown) => {
      if (!isStreamNotFound(error)) throw error; // StreamNotFound passed through untranslated
      // Not found: never written, or its events deleted (a soft delete) under the mailbox. Read as "none", the second
      // was answered 404 for messages that had been acknowledged, and a command decided on an empty stream wrote to it
      // (EventStoreDB takes an append to a soft-deleted stream and hides its earlier events for good).
      const truncatedBefore = await this.truncatedBefore(streamName);
      if (truncatedBefore !== null) throw streamEventsGone(streamName, truncatedBefore, null);
      return null;
    });
    if (read === null) return [];
    // A read from a revision starts at it: a first event past it means the events between were deleted (a soft
    // delete, then an append that made the stream readable again from its own revision on).
    const first = read[0]?.event;
    if (first && first.revision > fromRevision) throw streamEventsGone(streamName, first.revision, fromRevision);
    return read.map((resolved) => toStoredEvent(resolved.event!));
  }

  /**
   * The stream's truncation (`$tb` in its metadata stream `$$<stream>`) when one hides events, else null. A soft
   * delete sets it to the largest revision (every event hidden); the next append sets it to that append's first
   * revision. The mailbox never sets it. A metadata stream this user may not read says nothing (null).
   */
  private async truncatedBefore(streamName: string): Promise<bigint | null> {
    const metadataStream = `$$${streamName}`;
    const read = await readRetryingReset(() =>
      this.drain(
        this.compat.client.readStream(metadataStream, {
          direction: this.compat.module.BACKWARDS,
          fromRevision: this.compat.module.END,
          maxCount: 1,
        }),
        `read of ${metadataStream}`,
      ),
    ).catch((error: unknown) => {
      if (isStreamNotFound(error) || (isMailboxError(error) && needsOperator(error))) return [];
      throw error;
    });
    const truncateBefore = (read[0]?.event?.data as { $tb?: unknown } | undefined)?.$tb;
    return typeof truncateBefore === 'number' && truncateBefore > 0 ? BigInt(Math.min(truncateBefore, MAX_REVISION)) : null;
  }

  private drain<E>(read: AsyncIterable<E>, what: string): Promise<E[]> {
    return drainWithProgressDeadline(read, this.deadlineMs, what, () => this.compat.stopReading(read));
  }
}

/**
 * A write expecting no stream lands at revision 0 on a new stream. Further on, the node took it on a soft-deleted one
 * (the look before it found nothing deleted: a delete in between) and undeleted it, hiding the events before. Learnt
 * from the result, at no cost: the write is done, and said as what it did (Operator action needed), never passed as a
 * success.
 */
function refuseUndeleted(streamName: string, result: EsdbAppendResult, written: number): void {
  if (result.position && result.nextExpectedRevision >= BigInt(written))
    throw streamUndeletedByWrite(streamName, result.nextExpectedRevision - BigInt(written) + 1n);
}
