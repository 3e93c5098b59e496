/**
 * Prompt, clean shutdown: once draining, every connection is ended as soon as
 * it carries no request. Node's server.close() waits for connections that were
 * opened but never used (HTTP clients pre-open them) until the client gives up
 * on them, which would hold a shutdown for seconds.
 */
import type { Server } from 'node:http';
import type { Socket } from 'node:net';

export class ConnectionDrain {
  private readonly inFlight = new Map<Socket, number>();
  private draining = false;

  constructor(server: Server) {
    server.on('connection', (socket: Socket) => {
      this.inFlight.set(socket, 0);
      socket.once('close', () => this.inFlight.delete(socket));
    });
    server.on('request', (request, response) => {
      const socket = request.socket as Socket;
      this.inFlight.set(socket, (this.inFlight.get(socket) ?? 0) + 1);
      response.once('close', () => {
        const left = Math.max(0, (this.inFlight.get(socket) ?? 1) - 1);
        this.inFlight.set(socket, left);
        if (this.draining && left === 0) socket.end();
      });
    });
  }

  /** Ends idle connections now, and each busy one when its last response is done. */
  drain(): void {
    this.draining = true;
    for (const [socket, requests] of this.inFlight) if (requests === 0) socket.end();
  }
}
