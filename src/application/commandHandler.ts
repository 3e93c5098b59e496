/**
 * One handler shape for every command: read the stream, decide, append with
 * the expected revision. Conflicts are re-decided on fresh state (bounded,
 * jittered); nothing is ever appended blindly.
 */
import { inject, injectable } from 'tsyringe';
import { ConcurrencyConflict, MailboxError, needsOperator } from '../errors';
import type { CommandMetadata } from '../commands/command';
import type { EventStore } from '../events/eventStore';
import { deterministicEventId } from '../events/eventIds';
import { checkNewEvent } from '../events/readEvent';
import type { MailboxEvent, NewEvent, StoredEvent } from '../events/types';
import { CURRENT_SCHEMA_VERSION } from '../events/upcasters';
import { backoffDelay, retry, sleep, type Backoff } from '../support/retry';
import { TOKENS } from '../tokens';
import { KeyedMutex } from './keyedMutex';
import { StreamLoader, type StreamModel } from './streamLoader';

/** Appends are failing as UNAVAILABLE (a full disk, a store that is down): since when, and what the last one said. */
export interface WriteFailure {
  message: string;
  since: string;
}

export interface Handled<S, E> {
  state: S;
  appended: E[];
  position: bigint | null; // log position of the last appended event, null when nothing was appended
}

const MAX_ATTEMPTS = 10;
/** Writers that conflicted together retry at spread-out times (full jitter), never longer than 50 ms apart. */
const CONFLICT_BACKOFF: Backoff = { initialDelayMs: 2, maxDelayMs: 50, jitter: 1 };
const UNAVAILABLE_ATTEMPTS = 3;
const UNAVAILABLE_BACKOFF: Backoff = { initialDelayMs: 8, maxDelayMs: 50, jitter: 1 };
/**
 * The write side's stream states: enough streams for the messages of the last few seconds at full speed (a read,
 * archive or reply of a fresh message needs no read of its stream), and at most 32 MiB of them however large the
 * messages (streamStateCache.ts).
 */
const WRITE_SIDE_CACHE = { maxEntries: 20_000, maxBytes: 32 * 1024 * 1024 };

@injectable()
export class CommandHandler {
  private readonly streams: StreamLoader;
  private readonly mutex = new KeyedMutex();
  /** Set by an append that failed as UNAVAILABLE, cleared by the next one that lands (readiness reports it). */
  private failing: WriteFailure | null = null;

  constructor(@inject(TOKENS.EventStore) private readonly store: EventStore) {
    this.streams = new StreamLoader(store, WRITE_SIDE_CACHE);
  }

  /** Whether the last append failed as UNAVAILABLE (null: the last one landed, or none failed). */
  writeFailure(): WriteFailure | null {
    return this.failing;
  }

  /** The cached state of a stream without any I/O (it includes this process's own appends). */
  peek<S>(streamName: string): S | undefined {
    return this.streams.peek<S>(streamName)?.state;
  }

  /** A stream's events as stored, metadata included (a retried command reads back what its first run wrote). */
  events(streamName: string): Promise<StoredEvent[]> {
    return this.store.readStream(streamName);
  }

  /** The stream holding an event, by its id (null: none, or a store that cannot say: EventStore.streamOfEvent). */
  async streamOfEvent(eventId: string): Promise<string | null> {
    return (await this.store.streamOfEvent?.(eventId)) ?? null;
  }

  /** Current state of a stream: the cached fold plus whatever was appended since. */
  load<S, E extends MailboxEvent>(streamName: string, model: StreamModel<S, E>): Promise<{ state: S; revision: bigint | null }> {
    return this.streams.load(streamName, model);
  }

