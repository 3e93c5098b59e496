/**
 * POSTs each nudge as JSON to the agent's own webhook, signed (see
 * webhookSignature.ts), retried with exponential backoff on network errors,
 * timeouts, 408, 429 and 5xx. Other answers are final: retrying a 404 cannot help.
 */
import type { Nudge } from '../nudgeDecider';
import type { DeliveryStatus, NudgeTarget } from '../nudgeTarget';
import { retry, type Sleep } from '../../support/retry';
import { NUDGE_ID_HEADER, SIGNATURE_HEADER, TIMESTAMP_HEADER, signWebhook } from './webhookSignature';

export interface WebhookOptions {
  /** Most POSTs per nudge, the first included. */
  attempts: number;
  /** Backoff: doubles from baseDelayMs up to maxDelayMs (a Retry-After the webhook asks for is honoured up to the cap). */
  baseDelayMs: number;
  maxDelayMs: number;
  /** identity -> URL */
  urls: ReadonlyMap<string, string>;
  secret: string;
  timeoutMs: number;
  onRetry?: (identity: string, attempt: number, error: unknown, delayMs: number) => void;
  nowSeconds?: () => number;
  sleep?: Sleep;
}

/** An answer that retrying cannot change (e.g. 404): the nudge fails at once. */
export class PermanentFailure extends Error {
  override readonly name = 'PermanentFailure';
}

class RetryableStatus extends Error {
  constructor(
    readonly status: number,
    readonly retryAfterMs: number | null,
  ) {
    super(`webhook answered HTTP ${status}`);
  }
}

const retryAfterMs = (header: string | null): number | null => {
  if (header === null) return null;
  const seconds = Number(header);
  return Number.isFinite(seconds) && seconds >= 0 ? seconds * 1000 : null;
};

export class WebhookTarget implements NudgeTarget {
  readonly name = 'webhook';

  /** Aborted by close(): a delivery still waiting to retry gives up rather than post after shutdown. */
  private readonly closing = new AbortController();

  constructor(private readonly options: WebhookOptions) {}

  appliesTo(identity: string): boolean {
    return this.options.urls.has(identity);
  }

  async deliver(nudge: Nudge): Promise<DeliveryStatus> {
    const url = this.options.urls.get(nudge.identity);
    if (url === undefined) throw new PermanentFailure(`no webhook configured for ${nudge.identity}`);
    const body = JSON.stringify(nudge);
    const { attempts, baseDelayMs, maxDelayMs } = this.options;
    await retry(() => this.post(url, nudge, body), {
      attempts,
      backoff: { initialDelayMs: baseDelayMs, maxDelayMs },
      retryable: (error) => !(error instanceof PermanentFailure),
      onRetry: (attempt, error, delay) => this.options.onRetry?.(nudge.identity, attempt, error, delay),
      requestedDelayMs: (error) => (error instanceof RetryableStatus ? error.retryAfterMs : null),
      signal: this.closing.signal,
      sleep: this.options.sleep,
    });
    return 'delivered';
  }

  private async post(url: string, nudge: Nudge, body: string): Promise<void> {
    const timestamp = this.options.nowSeconds?.() ?? Math.floor(Date.now() / 1000);
    let response: Response;
    try {
      response = await fetch(url, {
        method: 'POST',
        body,
        signal: AbortSignal.timeout(this.options.timeoutMs),
        headers: {
          'content-type': 'application/json',
          [TIMESTAMP_HEADER]: String(timestamp),
          [SIGNATURE_HEADER]: signWebhook(this.options.secret, timestamp, body),
          [NUDGE_ID_HEADER]: nudge.nudgeId,
        },
      });
    } catch (error) {
      if ((error as Error).name === 'TimeoutError') {
        // Not "unreachable": a receiver that took the connection and is slow fails this way too.
        throw new Error(
          `webhook ${url} did not answer within ${this.options.timeoutMs} ms (MAILBOX_HEARTBEAT_WEBHOOK_TIMEOUT): ` +
            'a slow or stuck receiver, or a host that never answers the connection',
          { cause: error },
        );
      }
      const cause = (error as { cause?: { code?: string } }).cause?.code;
      throw new Error(`webhook ${url} unreachable: ${(error as Error).message}${cause ? ` (${cause})` : ''}`, { cause: error });
    }
    await response.arrayBuffer().catch(() => undefined); // drain so the connection can be reused
    if (response.ok) return;
    if (response.status === 408 || response.status === 429 || response.status >= 500) {
      throw new RetryableStatus(response.status, retryAfterMs(response.headers.get('retry-after')));
    }
    throw new PermanentFailure(`webhook ${url} answered HTTP ${response.status}; not retrying`);
  }

  async close(): Promise<void> {
    this.closing.abort(new Error('webhook target closed'));
  }
}
