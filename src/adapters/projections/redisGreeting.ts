/**
 * What a Redis that closes a new connection at once said first. A server at its `maxclients` writes
 * "-ERR max number of clients reached" as it accepts, then closes: ioredis, writing its first command, meets only the
 * closed socket (EPIPE, ECONNRESET), and the start said "unreachable (write EPIPE): start it" of a server that runs
 * and answered. Asked only once a connection has failed so, of a plain (not TLS) node: the server's first line if it
 * sent an error before anything was asked, else null (a server that waits for a command sends nothing).
 */
import net from 'node:net';

const LISTEN_MS = 500;
const CLOSED_AT_ONCE = new Set(['EPIPE', 'ECONNRESET']);

/**
 * Whether a failed connection's error is a socket the server closed (the case a greeting may explain): a write that met
 * the closed socket (EPIPE, ECONNRESET), or, when the server's close arrived before ioredis wrote anything (a loaded
 * machine), ioredis's own "Connection is closed" with no socket error at all (a refused connect has its ECONNREFUSED).
 */
export const closedAtOnce = (error: unknown): boolean => {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  return CLOSED_AT_ONCE.has(String(code ?? '')) || (code === undefined && message === 'Connection is closed.');
};

/** The server's first line when it is an error reply ("-ERR ..."), without its dash and cut to 200 characters. */
function errorLine(said: string): string | null {
  return said.startsWith('-') ? said.split('\r\n')[0].slice(1, 201) : null;
}

export function unaskedError(host: string, port: number): Promise<string | null> {
  return new Promise((resolve) => {
    let said = '';
    const socket = net.connect({ host, port });
    const done = () => {
      clearTimeout(timer);
      socket.destroy();
      resolve(errorLine(said));
    };
    const timer = setTimeout(done, LISTEN_MS);
    socket.on('data', (chunk: Buffer) => {
      said += chunk.toString('utf8');
      if (said.includes('\r\n') || said.length > 200) done();
    });
    socket.on('error', done);
    socket.on('close', done);
  });
}
