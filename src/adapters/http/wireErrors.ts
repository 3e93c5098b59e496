/**
 * The answers to requests that never reach a route, in the one envelope:
 * URLs fastify cannot route (bad percent-encoding, a path parameter over the
 * router's limit) and wire-level errors node's HTTP parser raises before
 * fastify sees a request (oversized headers, a garbage request line, a bad
 * chunked body, Content-Length with Transfer-Encoding, control characters), and
 * an HTTP/1.1 request without a Host header.
 */
import type { Socket } from 'node:net';
import { STATUS_CODES, type IncomingMessage } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ERROR_STATUS, MailboxError } from '../../errors';
import {
  markAnsweredOnSocket,
  markRequestTimedOut,
  MAX_HEADERS_TIMEOUT_MS,
  requestNotReceived,
  sendEnvelope,
} from './httpErrors';

/**
 * On every answer: a browser never reads one as another type than it declares (a message body holding markup,
 * taken for HTML). Set on node's response for fastify's answers, written here on the raw socket's.
 */
export const NO_SNIFF = ['X-Content-Type-Options', 'nosniff'] as const;

const malformed = (message: string) => new MailboxError('MALFORMED_REQUEST', 'Malformed request', message);

export const uriTooLong = (limit: number) =>
  new MailboxError(
    'URI_TOO_LONG',
    'URI too long',
    `A path segment of this request is longer than ${limit} characters; message ids are UUIDs and identities at most 65 characters.`,
    { limit },
  );

/**
 * The request target (path and query string) and the headers each have a limit of their own, answered by
 * assertHeadWithinLimits in their own words. 16 KiB each: node's one limit, on both together, was 16 KiB, so whatever
 * was served before still is; a proxy in front often allows less (nginx: 8 KiB per line).
 */
export const MAX_URL_CHARS = 16 * 1024;
export const MAX_HEADER_BYTES = 16 * 1024;
/**
 * node's limit on the request line and headers together (maxHeaderSize), above the two limits summed: a head within
 * both reaches assertHeadWithinLimits, which names the one exceeded; only a larger one meets node's refusal.
 */
export const MAX_HEAD_BYTES = MAX_URL_CHARS + MAX_HEADER_BYTES + 1024;

const KIB = (bytes: number) => `${bytes / 1024} KiB`;

export const urlTooLong = (length: number) =>
  new MailboxError(
    'URI_TOO_LONG',
    'URI too long',
    `The request URL is ${length} characters; the limit is ${MAX_URL_CHARS} (${KIB(MAX_URL_CHARS)}). Use fewer or shorter ` +
      'query parameters: fewer filters at once (e.g. several listings of a few tags each), or shorter values.',
    { length, limit: MAX_URL_CHARS },
  );

const headersTooLarge = (bytes: number) =>
  new MailboxError(
    'HEADERS_TOO_LARGE',
    'Headers too large',
    `The request headers are ${bytes} bytes; the limit is ${MAX_HEADER_BYTES} (${KIB(MAX_HEADER_BYTES)} in all); ` +
      'send fewer or shorter headers.',
    { bytes, limit: MAX_HEADER_BYTES },
  );

/** The URL and header limits, measured as node measures its own (the target's characters; names and values). */
export function assertHeadWithinLimits(request: IncomingMessage): void {
  const url = request.url ?? '';
  if (url.length > MAX_URL_CHARS) throw urlTooLong(url.length);
  let bytes = 0;
  for (const part of request.rawHeaders) bytes += part.length; // node reads header bytes as latin1: one character each
  if (bytes > MAX_HEADER_BYTES) throw headersTooLarge(bytes);
}

/** HTTP/1.1 requires a Host header (RFC 9112 section 3.2); node's own refusal of one without it has no body. */
export const missingHost = () =>
  malformed('An HTTP/1.1 request needs a Host header (e.g. "Host: 127.0.0.1:7420"); send one, as every HTTP client does.');

/** fastify's `frameworkErrors`: routing errors, answered before authentication (there is nothing to authorize). */
export function frameworkErrorHandler(maxParamLength: number) {
  return (error: Error & { code?: string }, _request: FastifyRequest, reply: FastifyReply) => {
    if (error.code === 'FST_ERR_MAX_PARAM_LENGTH') return sendEnvelope(reply, uriTooLong(maxParamLength));
    if (error.code === 'FST_ERR_BAD_URL') {
      return sendEnvelope(
        reply,
        malformed('The request path is not valid percent-encoding (e.g. %ff); encode it as UTF-8 percent-escapes.'),
      );
    }
    return sendEnvelope(reply, malformed('The request could not be routed; check its method and path against GET /docs.'));
  };
}

/**
 * What a wire-level parser error means to the client that made it. `timeoutMs`: the server's request timeout
 * (MAILBOX_REQUEST_TIMEOUT_MS), named to a request that did not arrive within it.
 */
