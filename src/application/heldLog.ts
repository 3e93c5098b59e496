/**
 * The event log a process started on, held to: once the log's identity reads as another (an EventStoreDB database
 * reset or replaced while the mailbox runs), nothing more is appended to it from this process: every write is refused
 * (503 UNAVAILABLE, saying why and what to do) instead of being acknowledged into a log this process does not know.
 * Found: after the double was reset, sends were accepted (201) and written into the new log on the strength of the
 * old log's registry (an agent the new log never registered), with a stale seen mark beside them.
 *
 * The identity is read where it is needed anyway (the mailbox's start, the projector when the views stand ahead of
 * the log): no read is added to any write. Reads are left to the views, which refuse another log's (viewsOwnership).
 */
import { type MailboxError, operatorNeeded } from '../errors';
import type { AppendResult, EventStore, EventSubscription, ExpectedRevision } from '../events/eventStore';
import type { NewEvent, StoredEvent } from '../events/types';

export class HeldLog implements EventStore {
  /** The identity this process started on (the first one read). */
  private startedOn: string | null = null;
  /** Set once the identity read as another: every append is refused with it. */
  private replaced: MailboxError | null = null;

  /** As the log's: a held EventStoreDB log is read before a stream is claimed new, as the log itself would be. */
  readonly noStreamNeverUndeletes: boolean;

  /** `log`: the adapter itself (a benchmark's trace reaches into it). */
  constructor(readonly log: EventStore) {
    this.noStreamNeverUndeletes = log.noStreamNeverUndeletes === true;
  }

  async logIdentity(): Promise<string> {
    const identity = await this.log.logIdentity();
    if (this.startedOn === null) this.startedOn = identity;
    else if (identity !== this.startedOn && this.replaced === null) this.replaced = logReplaced(this.startedOn, identity);
    return identity;
  }

  append(streamName: string, events: readonly NewEvent[], expected: ExpectedRevision): Promise<AppendResult> {
    if (this.replaced !== null) return Promise.reject(this.replaced);
    return this.log.append(streamName, events, expected);
  }

  readStream(streamName: string, fromRevision?: bigint): Promise<StoredEvent[]> {
    return this.log.readStream(streamName, fromRevision);
  }

  readAll(after: bigint | null, limit: number): Promise<StoredEvent[]> {
    return this.log.readAll(after, limit);
  }

  subscribe(after: bigint | null): EventSubscription {
    return this.log.subscribe(after);
  }

  headPosition(): Promise<bigint | null> {
    return this.log.headPosition();
  }

  countEvents(after: bigint | null, through: bigint, atMost: number): Promise<number> {
    return this.log.countEvents(after, through, atMost);
  }

  async streamOfEvent(eventId: string): Promise<string | null> {
    return (await this.log.streamOfEvent?.(eventId)) ?? null;
  }

  close(): Promise<void> {
    return this.log.close();
  }
}

function logReplaced(startedOn: string, now: string): MailboxError {
  return operatorNeeded(
    `The event log changed under this server: it started on log ${startedOn}, and the event store now holds log ${now} ` +
      '(reset or replaced while the mailbox ran). Nothing was written: this server writes no more until it is ' +
      "restarted on the log as it is now (its views are another log's until taken over: mailbox projections rebuild --take-over).",
    'restart the server on the log as it is now',
    { logIdentity: now, startedOn },
  );
}
