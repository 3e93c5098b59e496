/**
 * How long a wake stream may stay silent. A server sends a comment heartbeat every MAILBOX_SSE_HEARTBEAT_MS and names
 * that interval in the `x-mailbox-heartbeat-ms` header; a stream with no byte (an event or a heartbeat) for three of
 * them is lost: the server is stopped (SIGSTOP, a frozen VM) or the connection was dropped on the way without a FIN.
 * Without this, `mailbox watch` waited on such a stream forever and printed nothing.
 */
import { MailboxError } from '../../../errors';

export const HEARTBEAT_HEADER = 'x-mailbox-heartbeat-ms';
/** Heartbeat intervals of silence after which a stream counts as lost (one late heartbeat under load is not). */
const SILENT_INTERVALS = 3;
/** Until the response names its interval: three of the server's default interval (15 s). */
export const RESPONSE_WITHIN_MS = 3 * 15_000;

export class StreamSilence {
  private readonly controller = new AbortController();
  private timer: NodeJS.Timeout | null = null;
  private heartbeatMs: number | null = null;
  private silentFor = 0;

  constructor(
    outer: AbortSignal | undefined,
    private readonly waitedOn: string,
  ) {
    if (outer?.aborted) this.controller.abort(outer.reason);
    else outer?.addEventListener('abort', () => this.controller.abort(outer.reason), { once: true });
    this.arm(RESPONSE_WITHIN_MS);
  }

  /** The signal for the request: aborted by the caller's signal or by silence. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  get timedOut(): boolean {
    return this.controller.signal.aborted && this.controller.signal.reason instanceof SilentStream;
  }

  /**
   * The response came: from now on the silence allowed is three of the intervals its header names; a server that names
   * none (an older version) gets no deadline, as before (its interval is unknown: a guess could cut a healthy stream).
   */
  answered(headerValue: string | null): void {
    const heartbeatMs = /^[1-9]\d{0,9}$/.test(headerValue ?? '') ? Number(headerValue) : null;
    this.heartbeatMs = heartbeatMs;
    if (heartbeatMs === null) this.dispose();
    else this.arm(SILENT_INTERVALS * heartbeatMs);
  }

  /** A byte arrived: the silence starts again. */
  heard(): void {
    this.timer?.refresh();
  }

  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  /** What the caller is told when the deadline passed. */
  error(): MailboxError {
    const said =
      this.heartbeatMs === null
        ? `no response to the request for ${this.silentFor} ms`
        : `no event and no heartbeat for ${this.silentFor} ms, and the server sends one every ${this.heartbeatMs} ms`;
    return new MailboxError(
      'UNAVAILABLE',
      'Unavailable',
      `The ${this.waitedOn} went silent: ${said} (the server is stopped or overloaded, or the connection was dropped on ` +
        'the way).',
    );
  }

  private arm(ms: number): void {
    this.dispose();
    this.silentFor = ms;
    this.timer = setTimeout(() => this.controller.abort(new SilentStream()), ms);
  }
}

class SilentStream extends Error {}