export function clientErrorEnvelope(error: Error & { code?: string }, timeoutMs: number): MailboxError {
  switch (error.code) {
    case 'HPE_HEADER_OVERFLOW':
      return new MailboxError(
        'HEADERS_TOO_LARGE',
        'Headers too large',
        // node cannot say which part overflowed: both limits, and what to do about each.
        `The request line and headers are larger than this server accepts (a URL of at most ${KIB(MAX_URL_CHARS)}, ` +
          `headers of at most ${KIB(MAX_HEADER_BYTES)}); use fewer or shorter query parameters, or send fewer or ` +
          'shorter headers.',
        { limit: MAX_HEAD_BYTES },
      );
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return requestNotReceived(timeoutMs);
    case 'ERR_HTTP_HEADERS_TIMEOUT': // node's headersTimeout, not the configured one
      return new MailboxError(
        'REQUEST_TIMEOUT',
        'Request timeout',
        'The request was not received in time; send the whole request promptly, then retry.',
      );
    case 'HPE_INVALID_HEADER_TOKEN':
    case 'HPE_INVALID_HEADER_VALUE': // not a code node uses today; kept for parser updates
      return malformed('A request header holds a character HTTP does not allow (e.g. a control character); remove it.');
    case 'HPE_INVALID_CHUNK_SIZE':
      return malformed(
        'The chunked request body is not valid (a chunk size must be hexadecimal); send a valid body or use Content-Length.',
      );
    case 'HPE_UNEXPECTED_CONTENT_LENGTH':
      return malformed('A request may carry Content-Length or Transfer-Encoding, not both; send one of them.');
    default:
      return malformed('The request is not valid HTTP/1.1; send a request line "METHOD /path HTTP/1.1", valid headers and body.');
  }
}

/**
 * The route label of a request node refused before it was one (a garbage request line, headers over node's limit or
 * not valid, the headers not in within the request timeout): it reached no route, and what it named is not taken as
 * a label (a client could make one per request). Only the status varies (400, 408, 431, and 499 for one its client
 * closed before its head was whole): a bounded set of series.
 */
export const UNPARSED_ROUTE = '(unparsed)';

/**
 * fastify's `clientErrorHandler` (node's `clientError`): answers on the raw socket, then closes it. A request the
 * request timeout cut off while its body was arriving is marked answered 408, for the record of it (httpErrors.ts);
 * one refused while its body arrived (a bad chunked body) is marked with the status it was answered, for its count.
 * `unparsed` counts an answer to a request node refused before it was one (no request object: no route counts it).
 */
export const clientErrorHandler =
  (timeoutMs: number, unparsed: (status: number, socket: Socket) => void = () => undefined) =>
  (error: Error & { code?: string }, socket: Socket) => {
    // A reset connection has nobody to answer; a response already under way cannot be replaced.
    const inFlight = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
    if (error.code === 'ECONNRESET' || socket.destroyed || !socket.writable || inFlight?.headersSent) {
      socket.destroy();
      return;
    }
    if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') markRequestTimedOut(socket);
    const envelope = clientErrorEnvelope(error, timeoutMs);
    // A request that reached fastify is counted by its route when its response closes, with this status.
    // The client ended the connection before the whole request arrived: it is counted 499, closed by its client (as
    // a request of a route is, httpErrors.ts: abandonedStatus), whatever is written after it.
    const clientLeft = error.code === 'HPE_INVALID_EOF_STATE';
    if (inFlight) {
      if (!clientLeft) markAnsweredOnSocket(socket, envelope.status);
    } else unparsed(clientLeft ? ERROR_STATUS.CLIENT_CLOSED_REQUEST : envelope.status, socket);
    writeClientError(socket, envelope);
  };

function writeClientError(socket: Socket, envelope: MailboxError): void {
  const body = JSON.stringify(envelope.envelope);
  socket.end(
    `HTTP/1.1 ${envelope.status} ${STATUS_CODES[envelope.status]}\r\n` +
      `Content-Type: application/json; charset=utf-8\r\n${NO_SNIFF.join(': ')}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

/**
 * node's own settings that make the request timeout (MAILBOX_REQUEST_TIMEOUT_MS) close a slow request when it is due.
 * fastify sets the server's requestTimeout after creating it, leaving node's headersTimeout at 60 s; with a headers
 * timeout above the request timeout node swaps the two, so a request whose headers had arrived was given 60 s, and node
 * looks for requests past their time only every connectionsCheckingInterval (30 s by default): a 30 s timeout closed a
 * slow request 60 to 90 s after it began. Now the headers have the request timeout too (node's 60 s at most) and node
 * looks every tenth of it, from 20 ms to 1 s: a slow request is closed within a second of its time (within a tenth of
 * a short one). No timeout (0): node's defaults.
 */
export function requestTimeoutOptions(timeoutMs: number): { headersTimeout?: number; connectionsCheckingInterval?: number } {
  if (timeoutMs <= 0) return {};
  return {
    headersTimeout: Math.min(MAX_HEADERS_TIMEOUT_MS, timeoutMs),
    connectionsCheckingInterval: Math.min(1000, Math.max(20, Math.round(timeoutMs / 10))),
  };
}
