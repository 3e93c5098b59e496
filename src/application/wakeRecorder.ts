/**
 * Records the wakes that reached a recipient (the delivery ledger's `woken`
 * stage) off the request path: an observation is queued synchronously, and
 * queued observations are appended together as WakeObserved events every
 * `flushMs` (or at once when `maxBatch` are waiting), to DELIVERY_STREAM with
 * no expected revision (they decide nothing). Only the first observation of a
 * (message, recipient) in this process is kept; the read model keeps the first
 * in the log anyway. An append that fails is retried with the next flush (the
 * queue is bounded: beyond it, observations are dropped, counted (on /metrics)
 * and said in the log, never a reason to hold a wake back: they were dropped
 * without a word). A process killed before a flush loses at most
 * one interval of observations: the ledger then says "not woken", which is
 * what it can prove. A stream refused for what only an operator mends is tried again REFUSED_RETRY_MS after its last
 * try by the injected clock, as the seen marks' are (it waited a real 5 s timer: a test, or a host whose clock is not
 * the wall's, could not move it), and once more at close.
 */
import type { Logger } from 'pino';
import type { EventStore } from '../events/eventStore';
import { deterministicEventId, newCommandId } from '../events/eventIds';
import { DELIVERY_STREAM } from '../events/streams';
import type { NewEvent, WakeVia } from '../events/types';
import { CURRENT_SCHEMA_VERSION } from '../events/upcasters';
import type { Clock } from './runtime';
import { REFUSED_RETRY_MS, refusalOf, refusedSince, type StreamRefusal } from './refusedStreams';
import { StoreOutage } from '../support/storeOutage';

export interface WakeRecorderOptions {
  /** How long an observation may wait for its batch (default 100 ms). */
  flushMs?: number;
  /** A batch this large is appended at once (default 500). */
  maxBatch?: number;
  /** Observations kept waiting while the store does not answer, at most (default 100,000). */
  maxQueued?: number;
  /**
   * (message, recipient) pairs remembered as recorded, at most (default 200,000): then the memory starts afresh, so it
   * never grows with the messages a long-lived process sees; a repeat after that costs one event, which the read model
   * ignores (it keeps the first observation in the log).
   */
  remembered?: number;
  /** Who the events name as their actor (e.g. 'system:api', 'system:heartbeat'). */
  actor: string;
}

interface Observation {
  messageId: string;
  recipient: string;
  via: WakeVia;
  at: string;
}

/** (message, recipient) pairs remembered as recorded, at most; then the memory starts afresh (a repeat costs one event). */
const REMEMBERED = 200_000;

