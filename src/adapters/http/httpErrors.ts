/**
 * Every HTTP error leaves as the one envelope `{error, code, message, ...details}`
 * with the status of its code, including the errors fastify raises itself
 * (unparsable or oversized bodies, unknown routes), which are translated here.
 */
import type { FastifyReply } from 'fastify';
import type { IncomingMessage } from 'node:http';
import { ERROR_STATUS, MailboxError, answeredEnvelope, isMailboxError, requestTimedOut, retryAfterSecondsOf } from '../../errors';
import { looksLikeValue, nearRoutes } from './nearRoutes';
import { unreadableEventRefusal } from '../../application/unreadableEventRefusal';

interface FastifyLikeError {
  code?: string;
  statusCode?: number;
  message?: string;
}

const validation = (message: string, details: Record<string, unknown> = {}) =>
  new MailboxError('VALIDATION_FAILED', 'Validation failed', message, details);

/**
 * `size`: how large the request is, where it was counted (`complete`: to its end; else it was cut off there, and is at
 * least that large).
 */
export const payloadTooLarge = (limit: number, size?: { bytes: number; complete: boolean }) =>
  size === undefined
    ? new MailboxError(
        'PAYLOAD_TOO_LARGE',
        'Payload too large',
        `The request is larger than this server's limit of ${limit} bytes; shorten the body or link to the content.`,
        { limit },
      )
    : new MailboxError(
        'PAYLOAD_TOO_LARGE',
        'Payload too large',
        `The request is ${size.complete ? '' : 'at least '}${size.bytes} bytes, ${size.complete ? '' : 'at least '}` +
          `${size.bytes - limit} over this server's limit of ${limit} bytes; it was not read. Shorten the body or link to the content.`,
        size.complete ? { limit, bytes: size.bytes } : { limit, bytesAtLeast: size.bytes },
      );

/** Where OAuth clients look for an authorization server; this mailbox has none (static bearer tokens). */
const OAUTH_DISCOVERY =
  /^\/(\.well-known\/(oauth-protected-resource|oauth-authorization-server|openid-configuration)|register|authorize|token)(\/|$)/;

/** Matchers of the routes' URL patterns (`:name` is one segment, `*` the rest), made once per pattern, not per request. */
const matchers = new Map<string, RegExp>();

function matcherOf(pattern: string): RegExp {
  let matcher = matchers.get(pattern);
  if (matcher === undefined) {
    const segments = pattern
      .split('/')
      .map((segment) =>
        segment.startsWith(':') ? '[^/]+' : segment === '*' ? '.*' : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'),
      );
    matchers.set(pattern, (matcher = new RegExp(`^${segments.join('/')}$`)));
  }
  return matcher;
}

/**
 * Whether `path` is a path of the route's pattern with a value where it takes one: `/v1/messages/send` has the shape of
 * `/v1/messages/:id`, but `send` is a word, not an id, so that route is not what was asked for.
 */
function isPathOf(pattern: string, path: string): boolean {
  if (!matcherOf(pattern).test(path)) return false;
  const segments = path.split('/');
  return pattern.split('/').every((segment, index) => !segment.startsWith(':') || looksLikeValue(segments[index]));
}

/**
 * The methods the routes take at `path` (empty: no route there at all). `POST /v1/messages/send` is no route, not
 * `GET /v1/messages/{id}` asked with another method: a 405 saying it takes GET would send the caller to a 400.
 */
function methodsAt(routes: ReadonlyArray<{ method: string; url: string }>, path: string): string[] {
  const methods = routes.filter((route) => isPathOf(route.url, path)).map((route) => route.method);
  return [...new Set(methods)].sort();
}

/**
 * The routes one segment beneath `path` when it names one item (its route ends in an id: `/v1/messages/{id}`), as
 * `METHOD /path/{param}`: what can be done with it. `DELETE /v1/messages/{id}` (a message is never deleted) was told
 * only that the path takes GET; its archive is beneath it.
 */
function actionsOn(routes: ReadonlyArray<{ method: string; url: string }>, method: string, path: string): string[] {
  const item = routes.find((route) => isPathOf(route.url, path) && route.url.split('/').at(-1)?.startsWith(':'));
  if (item === undefined) return [];
  const depth = item.url.split('/').length + 1;
  const beneath = routes.filter(
    (route) =>
      route.url.split('/').length === depth &&
      route.url.startsWith(`${item.url}/`) &&
      !route.url.includes('*') &&
      route.method !== 'HEAD',
  );
  // Writes first when a write was asked (an archive for a DELETE), reads first for a read.
  const reads = (route: { method: string }) => route.method === 'GET';
  const first = beneath.filter((route) => reads(route) === (method === 'GET' || method === 'HEAD'));
  const rest = beneath.filter((route) => !first.includes(route));
  return [...new Set([...first, ...rest].map((route) => `${route.method} ${route.url.replace(/:([^/]+)/g, '{$1}')}`))];
}

