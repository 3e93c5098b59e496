/**
 * Why a connection to EventStoreDB failed, as the one line an operator reads (`serve`'s start, the reader commands'
 * refusal). gRPC wraps the socket's error in text of its own, over two lines when TLS was involved: a TLS setting
 * that did not match the node's was said as "unreachable (unavailable: 14 UNAVAILABLE: No connection established. Last
 * error: Error: 80...:error:0A00010B:SSL routines:ssl3_get_record:wrong version number:../deps/openssl/openssl/ssl/
 * record/ssl3_record.c:350:⏎. Resolution note: )", and a node that takes the connection but does not answer plain
 * HTTP/2 (one serving TLS, asked with tls=false) as "Failed to connect (<time>)": neither named the setting to fix.
 */

/** The node answered a TLS handshake in plain text (OpenSSL's words for a record that is no TLS). */
const PLAIN_ANSWER_TO_TLS = /wrong version number|WRONG_VERSION_NUMBER|packet length too long|unknown protocol|ssl3_get_record/i;
/** gRPC's words when the socket connected but no HTTP/2 session came of it (or ECONNRESET: it was reset at once). */
const NO_SESSION = /Failed to connect|Connection dropped|Protocol error/i;

/** Whether the URL asks for TLS: `tls=true`, or no `tls` parameter (the client's default). */
export function asksForTls(url: string): boolean {
  const query = url.indexOf('?') < 0 ? '' : url.slice(url.indexOf('?') + 1);
  const tls = new URLSearchParams(query).get('tls');
  return tls === null || tls.toLowerCase() !== 'false';
}

/**
 * `cause`: what the client said (briefCause'd already: a socket error is its code and address). Returns one line:
 * the TLS mismatch said with its fix, else the client's words without gRPC's wrapping.
 */
export function esdbFailureCause(cause: string, url: string): string {
  const tls = asksForTls(url);
  if (tls && PLAIN_ANSWER_TO_TLS.test(cause))
    return (
      'the node answered the TLS handshake in plain text: it runs without TLS, so MAILBOX_EVENTSTORE_URL needs ' +
      'tls=false (TLS is the default when the URL names none)'
    );
  const words = cause
    .replace(/^unavailable: 14 UNAVAILABLE: /, '')
    .replace(/\s*Resolution note:\s*$/, '')
    .replace(/\s+/g, ' ')
    .replace(/[.\s]+$/, '');
  if (!tls && (/^ECONNRESET\b/.test(words) || (NO_SESSION.test(words) && !/\bE[A-Z]{4,}\b/.test(words))))
    return (
      "the node took the connection but did not answer gRPC in plain text: if it serves TLS (EventStoreDB's default), " +
      'MAILBOX_EVENTSTORE_URL needs tls=true (and tlsCAFile=<PEM file> for a private CA)'
    );
  return words;
}
