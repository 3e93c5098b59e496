/**
 * Every event stream this server has open that no other register ends at shutdown: the audit streams (GET
 * /v1/audit/stream), an auditor's and the admin's alike (the admin's are not capped, so no slot holds them). Each one
 * holds its connection open; left open, a stopping server waited its whole shutdown grace for them (an open console's
 * live flow: "shutdown took longer than 10000 ms; exiting"). The wake streams are ended by WakeStreams.closeAll.
 */
import type { SseStream } from './sseStream';

export class OpenStreams {
  private readonly streams = new Set<SseStream>();

  /** Keeps `stream` until it closes, whoever closes it. */
  add(stream: SseStream): void {
    this.streams.add(stream);
    stream.whenClosed(() => this.streams.delete(stream));
  }

  /** Ends each one with a last `shutdown` event saying why (a reader reconnects to another node, or later). */
  closeAll(reason: string): void {
    for (const stream of [...this.streams]) stream.close(reason);
  }
}
