/**
 * One handler shape for every command: read the stream, decide, append with
 * the expected revision. Conflicts are re-decided on fresh state (bounded,
 * jittered); nothing is ever appended blindly.
 */
import { inject, injectable } from 'tsyringe';
import { ConcurrencyConflict, MailboxError } from '../errors';
import type { CommandMetadata } from '../commands/command';
import type { EventStore } from '../events/eventStore';
import { deterministicEventId } from '../events/eventIds';
import { checkNewEvent } from '../events/readEvent';
import type { MailboxEvent, NewEvent } from '../events/types';
import { CURRENT_SCHEMA_VERSION } from '../events/upcasters';
import { TOKENS } from '../tokens';
import { KeyedMutex } from './keyedMutex';
import { StreamStateCache } from './streamStateCache';

export interface StreamModel<S, E extends MailboxEvent> {
  initial: () => S;
  fold: (state: S, events: readonly E[]) => S;
}

export interface Handled<S, E> {
  state: S;
  appended: E[];
  position: bigint | null; // log position of the last appended event, null when nothing was appended
}

const MAX_ATTEMPTS = 10;
const UNAVAILABLE_RETRIES = 2;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const jitter = (attempt: number) => Math.random() * Math.min(50, 2 ** attempt);

@injectable()
export class CommandHandler {
  private readonly cache = new StreamStateCache();
  private readonly mutex = new KeyedMutex();

  constructor(@inject(TOKENS.EventStore) private readonly store: EventStore) {}

  /** The cached state of a stream without any I/O (it includes this process's own appends). */
  peek<S>(streamName: string): S | undefined {
    return this.cache.get<S>(streamName)?.state;
  }

  /** Current state of a stream: the cached fold plus whatever was appended since. */
  async load<S, E extends MailboxEvent>(streamName: string, model: StreamModel<S, E>): Promise<{ state: S; revision: bigint | null }> {
    const cached = this.cache.get<S>(streamName);
    const from = cached?.revision == null ? 0n : cached.revision + 1n;
    const fresh = await this.store.readStream(streamName, from);
    if (cached && fresh.length === 0) return cached;
    const state = model.fold(cached?.state ?? model.initial(), fresh as unknown as E[]);
    const entry = { state, revision: fresh.length ? fresh[fresh.length - 1].revision : cached?.revision ?? null };
    this.cache.set(streamName, entry);
    return entry;
  }

  async handle<S, E extends MailboxEvent>(
    streamName: string,
    model: StreamModel<S, E>,
    metadata: CommandMetadata,
    decide: (state: S) => E[] | MailboxError | Promise<E[] | MailboxError>,
  ): Promise<Handled<S, E>> {
    return this.mutex.run(streamName, async () => {
      // A stream this process holds no state for (e.g. a new message) is first assumed not to exist: no read,
      // and the append's 'no_stream' lets the store check that atomically. Any other outcome (an error,
      // nothing to do, a conflict) is answered only after a real read. Saves a store read per send.
      let assumeNew = this.cache.get(streamName) === undefined;
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
          const result = await this.appendRetryingUnavailable(streamName, events, revision);
          const next = model.fold(state, decision);
          this.cache.set(streamName, { state: next, revision: result.nextExpectedRevision });
          return { state: next, appended: decision, position: result.position };
        } catch (error) {
          // 4. Conflict: another writer got there first (or the stream existed after all); re-decide on fresh state.
          if (!(error instanceof ConcurrencyConflict)) throw error;
          if (assumeNew) {
            assumeNew = false;
            attempt--;
            continue;
          }
          if (attempt >= MAX_ATTEMPTS) {
            throw new MailboxError('CONCURRENCY_CONFLICT', 'Concurrency conflict',
              `Stream ${streamName} kept changing during ${MAX_ATTEMPTS} attempts; retry the request.`, { stream: streamName });
          }
          await sleep(jitter(attempt));
        }
      }
    });
  }

  private async appendRetryingUnavailable(streamName: string, events: NewEvent[], revision: bigint | null) {
    for (let retry = 0; ; retry++) {
      try {
        return await this.store.append(streamName, events, revision === null ? 'no_stream' : revision);
      } catch (error) {
        // The acknowledgement may have been lost after the write: the same event ids make the retry safe.
        const transient = error instanceof MailboxError && error.code === 'UNAVAILABLE';
        if (!transient || retry >= UNAVAILABLE_RETRIES) throw error;
        await sleep(jitter(retry + 3));
      }
    }
  }

  private toNewEvent(event: MailboxEvent, index: number, metadata: CommandMetadata): NewEvent {
    return {
      eventId: deterministicEventId(metadata.commandId, index),
      type: event.type,
      data: event.data,
      metadata: {
        commandId: metadata.commandId, correlationId: metadata.correlationId, causationId: metadata.causationId,
        actor: metadata.actor.identity, at: metadata.at, schemaVersion: CURRENT_SCHEMA_VERSION,
      },
    } as NewEvent;
  }
}