export class WakeRecorder {
  private queue: Observation[] = [];
  private readonly recorded = new Set<string>();
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> | null = null;
  private readonly flushMs: number;
  private readonly maxBatch: number;
  private readonly maxQueued: number;
  private readonly remembered: number;
  /** Observations dropped because the queue was full (the store did not answer for long). */
  dropped = 0;
  /**
   * Of `dropped`, those since the delivery stream last took an append (or since this recorder began): a refusal seen
   * later counts them as its own (its `dropped`, the heartbeat's wakes_refused alarm), for they were dropped while the
   * stream took nothing (refused already, the refusal not seen yet until a flush tried it). The alarm counted only the
   * drops after the refusal was seen: a tick's wakes beyond the bound, dropped before its flush, were missing from it.
   */
  private droppedUnwritten = 0;
  /** WakeObserved events appended by this recorder. */
  appended = 0;
  /** The store refuses the delivery stream for what only an operator mends: said once, until an append lands. */
  private refused: Omit<StreamRefusal, 'waiting'> | null = null;
  /** When (the clock, ms) the refused stream was last tried: tried again REFUSED_RETRY_MS after (null: not refused). */
  private refusedTriedAt: number | null = null;
  /** Closing: the refused stream is tried once more, whenever it was last tried. */
  private closing = false;
  /** A store that does not answer: said once at warn, the failed batches after it at debug, its answer again at info. */
  private readonly outage: StoreOutage;

  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly options: WakeRecorderOptions,
  ) {
    this.flushMs = options.flushMs ?? 100;
    this.maxBatch = options.maxBatch ?? 500;
    this.maxQueued = options.maxQueued ?? 100_000;
    this.remembered = options.remembered ?? REMEMBERED;
    this.outage = new StoreOutage(logger, () => clock.now().getTime(), {
      down: 'observed wakes (the delivery ledger): the event store does not answer; the observations are kept and written once it does',
      stillDown: 'observed wakes (the delivery ledger): the event store still does not answer',
      back: 'observed wakes (the delivery ledger): the event store answers again; the observations kept are written',
      stoppedAsking: 'observed wakes (the delivery ledger): no longer written',
      failuresField: 'retries',
    });
  }

  /** A wake reached `recipient` for `messageId`: queued, appended with the next batch. Never throws, never waits. */
  observed(messageId: string, recipient: string, via: WakeVia): void {
    const key = `${messageId} ${recipient}`;
    if (this.recorded.has(key)) return;
    if (this.queue.length >= this.maxQueued) {
      this.drop();
      return;
    }
    if (this.recorded.size >= this.remembered) this.recorded.clear();
    this.recorded.add(key);
    this.queue.push({ messageId, recipient, via, at: this.clock.now().toISOString() });
    if (this.queue.length >= this.maxBatch && this.refused === null) void this.flush();
    else this.timer ??= setTimeout(() => void this.flush(), this.flushMs);
  }

  /** Appends what is queued (one append per `maxBatch`); resolves when done. A failed append stays queued. */
  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.flushing ??= this.drain().finally(() => {
      this.flushing = null;
      if (this.queue.length > 0) this.timer ??= setTimeout(() => void this.flush(), this.flushMs);
    });
    return this.flushing;
  }

  /** A refused stream is tried again REFUSED_RETRY_MS (the clock) after its last try, not at every flush interval. */
  private retryDue(): boolean {
    return this.refusedTriedAt === null || this.closing || this.clock.now().getTime() - this.refusedTriedAt >= REFUSED_RETRY_MS;
  }

  /** The delivery stream refused for what only an operator mends (/readyz, the heartbeat's /healthz name it), or null. */
  refusal(): StreamRefusal | null {
    return this.refused === null ? null : { ...this.refused, waiting: this.queue.length };
  }

  /**
   * An observation the full queue could not keep: counted (on /metrics) and said at the first, then each 10,000th (it
   * was only counted: an operator saw nothing). The delivery ledger will show that wake as not woken.
   */
  private drop(): void {
    this.dropped += 1;
    this.droppedUnwritten += 1;
    if (this.refused !== null) this.refused.dropped += 1;
    if (this.dropped !== 1 && this.dropped % 10_000 !== 0) return;
    const why =
      this.refused === null
        ? 'the event store has not taken them for long (is it down?)'
        : `the store refuses ${DELIVERY_STREAM} (an operator must act: ${this.refused.operatorAction})`;
    this.logger.error(
      { stream: DELIVERY_STREAM, dropped: this.dropped, waiting: this.queue.length },
      `could not record observed wakes (the delivery ledger): ${this.queue.length} wait to be written, as many as are ` +
        `kept, and ${why}; new ones are not recorded (the ledger will show those wakes as not woken)`,
    );
  }

  async close(): Promise<void> {
    this.closing = true;
    await this.flushing;
    await this.flush();
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private async drain(): Promise<void> {
    if (!this.retryDue()) return;
    while (this.queue.length > 0) {
      const batch = this.queue.slice(0, this.maxBatch);
      const commandId = newCommandId(); // one batch, one command: unique event ids (nothing to de-duplicate by)
      const at = this.clock.now().toISOString();
      const events = batch.map((o, index): NewEvent => ({
        eventId: deterministicEventId(commandId, index),
        type: 'WakeObserved',
        data: { messageId: o.messageId, recipient: o.recipient, via: o.via, observedAt: o.at },
        metadata: {
          commandId,
          correlationId: commandId,
          causationId: commandId,
          actor: this.options.actor,
          at,
          schemaVersion: CURRENT_SCHEMA_VERSION,
        },
      }));
      try {
        await this.store.append(DELIVERY_STREAM, events, 'any');
        this.outage.answered();
        this.taken();
        this.droppedUnwritten = 0;
      } catch (error) {
        // The stream refused for what no retry mends (EventStoreDB: deleted under the mailbox, which a write would
        // undelete, hiding the observations before for good): said once, at error, with the remedy; kept, nothing written.
        const refusal = refusalOf(error, DELIVERY_STREAM);
        if (refusal !== null) {
          // An answer: a store that did not answer before is back (its downMs ends here, not when the stream is mended).
          this.outage.answeredRefusing(
            `observed wakes (the delivery ledger): the event store answers again and refuses ${DELIVERY_STREAM}; the observations are kept`,
          );
          this.refusedTriedAt = this.clock.now().getTime();
          if (this.refused === null) {
            this.refused = {
              ...refusedSince('delivery ledger', DELIVERY_STREAM, refusal, this.clock.now().toISOString()),
              dropped: this.droppedUnwritten,
            };
            const { operatorAction } = this.refused;
            this.logger.error(
              { stream: DELIVERY_STREAM, waiting: this.queue.length, reason: refusal.message, operatorAction },
              `could not record observed wakes (the delivery ledger): ${refusal.message} An operator must act: ` +
                `${operatorAction} The observations are kept (up to the queue's bound), nothing written.`,
            );
          }
          return;
        }
        // A store that does not answer is said once (then at debug, and once when it answers again): it was said with
        // the whole error at every retry, every 100 ms for as long as the store was down.
        if (!this.outage.failed(error, { waiting: this.queue.length }))
          this.logger.warn(
            { err: error, waiting: this.queue.length },
            'could not record observed wakes (the delivery ledger); retrying with the next batch',
          );
        return;
      }
      this.queue = this.queue.slice(batch.length);
      this.appended += batch.length;
    }
  }

  /** The delivery stream took an append: a refusal said before is over, and said so. */
  private taken(): void {
    if (this.refused === null) return;
    const { since, dropped } = this.refused;
    this.refused = null;
    this.refusedTriedAt = null;
    this.logger.info(
      { stream: DELIVERY_STREAM, refusedSince: since, dropped },
      `observed wakes (the delivery ledger): ${DELIVERY_STREAM} takes them again; the observations kept are written`,
    );
  }
}
