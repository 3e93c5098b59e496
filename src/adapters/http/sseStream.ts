/**
 * One Server-Sent Events response. Comment heartbeats keep proxies from
 * closing an idle stream. A client too slow to drain its stream is
 * disconnected rather than buffered without bound; it reconnects and its
 * `sync` event tells it the unread count (wakes are hints, the inbox is the authority).
 * A HEAD of a stream (`curl -I`, a proxy's check) gets its headers and ends at once.
 */
import type { ServerResponse } from 'node:http';

export const MAX_BUFFERED_BYTES = 1024 * 1024;

export class SseStream {
  private heartbeat: NodeJS.Timeout | null = null;
  private closed = false;
  private readonly onClose: Array<() => void> = [];

  /**
   * `onCut`: told when the stream is cut for a reader too slow to drain it, with the bytes it left unread, so that the
   * route logs it: the cut was silent (the reader saw its connection drop, the operator saw nothing).
   */
  constructor(
    private readonly response: ServerResponse,
    heartbeatMs: number,
    private readonly onCut?: (unreadBytes: number) => void,
  ) {
    response.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      connection: 'close', // an event stream is never followed by another response on its connection
      'x-accel-buffering': 'no', // nginx: do not buffer the stream
      // how often a heartbeat comes: a client that hears nothing for a few of these knows the stream is lost
      'x-mailbox-heartbeat-ms': String(heartbeatMs),
    });
    if (response.req?.method === 'HEAD') {
      // The stream's headers and nothing after them: node drops every write to a HEAD response without sending even
      // the headers, so the request would hang, open and invisible, holding a place of the agent's wake streams.
      response.end();
      this.finish();
      return;
    }
    response.write('retry: 2000\n\n');
    this.heartbeat = setInterval(() => this.write(': heartbeat\n\n'), heartbeatMs);
    this.heartbeat.unref();
    response.on('close', () => this.finish());
    if (response.destroyed) this.finish(); // the client left before the stream began
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** Runs `listener` once when the stream ends, whoever ended it. */
  whenClosed(listener: () => void): void {
    if (this.closed) listener();
    else this.onClose.push(listener);
  }

  send(event: string, data: unknown, id?: string): boolean {
    return this.write(`event: ${event}\n${id ? `id: ${id}\n` : ''}data: ${JSON.stringify(data)}\n\n`);
  }

  /** Ends the stream, optionally telling the client why in a last event. */
  close(reason?: string): void {
    if (this.closed) return;
    if (reason) this.send('shutdown', { reason });
    this.response.end();
    this.finish();
  }

  private write(chunk: string): boolean {
    if (this.closed) return false;
    if (this.response.writableLength > MAX_BUFFERED_BYTES) {
      const unread = this.response.writableLength;
      this.response.destroy(); // the client reconnects and resyncs
      this.finish();
      this.onCut?.(unread);
      return false;
    }
    this.response.write(chunk);
    // Node corks a chunked response until the next tick; a wake is sent now, not after whatever runs first.
    const socket = this.response.socket;
    if (socket?.writableCorked) socket.uncork();
    return true;
  }

  private finish(): void {
    if (this.closed) return;
    this.closed = true;
    if (this.heartbeat) clearInterval(this.heartbeat);
    for (const listener of this.onClose.splice(0)) listener();
  }
}