/**
 * A box's name taken for a route (`GET /v1/inbox`, `/v1/outbox`): its listing was meant, `GET /v1/messages` (the inbox;
 * `?box=outbox`, the outbox). The segment distance alone named only `GET /v1/inbox/count`, nearer by its words, and an
 * agent asking for its mail was sent to a count. Named first, beside the near routes that hold the box's name.
 */
const BOX_PATH = /^(?:\/v1)?\/(inbox|outbox)\/?$/i;

function boxListing(method: string, path: string, near: readonly string[]): string[] | null {
  const box = method === 'GET' ? BOX_PATH.exec(path)?.[1].toLowerCase() : undefined;
  if (box === undefined) return null;
  const listing = box === 'inbox' ? 'GET /v1/messages' : 'GET /v1/messages?box=outbox';
  return [listing, ...near.filter((route) => route.split('/').includes(box))];
}

/**
 * No route answered: 405 when the path is a route taken with other methods (`allow` in the envelope, for the Allow
 * header), else 404, naming the routes nearest to the path (`suggestions`) when some are one segment away.
 */
export const routeNotFound = (method: string, url: string, routes: ReadonlyArray<{ method: string; url: string }> = []) => {
  const path = url.split('?')[0];
  const allowed = methodsAt(routes, path);
  if (allowed.length > 0 && !allowed.includes(method)) {
    const actions = actionsOn(routes, method, path);
    const said = actions.length > 0 ? `; what can be done with it: ${actions.join(', ')}` : '';
    return new MailboxError(
      'METHOD_NOT_ALLOWED',
      'Method not allowed',
      `${path} takes ${allowed.join(', ')}, not ${method}${said}; GET /docs lists every route of this API.`,
      actions.length > 0 ? { method, path, allow: allowed, suggestions: actions } : { method, path, allow: allowed },
    );
  }
  if (OAUTH_DISCOVERY.test(path))
    return new MailboxError(
      'NOT_FOUND',
      'Not found',
      `There is no route ${method} ${path}: this mailbox does not offer OAuth. Authenticate with a static token ` +
        "instead: the header 'Authorization: Bearer <token>' (an agent's token comes from POST /v1/agents; see docs/mcp.md).",
      { method, path },
    );
  // The server's root (a client's first guess, or a URL cut back): where the API is, rather than "did you mean".
  if (path === '/' && (method === 'GET' || method === 'HEAD'))
    return new MailboxError(
      'NOT_FOUND',
      'Not found',
      `There is no route ${method} /: this server's API is under /v1. GET /docs lists every route (GET /openapi.json ` +
        'describes them), GET /healthz says whether the server is up; GET /console is the operator console, in a browser.',
      { method, path, api: '/v1', suggestions: ['GET /docs', 'GET /openapi.json', 'GET /healthz', 'GET /console'] },
    );
  const near = nearRoutes(method, path, routes);
  const suggestions = boxListing(method, path, near) ?? near;
  const nearest = suggestions.length > 0 ? ` did you mean ${suggestions.join(' or ')}?` : '';
  return new MailboxError(
    'NOT_FOUND',
    'Not found',
    `There is no route ${method} ${path};${nearest} GET /docs lists every route of this API.`,
    suggestions.length > 0 ? { method, path, suggestions } : { method, path },
  );
};

/**
 * The sockets whose request Node's request timeout (MAILBOX_REQUEST_TIMEOUT_MS) cut off while it was still arriving,
 * answered 408 on the socket (wireErrors.ts): the body being read then fails as any cut-off body does ('aborted').
 */
const timedOutSockets = new WeakSet<object>();

export const markRequestTimedOut = (socket: object): void => void timedOutSockets.add(socket);

/**
 * Requests answered on their socket by node's clientError path while their body arrived (a bad chunked body: 400),
 * by the status they were answered with: their response never finishes, and they were counted 499, answered to nobody.
 */
const answeredOnSocket = new WeakMap<object, number>();

export const markAnsweredOnSocket = (socket: object, status: number): void => void answeredOnSocket.set(socket, status);

/**
 * The status of a request whose response never finished because its connection closed first: what was sent when the
 * headers had gone out (a wake stream its client left), else 408 when the request timeout cut it off (answered on the
 * socket), else what node's clientError path answered on the socket (a bad chunked body: 400), else 499 (the client
 * went away: answered to nobody).
 */
export const abandonedStatus = (response: { headersSent: boolean; statusCode: number }, socket: object | null): number =>
  response.headersSent
    ? response.statusCode
    : socket !== null && timedOutSockets.has(socket)
      ? ERROR_STATUS.REQUEST_TIMEOUT
      : ((socket !== null ? answeredOnSocket.get(socket) : undefined) ?? ERROR_STATUS.CLIENT_CLOSED_REQUEST);

