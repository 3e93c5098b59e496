/**
 * Catch-up subscription to $all for the port's subscribe(after): the server
 * filters to mailbox streams, the adapter consumes with `for await` (so a slow
 * projector slows the gRPC stream down instead of buffering without bound), and
 * a dropped subscription (server restart, connection reset, leader change) is
 * re-opened from the last delivered position with exponential backoff. After
 * `attempts` consecutive failures the error is raised (UNAVAILABLE), so the
 * projection runner logs it and retries from its own checkpoint.
 */
import type { Logger } from 'pino';
import { backoffDelay, sleep, type Backoff } from '../../support/retry';
import type { EventSubscription } from '../../events/eventStore';
import type { StoredEvent } from '../../events/types';
import { InvalidStoredEvent } from '../../events/readEvent';
import type { CompatClient, EsdbFilter, EsdbSubscription } from './esdbClientCompat';
import { causeOf, isMailboxError, needsOperator } from '../../errors';
import { translateReadOfAllError } from './esdbErrors';
import { isMailboxRecord, positionOf, toReadPosition, toStoredEvent } from './esdbEvents';

export interface ResubscribePolicy {
  attempts: number;
  initialBackoffMs: number;
  maxBackoffMs: number;
}

export const DEFAULT_RESUBSCRIBE: ResubscribePolicy = { attempts: 5, initialBackoffMs: 100, maxBackoffMs: 2000 };

/** Some jitter, so that the projectors of several nodes dropped by one server restart do not come back in step. */
const backoffOf = (policy: ResubscribePolicy): Backoff => ({
  initialDelayMs: policy.initialBackoffMs,
  maxDelayMs: policy.maxBackoffMs,
  jitter: 0.2,
});

/** An event the subscription cannot turn into a mailbox event: fatal, never retried as if it were a drop. */
class UnreadableEvent extends Error {}

export class EsdbCatchUpSubscription implements EventSubscription {
  private closed = false;
  private current: EsdbSubscription | null = null;
  /** Aborted by close(): ends a pending backoff at once. */
  private readonly closing = new AbortController();

  constructor(
    private readonly compat: CompatClient,
    private readonly filter: EsdbFilter,
    private checkpoint: bigint | null,
    private readonly policy: ResubscribePolicy,
    private readonly logger?: Logger,
  ) {}

  [Symbol.asyncIterator](): AsyncIterator<StoredEvent> {
    return this.events();
  }

  async close(): Promise<void> {
    this.closed = true;
    this.closing.abort();
    if (this.current) await release(this.current);
  }

  private async *events(): AsyncGenerator<StoredEvent> {
    let failures = 0;
    /** Confirmed by the server (or delivering) since the last failure: its drop is news, said at warn. */
    let live = false;
    while (!this.closed) {
      let cause: unknown = new Error('the server ended the subscription');
      const subscription = this.open();
      subscription.on('confirmation', () => {
        failures = 0;
        live = true;
      });
      try {
        for await (const resolved of subscription) {
          const event = resolved.event;
          if (!event || !isMailboxRecord(event)) continue;
          const stored = convert(event);
          // After a resubscription the server may repeat the checkpoint's neighbourhood; deliver each position once.
          if (this.checkpoint !== null && stored.position <= this.checkpoint) continue;
          this.checkpoint = stored.position;
          failures = 0;
          live = true;
          yield stored;
          if (this.closed) return;
        }
      } catch (error) {
        if (error instanceof UnreadableEvent || error instanceof InvalidStoredEvent) throw error;
        cause = error;
      } finally {
        await release(subscription);
      }
      if (this.closed) return;
      const translated = translateReadOfAllError(cause); // a right to read $all refused is said as that
      // A refusal no resubscription mends (the right to read $all taken away, the node ending the subscription with
      // access denied): raised at once, so the projector says an operator must act. It was logged as a drop,
      // "resubscribing from the last delivered position", and tried again `attempts` times first.
      if (isMailboxError(translated) && needsOperator(translated)) throw translated;
      if (++failures > this.policy.attempts) throw translated;
      const backoff = Math.round(backoffDelay(backoffOf(this.policy), failures));
      // A live subscription that drops is said once, at warn, with the server's words and no stack (a gRPC stack says
      // nothing of the outage); its retries, and those of a subscription the server never confirmed (the projector
      // resubscribing while the server is still down), are at debug: each retry was a warn line with the whole stack,
      // five every few seconds for as long as the server was down. The projector says the outage once (projectionRunner).
      const fields = {
        cause: causeOf(translated),
        attempt: failures,
        retryInMs: backoff,
        checkpoint: this.checkpoint?.toString() ?? null,
      };
      if (live) this.logger?.warn(fields, 'EventStoreDB subscription dropped; resubscribing from the last delivered position');
      else this.logger?.debug(fields, 'EventStoreDB subscription: resubscribing failed; trying again');
      live = false;
      await sleep(backoff, this.closing.signal);
    }
  }

  private open(): EsdbSubscription {
    const fromPosition = this.checkpoint === null ? this.compat.module.START : toReadPosition(this.checkpoint);
    const subscription = this.compat.client.subscribeToAll({ fromPosition, filter: this.filter });
    this.current = subscription;
    return subscription;
  }
}

function convert(event: Parameters<typeof toStoredEvent>[0]): StoredEvent {
  try {
    return toStoredEvent(event, positionOf(event));
  } catch (error) {
    // Passed on as it is: the projector tells a stored event it cannot read by its class (it names where and what).
    throw error instanceof InvalidStoredEvent ? error : new UnreadableEvent((error as Error).message);
  }
}

/** Cancels the gRPC call and ends the stream; safe to call twice and when the call never started. */
async function release(subscription: EsdbSubscription): Promise<void> {
  try {
    await subscription.unsubscribe();
  } catch {
    // the call had already failed: nothing left to cancel
  }
  subscription.destroy();
}
