/**
 * Seen marks (issue 13): a message is seen the first time it is returned to its recipient (a list page
 * or a get). The request only notes it here, in memory; the marks are written later, off the request
 * path, as one MessagesSeen event per recipient per flush (at most MAX_PER_EVENT ids each), in the
 * recipient's seen stream. Nothing decides on them: the read model keeps the first seenAt and ignores
 * the rest, so a mark noted twice (a second listing before the views caught up) costs only its bytes.
 *
 * A failed write keeps the marks for the next flush; beyond MAX_PENDING unwritten marks, new ones are
 * refused with a logged warning (the count is kept in `dropped`), so a long store outage cannot grow
 * the process without bound. A store that does not answer (EventStoreDB stopped) is said once, then at debug, and
 * once more when it answers again (support/storeOutage.ts): each retry (every MAILBOX_SEEN_FLUSH_MS) logged a warn
 * line with the whole gRPC stack, five a second for as long as the log was down.
 */
import { inject, injectable } from 'tsyringe';
import type { Logger } from 'pino';
import type { MailboxConfig } from '../config';
import { isMailboxError, needsOperator, type MailboxError } from '../errors';
import { deterministicEventId } from '../events/eventIds';
import type { EventStore } from '../events/eventStore';
import { checkNewEvent } from '../events/readEvent';
import { seenStream } from '../events/streams';
import type { NewEvent } from '../events/types';
import { CURRENT_SCHEMA_VERSION } from '../events/upcasters';
import { StoreOutage } from '../support/storeOutage';
import { TOKENS } from '../tokens';
import type { Clock, IdGenerator } from './runtime';

/** Ids per MessagesSeen event: a 200-message page is one event, a long backlog a few of bounded size. */
export const MAX_PER_EVENT = 500;
const MAX_PENDING = 100_000;
/** (recipient, message) pairs noted lately: a page listed again before the views show its marks is not noted again. */
const RECENT_CAPACITY = 50_000;

@injectable()
export class SeenMarks {
  /** recipient -> message id -> when it was first returned (pending, not yet written). */
  private pending = new Map<string, Map<string, string>>();
  private pendingCount = 0;
  private readonly recent = new Map<string, true>();
  private timer: NodeJS.Timeout | null = null;
  private writing: Promise<bigint | null> = Promise.resolve(null);
  /** Recipients of the batch being written now: their marks are noted but not yet in the log. */
  private inFlight: ReadonlySet<string> = new Set();
  /** The log position of the last mark event this process wrote (null: none yet). */
  lastPosition: bigint | null = null;
  private closed = false;
  /** Marks refused because too many were waiting to be written. */
  dropped = 0;
  /** Events and marks written by this process (bench: the write load of seen marks). */
  readonly written = { events: 0, marks: 0 };
  /** The event store not answering, said once (support/storeOutage.ts). */
  private readonly outage: StoreOutage;
  /** Recipients whose seen stream the store refuses for what only an operator mends, said once each until it takes one. */
  private readonly refusedSaid = new Set<string>();

  constructor(
    @inject(TOKENS.EventStore) private readonly store: EventStore,
    @inject(TOKENS.Clock) private readonly clock: Clock,
    @inject(TOKENS.IdGenerator) private readonly ids: IdGenerator,
    @inject(TOKENS.Config) private readonly config: MailboxConfig,
    @inject(TOKENS.Logger) private readonly logger: Logger,
  ) {
    this.outage = new StoreOutage(logger, () => clock.now().getTime(), {
      down: 'seen marks: the event store does not answer; the marks noted are kept and written once it does',
      stillDown: 'seen marks: the event store still does not answer',
      back: 'seen marks: the event store answers again; the marks kept are written',
      stoppedAsking: 'seen marks: no longer written',
      failuresField: 'retries',
    });
  }

  /** The messages were just returned to `recipient`: marks them seen, soon (never waits). */
  note(recipient: string, messageIds: readonly string[]): void {
    if (messageIds.length === 0 || this.closed) return;
    const at = this.clock.now().toISOString();
    let marks = this.pending.get(recipient);
    for (const messageId of messageIds) {
      const key = `${recipient} ${messageId}`;
      if (this.recent.has(key)) continue;
      if (this.pendingCount >= MAX_PENDING) {
        if (this.dropped++ === 0 || this.dropped % 10_000 === 0) {
          this.logger.warn(
            { dropped: this.dropped, pending: this.pendingCount },
            'seen marks: too many waiting to be written (is the event store down?); new marks are not recorded',
          );
        }
        continue;
      }
      if (!marks) this.pending.set(recipient, (marks = new Map()));
      if (marks.has(messageId)) continue;
      marks.set(messageId, at);
      this.pendingCount++;
      this.remember(key);
    }
    if (this.pendingCount > 0 && this.timer === null) {
      this.timer = setTimeout(() => {
        this.timer = null;
        void this.flush();
      }, this.config.seenFlushMs);
      this.timer.unref();
    }
  }