/** node's limit on a request's headers, which the request timeout lowers (wireErrors.ts: requestTimeoutOptions). */
export const MAX_HEADERS_TIMEOUT_MS = 60_000;

/** What a client whose request did not arrive within the request timeout is told (408), and what is recorded of it. */
export const requestNotReceived = (timeoutMs: number) =>
  new MailboxError(
    'REQUEST_TIMEOUT',
    'Request timeout',
    (timeoutMs <= 0 // no request timeout: node's limit on the headers only
      ? `The request's headers were not received within ${MAX_HEADERS_TIMEOUT_MS} ms`
      : `The request was not received within ${timeoutMs} ms (this server's request timeout` +
        (timeoutMs > MAX_HEADERS_TIMEOUT_MS ? `; its headers, within ${MAX_HEADERS_TIMEOUT_MS} ms)` : ')')) +
      '; nothing was done. Send the whole request promptly, then retry.',
    timeoutMs <= 0 ? { headersTimeoutMs: MAX_HEADERS_TIMEOUT_MS } : { timeoutMs },
  );

/**
 * A request whose connection closed before the whole of it arrived, and not by the request timeout: the client went
 * away (or a proxy between closed it). Nobody is told; the record says so, with the status of nginx's convention for
 * it (499: the client closed the request), which no client is ever answered.
 */
const closedBeforeArrival = () =>
  new MailboxError(
    'CLIENT_CLOSED_REQUEST',
    'Client closed request',
    'The connection was closed before the whole request arrived (the client went away, or a proxy between closed it); ' +
      'nothing was done, and no answer could be sent.',
  );

/** Node's error for a request body cut off by its connection's end (IncomingMessage's 'aborted'). */
const isCutOff = (e: FastifyLikeError) => e.code === 'ECONNRESET' && e.message === 'aborted';

export interface HttpLimits {
  requestLimit: number;
  timeoutMs: number;
}

/** The size a request declares (its Content-Length), when it declares one. */
export function declaredBytes(headers: Record<string, string | string[] | undefined>): number | undefined {
  const length = headers['content-length'];
  return typeof length === 'string' && /^\d+$/.test(length) ? Number(length) : undefined;
}

/**
 * `request`: the request refused, when there is one: its Content-Length, which a body over the limit is refused on
 * before a byte of it is read (the refusal says the size, and so by how much it is over; a chunked body, which declares
 * none, is refused without it), and its socket, which says whether a body cut off was the request timeout's doing.
 */
export function toMailboxError(
  error: unknown,
  { requestLimit, timeoutMs }: HttpLimits,
  request?: Pick<IncomingMessage, 'headers' | 'socket'>,
): MailboxError {
  if (isMailboxError(error)) return error;
  const unreadable = unreadableEventRefusal(error); // a stored event this build cannot read: no bug of the mailbox
  if (unreadable !== null) return unreadable;
  const e = (error ?? {}) as FastifyLikeError;
  const declared = request === undefined ? undefined : declaredBytes(request.headers);
  // Not the 400 "aborted" fastify makes of it: the client was answered 408 on the socket, or nothing at all.
  if (isCutOff(e))
    return request !== undefined && timedOutSockets.has(request.socket) ? requestNotReceived(timeoutMs) : closedBeforeArrival();
  switch (e.code) {
    case 'FST_ERR_HANDLER_TIMEOUT':
      return requestTimedOut(timeoutMs);
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return payloadTooLarge(
        requestLimit,
        declared !== undefined && declared > requestLimit ? { bytes: declared, complete: true } : undefined,
      );
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return validation('This route takes a JSON body; send it with Content-Type: application/json.', { field: 'content-type' });
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return validation('The Content-Length header does not match the body that was sent.', { field: 'content-length' });
  }
  if (e.statusCode === 413) return payloadTooLarge(requestLimit);
  if (e.statusCode !== undefined && e.statusCode >= 400 && e.statusCode < 500) {
    return validation(e.message || 'The request could not be read.');
  }
  return new MailboxError(
    'INTERNAL',
    'Internal error',
    'The server failed while handling this request; it has been logged. Retry, or report it if it persists.',
  );
}

/** Sends the envelope with its status, plus the headers some codes call for. */
export function sendEnvelope(reply: FastifyReply, error: MailboxError): FastifyReply {
  if (error.code === 'UNAUTHENTICATED') reply.header('www-authenticate', 'Bearer realm="agent-mailbox"');
  // Every 503 (Redis or the log away, views being rebuilt, not ready, shutting down) and 429 says when to come back.
  const retryAfter = retryAfterSecondsOf(error);
  if (retryAfter !== null) reply.header('retry-after', String(retryAfter));
  return reply.status(error.status).type('application/json; charset=utf-8').send(answeredEnvelope(error));
}
