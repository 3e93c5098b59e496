/**
 * Seen marks (issue 13): a message is seen the first time it is returned to its recipient (a list page
 * or a get). The request only notes it here, in memory; the marks are written later, off the request
 * path, as one MessagesSeen event per recipient per flush (at most MAX_PER_EVENT ids each), in the
 * recipient's seen stream. Nothing decides on them: the read model keeps the first seenAt and ignores
 * the rest, so a mark noted twice (a second listing before the views caught up) costs only its bytes.
 *
 * A failed write keeps the marks for the next flush; beyond MAX_PENDING unwritten marks, new ones are
 * refused with a logged warning (the count is kept in `dropped`, on /metrics), so a long store outage cannot grow
 * the process without bound. A recipient's seen stream the store refuses for what only an operator mends (deleted under
 * the mailbox) keeps its marks apart, up to REFUSED_KEPT of them: its marks filled the shared bound, and then every
 * other recipient's new marks were dropped; /readyz names the stream (status "degraded"). Its marks are tried again every
 * REFUSED_RETRY_MS (the injected clock), as the delivery ledger's are, not at every flush (each 200 ms, for as long as
 * nobody acted), and written once an operator mends the stream. A store that does not answer (EventStoreDB stopped) is said once, then at debug, and
 * once more when it answers again (support/storeOutage.ts): each retry (every MAILBOX_SEEN_FLUSH_MS) logged a warn
 * line with the whole gRPC stack, five a second for as long as the log was down.
 */
import { inject, injectable } from 'tsyringe';
import type { Logger } from 'pino';
import type { MailboxConfig } from '../config';
import type { MailboxError } from '../errors';
import { deterministicEventId } from '../events/eventIds';
import type { EventStore } from '../events/eventStore';
import { checkNewEvent } from '../events/readEvent';
import { seenStream } from '../events/streams';
import type { NewEvent } from '../events/types';
import { CURRENT_SCHEMA_VERSION } from '../events/upcasters';
import { StoreOutage } from '../support/storeOutage';
import { TOKENS } from '../tokens';
import type { Clock, IdGenerator } from './runtime';
import { REFUSED_RETRY_MS, refusalOf, refusedSince, type StreamRefusal } from './refusedStreams';

/** Ids per MessagesSeen event: a 200-message page is one event, a long backlog a few of bounded size. */
export const MAX_PER_EVENT = 500;
const MAX_PENDING = 100_000;
/** Marks kept for one recipient whose seen stream the store refuses (all such recipients together: MAX_PENDING). */
export const REFUSED_KEPT = 10_000;
/** (recipient, message) pairs noted lately: a page listed again before the views show its marks is not noted again. */
const RECENT_CAPACITY = 50_000;