  /**
   * `freshName`: the caller generated the stream's name just now for this command (a send's new message id), so no
   * stream of that name was ever written or deleted.
   */
  async handle<S, E extends MailboxEvent>(
    streamName: string,
    model: StreamModel<S, E>,
    metadata: CommandMetadata,
    decide: (state: S) => E[] | MailboxError | Promise<E[] | MailboxError>,
    { freshName = false }: { freshName?: boolean } = {},
  ): Promise<Handled<S, E>> {
    return this.mutex.run(streamName, async () => {
      // A stream this process holds no state for (e.g. a new message) is first assumed not to exist: no read,
      // and the append's 'no_stream' lets the store check that atomically. Any other outcome (an error,
      // nothing to do, a conflict) is answered only after a real read. Saves a store read per send.
      // Not on EventStoreDB for a name that may have been used before (a send repeated with its idempotency key on a
      // node that never read it, a task's stream, the agent registry): a soft-deleted stream takes 'no_stream' and is
      // undeleted by it, its earlier events hidden for good (the write was then answered Operator action needed, its
      // event stored). Read first, the deleted stream is refused (Operator action needed) with nothing written.
      let assumeNew = this.streams.peek(streamName) === undefined && (freshName || this.store.noStreamNeverUndeletes === true);
      for (let attempt = 1; ; attempt++) {
        // 1. Read: the folded state and the revision it is at.
        const { state, revision } = assumeNew ? { state: model.initial(), revision: null } : await this.load(streamName, model);
        // 2. Decide: pure; an error means nothing is appended.
        const decision = await decide(state);
        if (assumeNew && (decision instanceof MailboxError || decision.length === 0)) {
          assumeNew = false;
          attempt--;
          continue;
        }
        if (decision instanceof MailboxError) throw decision;
        if (decision.length === 0) return { state, appended: [], position: null };
        // 3. Append with the expected revision; ids are deterministic so a retried append de-duplicates.
        const events = decision.map((event, index) => this.toNewEvent(event, index, metadata));
        for (const event of events) checkNewEvent(event, streamName); // what would not read back is never written
        try {
          const result = await this.appendRetryingUnavailable(streamName, events, revision).catch((error: unknown) => {
            if (error instanceof MailboxError && error.code === 'UNAVAILABLE')
              this.failing = { message: error.message, since: this.failing?.since ?? metadata.at };
            throw error;
          });
          this.failing = null;
          const next = model.fold(state, decision);
          this.streams.remember(streamName, { state: next, revision: result.nextExpectedRevision });
          return { state: next, appended: decision, position: result.position };
        } catch (error) {
          // 4. Conflict: another writer got there first (or the stream existed after all); re-decide on fresh state.
          if (!(error instanceof ConcurrencyConflict)) throw error;
          if (assumeNew) {
            assumeNew = false;
            attempt--;
            continue;
          }
          // Every append was refused by the store's revision check: none of these events is in the stream, so the
          // caller is told it may send the request again (decided afresh), not left to wonder whether it landed.
          if (attempt >= MAX_ATTEMPTS) {
            throw new MailboxError(
              'CONCURRENCY_CONFLICT',
              'Concurrency conflict',
              `Stream ${streamName} kept changing while this request was decided: each of its ${MAX_ATTEMPTS} attempts ` +
                'found another write there first, and none of its events was written to it. Retrying is safe: the ' +
                'request is decided again on the stream as it is then.',
              { stream: streamName },
            );
          }
          await sleep(backoffDelay(CONFLICT_BACKOFF, attempt));
        }
      }
    });
  }

  private appendRetryingUnavailable(streamName: string, events: NewEvent[], revision: bigint | null) {
    // The acknowledgement may have been lost after the write: the same event ids make the retry safe. A refusal only an
    // operator mends is no lost acknowledgement: said as it came. Retried, a soft-deleted stream that took the write
    // (EventStoreDB: "no stream" passes on it, and undeletes it) was answered "the request was not applied", its event
    // stored.
    return retry(() => this.store.append(streamName, events, revision === null ? 'no_stream' : revision), {
      attempts: UNAVAILABLE_ATTEMPTS,
      backoff: UNAVAILABLE_BACKOFF,
      retryable: (error) => error instanceof MailboxError && error.code === 'UNAVAILABLE' && !needsOperator(error),
    });
  }

  private toNewEvent(event: MailboxEvent, index: number, metadata: CommandMetadata): NewEvent {
    return {
      eventId: deterministicEventId(metadata.commandId, index),
      type: event.type,
      data: event.data,
      metadata: {
        commandId: metadata.commandId,
        correlationId: metadata.correlationId,
        causationId: metadata.causationId,
        actor: metadata.actor.identity,
        at: metadata.at,
        schemaVersion: CURRENT_SCHEMA_VERSION,
      },
    } as NewEvent;
  }
}