  /** Writes every mark noted so far; resolves with the log position of the last event written (null: none). */
  flush(): Promise<bigint | null> {
    this.writing = this.writing.then(() => this.writePending());
    return this.writing;
  }

  /** Whether marks noted for `recipient` are not in the log yet (pending, or in the batch being written). */
  unwritten(recipient: string): boolean {
    return this.pending.has(recipient) || this.inFlight.has(recipient);
  }

  /** Writes what is pending and stops taking marks. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.flush();
  }

  private remember(key: string): void {
    this.recent.set(key, true);
    if (this.recent.size > RECENT_CAPACITY) this.recent.delete(this.recent.keys().next().value!);
  }

  private async writePending(): Promise<bigint | null> {
    const batch = this.pending;
    this.pending = new Map();
    this.pendingCount = 0;
    this.inFlight = new Set(batch.keys());
    let last: bigint | null = null;
    for (const [recipient, marks] of batch) {
      // One event per chunk; the chunk's seenAt is its earliest mark (the first time any of them was returned).
      const entries = [...marks];
      for (let start = 0; start < entries.length; start += MAX_PER_EVENT) {
        const chunk = entries.slice(start, start + MAX_PER_EVENT);
        try {
          last = this.lastPosition = await this.append(recipient, chunk);
          this.outage.answered();
          this.refusedSaid.delete(recipient);
        } catch (error) {
          for (const [messageId, at] of entries.slice(start)) this.requeue(recipient, messageId, at);
          const marks = entries.length - start;
          if (isMailboxError(error) && needsOperator(error) && error.envelope.stream === seenStream(recipient))
            this.sayRefused(recipient, marks, error);
          else if (!this.outage.failed(error, { recipient, marks }))
            this.logger.warn({ err: error, recipient, marks }, 'seen marks: not written; retried shortly');
          break;
        }
      }
    }
    this.inFlight = new Set();
    if (this.pendingCount > 0 && this.timer === null && !this.closed) {
      this.timer = setTimeout(() => {
        this.timer = null;
        void this.flush();
      }, this.config.seenFlushMs);
      this.timer.unref();
    }
    return last;
  }

  /**
   * The store answered and refused the recipient's seen stream for what no retry mends (EventStoreDB: the stream
   * deleted under the mailbox; a write would undelete it and hide the marks before for good): said once, at error,
   * naming the stream and the remedy, not as a store that does not answer. The marks are kept (and tried each flush:
   * nothing is written while the stream stays deleted); the other recipients' marks are written as before.
   */
  private sayRefused(recipient: string, marks: number, error: MailboxError): void {
    if (this.refusedSaid.has(recipient)) return;
    this.refusedSaid.add(recipient);
    const operatorAction = String(error.envelope.operatorAction);
    this.logger.error(
      { recipient, stream: seenStream(recipient), marks, reason: error.message, operatorAction },
      `seen marks: not written to ${seenStream(recipient)} (kept, nothing written): ${error.message} ` +
        `An operator must act: ${operatorAction}`,
    );
  }

  private requeue(recipient: string, messageId: string, at: string): void {
    let marks = this.pending.get(recipient);
    if (!marks) this.pending.set(recipient, (marks = new Map()));
    if (!marks.has(messageId)) {
      marks.set(messageId, at);
      this.pendingCount++;
    }
  }

  private async append(recipient: string, chunk: ReadonlyArray<[string, string]>): Promise<bigint> {
    const commandId = this.ids.next();
    let seenAt = chunk[0][1];
    for (const [, at] of chunk) if (at < seenAt) seenAt = at;
    const event = {
      eventId: deterministicEventId(commandId, 0),
      type: 'MessagesSeen',
      data: { recipient, seenAt, messageIds: chunk.map(([messageId]) => messageId) },
      metadata: {
        commandId,
        correlationId: commandId,
        causationId: commandId,
        actor: recipient,
        at: this.clock.now().toISOString(),
        schemaVersion: CURRENT_SCHEMA_VERSION,
      },
    } as NewEvent;
    const stream = seenStream(recipient);
    checkNewEvent(event, stream);
    const { position } = await this.store.append(stream, [event], 'any');
    this.written.events++;
    this.written.marks += chunk.length;
    return position;
  }
}