@injectable()
export class SeenMarks {
  /** recipient -> message id -> when it was first returned (pending, not yet written). */
  private pending = new Map<string, Map<string, string>>();
  private pendingCount = 0;
  /** Of pendingCount, the marks of refused recipients (kept apart: they never fill the bound of the others). */
  private refusedPending = 0;
  private readonly recent = new Map<string, true>();
  private timer: NodeJS.Timeout | null = null;
  private writing: Promise<bigint | null> = Promise.resolve(null);
  /** Recipients of the batch being written now, with their marks not yet in the log (none once written or pending again). */
  private inFlight = new Map<string, number>();
  /** The log position of the last mark event this process wrote (null: none yet). */
  lastPosition: bigint | null = null;
  private closed = false;
  /** Marks not recorded because too many were waiting to be written (a mark listed again is counted again). */
  dropped = 0;
  /** Events and marks written by this process (bench: the write load of seen marks). */
  readonly written = { events: 0, marks: 0 };
  /** The event store not answering, said once (support/storeOutage.ts). */
  private readonly outage: StoreOutage;
  /** Recipients whose seen stream the store refuses for what only an operator mends, said once each until it takes one. */
  private readonly refused = new Map<string, Omit<StreamRefusal, 'waiting'>>();
  /** When (the clock, ms) each refused recipient's marks were last tried: tried again REFUSED_RETRY_MS after. */
  private readonly refusedTriedAt = new Map<string, number>();
  /**
   * Per recipient, its marks dropped under the shared bound (MAX_PENDING) since its seen stream last took a write (or
   * since this process began): a refusal seen later counts them as its own `dropped` (/readyz, the "takes marks again"
   * line), for they were dropped while the stream took nothing (refused already, not tried yet). It counted only the
   * marks dropped after a flush met the refusal, as the delivery ledger's writer did (WakeRecorder.droppedUnwritten).
   */
  private readonly droppedUnwritten = new Map<string, number>();

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
      refused: {
        down: 'seen marks: the event store answers and refuses them; the marks noted are kept and written once it takes them',
        back: 'seen marks: the event store takes them again; the marks kept are written',
        stoppedAsking: 'seen marks: no longer written',
      },
    });
  }

  /** The messages were just returned to `recipient`: marks them seen, soon (never waits). */
  note(recipient: string, messageIds: readonly string[]): void {
    if (messageIds.length === 0 || this.closed) return;
    const at = this.clock.now().toISOString();
    let marks = this.pending.get(recipient);
    const refusal = this.refused.get(recipient);
    for (const messageId of messageIds) {
      const key = `${recipient} ${messageId}`;
      if (this.recent.has(key)) continue;
      if (refusal !== undefined) {
        if ((marks?.size ?? 0) >= REFUSED_KEPT || this.refusedPending >= MAX_PENDING) {
          this.droppedRefused(recipient, refusal);
          continue;
        }
      } else if (this.pendingCount - this.refusedPending >= MAX_PENDING) {
        this.droppedUnwritten.set(recipient, (this.droppedUnwritten.get(recipient) ?? 0) + 1);
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
      if (refusal !== undefined) this.refusedPending++;
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

  /**
   * Writes `recipient`'s unwritten marks now (after any batch being written), leaving the other recipients' to the
   * next flush; resolves with the log position the views must reach to show them (null: the recipient had none). A
   * count or a read-all waits for its caller's marks alone: with every recipient's, the first count after a burst of
   * listings by many agents waited seconds for all of their marks.
   */
  async writeFor(recipient: string): Promise<bigint | null> {
    if (!this.unwritten(recipient)) return null;
    this.writing = this.writing.then(() => this.writePending(recipient));
    await this.writing;
    return this.lastPosition; // also when its marks were in the batch already being written
  }

  /** The seen streams the store refuses for what only an operator mends (/readyz names them), oldest first. */
  refusals(): StreamRefusal[] {
    return [...this.refused].map(([recipient, refusal]) => ({
      ...refusal,
      // Those being written now too: a look during a flush said 0 of the 10,000 kept.
      waiting: (this.pending.get(recipient)?.size ?? 0) + (this.inFlight.get(recipient) ?? 0),
    }));
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

  /** Writes the pending marks (of `only`, when given); resolves with the position of the last event written. */
  private async writePending(only?: string): Promise<bigint | null> {
    // A refused recipient's marks stay pending until their next try is due (at close: tried once more).
    const now = this.clock.now().getTime();
    const batch = new Map<string, Map<string, string>>();
    for (const [recipient, marks] of this.pending) {
      if (only !== undefined && recipient !== only) continue;
      const triedAt = this.refusedTriedAt.get(recipient);
      if (triedAt !== undefined && now - triedAt < REFUSED_RETRY_MS && !this.closed) continue;
      batch.set(recipient, marks);
      this.pending.delete(recipient);
      this.pendingCount -= marks.size;
    }
    this.recountRefusedPending(); // held back: refused recipients' marks, and the others' when writing one recipient's
    this.inFlight = new Map([...batch].map(([recipient, marks]) => [recipient, marks.size]));
    let last: bigint | null = null;
    for (const [recipient, marks] of batch) {
      // One event per chunk; the chunk's seenAt is its earliest mark (the first time any of them was returned).
      const entries = [...marks];
      for (let start = 0; start < entries.length; start += MAX_PER_EVENT) {
        const chunk = entries.slice(start, start + MAX_PER_EVENT);
        try {
          last = this.lastPosition = await this.append(recipient, chunk);
          this.outage.answered();
          this.taken(recipient);
        } catch (error) {
          const marks = entries.length - start;
          const refusal = refusalOf(error, seenStream(recipient));
          if (refusal !== null) {
            // An answer: a store that did not answer before is back (its downMs ends here, not when the stream is mended).
            this.outage.answeredRefusing(
              `seen marks: the event store answers again and refuses ${seenStream(recipient)}; the marks are kept`,
            );
            this.sayRefused(recipient, marks, refusal);
            this.refusedTriedAt.set(recipient, this.clock.now().getTime());
          }
          for (const [messageId, at] of entries.slice(start)) this.requeue(recipient, messageId, at);
          if (refusal === null && !this.outage.failed(error, { recipient, marks }))
            this.logger.warn({ err: error, recipient, marks }, 'seen marks: not written; retried shortly');
          break;
        }
      }
      this.inFlight.delete(recipient); // in the log now, or pending again
    }
    // Recounted: a recipient refused or taken again while the batch was written moved its new marks between the bounds.
    this.recountRefusedPending();
    if (this.pendingCount > 0 && this.timer === null && !this.closed) {
      this.timer = setTimeout(() => {
        this.timer = null;
        void this.flush();
      }, this.config.seenFlushMs);
      this.timer.unref();
    }
    return last;
  }

  /** Of the pending marks, those of recipients whose seen stream is refused (they never fill the others' bound). */
  private recountRefusedPending(): void {
    this.refusedPending = 0;
    for (const recipient of this.refused.keys()) this.refusedPending += this.pending.get(recipient)?.size ?? 0;
  }

  /**
   * The store answered and refused the recipient's seen stream for what no retry mends (EventStoreDB: the stream
   * deleted under the mailbox; a write would undelete it and hide the marks before for good): said once, at error,
   * naming the stream and the remedy, not as a store that does not answer. The marks are kept (and tried again every
   * REFUSED_RETRY_MS: nothing is written while the stream stays deleted); the other recipients' marks are written as before.
   */
  private sayRefused(recipient: string, marks: number, error: MailboxError): void {
    if (this.refused.has(recipient)) return;
    const stream = seenStream(recipient);
    const refusal = {
      ...refusedSince('seen marks', stream, error, this.clock.now().toISOString()),
      dropped: this.droppedUnwritten.get(recipient) ?? 0,
    };
    const { operatorAction } = refusal;
    this.refused.set(recipient, refusal);
    this.logger.error(
      { recipient, stream, marks, reason: error.message, operatorAction },
      `seen marks: not written to ${stream} (kept, nothing written): ${error.message} ` +
        `An operator must act: ${operatorAction}`,
    );
  }

  /**
   * A mark of a refused recipient that its bound (REFUSED_KEPT) could not keep: counted in `dropped` (on /metrics) and
   * said once per refusal, at error, naming the stream: the sender's ledger will never show it seen.
   */
  private droppedRefused(recipient: string, refusal: Omit<StreamRefusal, 'waiting'>): void {
    this.dropped++;
    if (refusal.dropped++ > 0) return;
    this.logger.error(
      { recipient, stream: refusal.stream, kept: this.pending.get(recipient)?.size ?? 0, dropped: this.dropped },
      `seen marks: ${refusal.stream} is refused and holds as many kept marks as it may (${REFUSED_KEPT}); ` +
        `${recipient}'s new marks are not recorded until an operator acts (the other recipients' marks are)`,
    );
  }

  /** The recipient's seen stream took a write: a refusal said before is over, and said so. */
  private taken(recipient: string): void {
    this.droppedUnwritten.delete(recipient);
    const refusal = this.refused.get(recipient);
    if (refusal === undefined) return;
    this.refused.delete(recipient);
    this.refusedTriedAt.delete(recipient);
    this.logger.info(
      { recipient, stream: refusal.stream, refusedSince: refusal.since, dropped: refusal.dropped },
      `seen marks: ${refusal.stream} takes marks again; the marks kept are written`,
    );
  }

  private requeue(recipient: string, messageId: string, at: string): void {
    let marks = this.pending.get(recipient);
    if (!marks) this.pending.set(recipient, (marks = new Map()));
    if (!marks.has(messageId)) {
      marks.set(messageId, at);
      this.pendingCount++;
      if (this.refused.has(recipient)) this.refusedPending++;
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
