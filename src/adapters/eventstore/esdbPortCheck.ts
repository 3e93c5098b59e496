/**
 * Two wrong EventStoreDB URLs that no wait mends, told apart at start from a node still starting: the TLS default (no
 * `tls=false`) against a node that runs without TLS, and a port that is not EventStoreDB's gRPC at all (an HTTP
 * server, Redis). The client only ever says UNAVAILABLE for both, so the start retried them for
 * MAILBOX_STARTUP_RETRY_MS (30 s) before its line, and the TLS one printed Node's DEP0123 warning first (grpc-js sets
 * the TLS server name to the IP it was given). Here the port is asked directly, by Node's own HTTP/2 and TLS clients,
 * whose errors carry codes: a plain HTTP/2 session (gRPC's transport) that gets the server's SETTINGS, a TLS handshake
 * that completes, or answers that are neither (ERR_HTTP2_ERROR: bytes that are no HTTP/2; ERR_SSL_WRONG_VERSION_NUMBER:
 * a plain-text answer to a TLS hello). Anything else (refused, reset, silent) decides nothing: the start waits as before.
 */
import http2 from 'node:http2';
import net from 'node:net';
import tls from 'node:tls';

/** Each question's answer within this (a node on the network answers a hello in milliseconds). */
const ASK_MS = 5000;

type PlainAnswer = 'http2' | 'not http2' | 'none';
type TlsAnswer = 'tls' | 'plain text' | 'none';

/** One question with a deadline: `settle` gets the answer once; the connection is destroyed after it. */
function ask<T>(open: (settle: (answer: T) => void) => { destroy(): void }, none: T): Promise<T> {
  return new Promise((resolve) => {
    let done = false;
    const settle = (answer: T) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      connection.destroy();
      resolve(answer);
    };
    const timer = setTimeout(() => settle(none), ASK_MS);
    const connection = open(settle);
  });
}

/** gRPC without TLS is HTTP/2 over plain TCP: the server's SETTINGS frame says it speaks it. */
const askPlainHttp2 = (host: string, port: number): Promise<PlainAnswer> =>
  ask<PlainAnswer>((settle) => {
    const session = http2.connect(`http://${net.isIPv6(host) ? `[${host}]` : host}:${port}`);
    session.once('remoteSettings', () => settle('http2'));
    session.on('error', (error: NodeJS.ErrnoException) => settle(error.code === 'ERR_HTTP2_ERROR' ? 'not http2' : 'none'));
    session.once('close', () => settle('none'));
    return session;
  }, 'none');

const askTls = (host: string, port: number): Promise<TlsAnswer> =>
  ask<TlsAnswer>((settle) => {
    // No servername for an IP: setting one is what printed DEP0123. Only whether TLS is spoken is asked, not whom to trust.
    const socket = tls.connect({ host, port, rejectUnauthorized: false, ...(net.isIP(host) ? {} : { servername: host }) });
    socket.once('secureConnect', () => settle('tls'));
    socket.on('error', (error: NodeJS.ErrnoException) =>
      settle(error.code === 'ERR_SSL_WRONG_VERSION_NUMBER' ? 'plain text' : 'none'),
    );
    socket.once('close', () => settle('none'));
    return socket;
  }, 'none');

/** host:port as the settings give it ('[::1]:2113', 'node:2113'). */
function split(hostPort: string): { host: string; port: number } {
  const at = hostPort.lastIndexOf(':');
  return { host: hostPort.slice(0, at).replace(/^\[(.*)\]$/, '$1'), port: Number(hostPort.slice(at + 1)) };
}

/**
 * The mistake in the URL of one node (`hostPort`; `asksTls`: whether the URL asks for TLS), as a one-line refusal
 * naming the fix; null when the port may well be the node (gRPC answered as asked, or nothing conclusive did). TLS is
 * asked only of a port that answered plain HTTP/2 with something else: a node as configured is asked nothing more.
 */
export async function esdbPortMistake(hostPort: string, asksTls: boolean): Promise<string | null> {
  const { host, port } = split(hostPort);
  const plain = await askPlainHttp2(host, port);
  if (plain === 'http2')
    return asksTls
      ? `EventStoreDB at ${hostPort} speaks gRPC without TLS, and MAILBOX_EVENTSTORE_URL asks for TLS (the default when ` +
          'it names none): add tls=false to MAILBOX_EVENTSTORE_URL (esdb://host:2113?tls=false).'
      : null;
  if (plain === 'none') return null;
  const secure = await askTls(host, port);
  if (secure === 'tls')
    return asksTls
      ? null
      : `EventStoreDB at ${hostPort} serves TLS, and MAILBOX_EVENTSTORE_URL says tls=false: use tls=true in ` +
          'MAILBOX_EVENTSTORE_URL (and tlsCAFile=<PEM file> for a private CA).';
  return (
    `MAILBOX_EVENTSTORE_URL names ${hostPort}, which answers but is no EventStoreDB: it speaks neither gRPC (HTTP/2) ` +
    "nor TLS (an HTTP/1 server? Redis?): point MAILBOX_EVENTSTORE_URL at the node's gRPC port (2113 unless the node's " +
    'configuration says otherwise).'
  );
}
