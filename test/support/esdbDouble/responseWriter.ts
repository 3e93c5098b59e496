/**
 * Writes a server stream's responses with backpressure: when gRPC's buffer is
 * full the writer waits for 'drain', so a slow client slows the server down
 * (as with the real server) instead of growing memory without bound.
 */
import type { ServerWritableStream, ServiceError } from '@grpc/grpc-js';

const MAX_BUFFERED = 256;

export class ResponseWriter<Res> {
  private cancelledFlag = false;
  private waiters = new Set<() => void>();

  constructor(private readonly call: ServerWritableStream<unknown, Res>) {
    const cancel = () => {
      this.cancelledFlag = true;
      this.wakeAll();
    };
    call.on('cancelled', cancel);
    call.on('close', cancel);
    call.on('error', cancel);
  }

  get cancelled(): boolean {
    return this.cancelledFlag;
  }

  /**
   * Resolves false when the client has gone (cancelled, closed or the server is
   * shutting down). Waits for 'drain' only past MAX_BUFFERED messages rather than
   * at grpc-js's object-mode high-water mark of 16, so that the double streams
   * reads in batches as the real server does; memory stays bounded either way.
   */
  async write(message: Res): Promise<boolean> {
    if (this.cancelledFlag) return false;
    this.call.write(message);
    if (this.call.writableLength > MAX_BUFFERED) {
      await this.waitFor((wake) => {
        this.call.once('drain', wake);
      });
    }
    return !this.cancelledFlag;
  }

  end(): void {
    if (!this.cancelledFlag) this.call.end();
  }

  /** Ends the call with `error` (its status and trailers), as the server ends a call it no longer serves. */
  fail(error: Partial<ServiceError>): void {
    if (this.cancelledFlag) return;
    this.call.emit('error', error);
    this.cancelledFlag = true;
    this.wakeAll();
  }

  /** Waits until `arm` calls its callback or the call is cancelled, whichever comes first. */
  waitFor(arm: (wake: () => void) => void | (() => void)): Promise<void> {
    if (this.cancelledFlag) return Promise.resolve();
    return new Promise((resolve) => {
      let disarm: void | (() => void);
      const wake = () => {
        this.waiters.delete(wake);
        if (typeof disarm === 'function') disarm();
        resolve();
      };
      this.waiters.add(wake);
      disarm = arm(wake);
    });
  }

  private wakeAll(): void {
    for (const wake of [...this.waiters]) wake();
  }
}
