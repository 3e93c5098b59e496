/**
 * The caller's identity comes only from `Authorization: Bearer <token>`; no
 * header, body field or query parameter can name another identity.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Actor } from '../../commands/roles';
import { MailboxError } from '../../errors';
import type { Authenticator } from '../../application/authenticator';
import type { RateLimiter } from './rateLimiter';
import { clientAddressKey, type RefusedTokens } from './refusedTokens';

declare module 'fastify' {
  interface FastifyRequest {
    actor: Actor | null;
  }
}

/**
 * A rate-limit refusal held back until the body is read, on a route that answers it in its own protocol once it knows
 * what the request was (`config: { answersRateLimit: true }`: POST /mcp, where a refused tool call is the call's
 * answer). It is thrown before the route's handler runs, so it is counted, recorded and never applied as any refusal is.
 */
const heldRateLimit = new WeakMap<FastifyRequest, MailboxError>();

const answersRateLimit = (request: FastifyRequest) =>
  (request.routeOptions.config as { answersRateLimit?: boolean } | undefined)?.answersRateLimit === true;

/**
 * What is wrong with an Authorization header that is not `Bearer <token>`, said without ever showing what it holds
 * (it may be a token): "Bearer" with nothing after it, most often `Bearer $TOKEN` with TOKEN unset or empty in a
 * shell; a token without its scheme; another scheme (`Basic`, `Token`), named when it is a word; or several words
 * after Bearer. Each was told only "The Authorization header must be 'Bearer <token>'.", so the user of
 * `curl -H "Authorization: Bearer $ALICE"` looked for a wrong token where there was none.
 */
function malformedAuthorization(header: string): string {
  const words = header.trim().split(/\s+/);
  const [scheme] = words;
  if (/^Bearer$/i.test(scheme!)) {
    return words.length === 1
      ? "The Authorization header is 'Bearer' with no token after it (sent as 'Bearer $TOKEN' while TOKEN was unset or " +
          "empty?): send 'Authorization: Bearer <token>', with the token the registration printed."
      : `The Authorization header holds ${words.length - 1} words after 'Bearer'; a token is one word, without spaces: ` +
          "send 'Authorization: Bearer <token>'.";
  }
  if (words.length === 1) {
    return (
      "The Authorization header holds one word and no 'Bearer ' before it (not shown: it may be a token): send " +
      "'Authorization: Bearer <token>'."
    );
  }
  const named = /^[A-Za-z][A-Za-z0-9._-]{0,19}$/.test(scheme!) ? `'${scheme}'` : 'another scheme';
  return (
    `The Authorization header uses ${named}; this server takes only 'Authorization: Bearer <token>' (no Basic or ` +
    'other credentials: the token alone, after Bearer).'
  );
}

export function bearerToken(header: string | undefined): string | undefined {
  if (header === undefined || header.trim() === '') return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!match) {
    throw new MailboxError('UNAUTHENTICATED', 'Unauthenticated', `${malformedAuthorization(header)} Nothing was done.`, {
      hint: 'Send Authorization: Bearer <token>',
    });
  }
  return match[1];
}

/**
 * The one Authorization header of a request. Node keeps only the first of several (it drops the rest of a header it
 * cannot join), so a request with two would be answered as whoever the first names, the other silently dropped;
 * refused instead, whichever tokens they carry.
 */
export function authorizationOf(request: FastifyRequest): string | undefined {
  const raw = request.raw.rawHeaders;
  let count = 0;
  for (let i = 0; i < raw.length; i += 2) if (raw[i].toLowerCase() === 'authorization') count += 1;
  if (count > 1) {
    throw new MailboxError(
      'UNAUTHENTICATED',
      'Unauthenticated',
      `The request carries ${count} Authorization headers; send exactly one, 'Authorization: Bearer <token>'. Nothing was done.`,
      { hint: 'Send Authorization: Bearer <token>' },
    );
  }
  return request.headers.authorization;
}

/** Query parameters that clients use to carry a token where a header cannot be set (a browser's EventSource). */
const TOKEN_PARAMETER = /^((access|auth|bearer|api)[_-]?)?(token|key)$|^auth(orization)?$|^bearer$/i;

/**
 * A request without an Authorization header that carries its token in the query string (`/v1/wake?token=...`) was
 * told only "A bearer token is required", as if it had sent none: it is told that the parameter is not read, and why.
 */
function tokenInQuery(request: FastifyRequest): MailboxError | null {
  const query = request.query;
  const names = query !== null && typeof query === 'object' ? Object.keys(query) : [];
  const named = names.find((name) => TOKEN_PARAMETER.test(name));
  if (named === undefined) return null;
  return new MailboxError(
    'UNAUTHENTICATED',
    'Unauthenticated',
    `A bearer token is required in the Authorization header; the query parameter '${named}' is never read as one (a ` +
      "URL is kept in logs, proxies and histories): send 'Authorization: Bearer <token>' instead. Nothing was done.",
    { hint: 'Send Authorization: Bearer <token>', field: named },
  );
}

/** The authenticated caller; routes in the authenticated scope always have one. */
export function actorOf(request: FastifyRequest): Actor {
  if (!request.actor) throw new Error('actorOf called outside the authenticated scope');
  return request.actor;
}

/**
 * The caller `token` names, its lookup held to its client address's refused tokens (refusedTokens.ts): a token the last
 * registry read knows (or the admin's) is looked up as ever, never counted; another draws one refusal from its address
 * before it is looked up, given back when it was known after all. An address with none left has such a token answered
 * 429 RATE_LIMITED, unread, unless a registry read at most a second old (one for all such requests) knows it.
 */
export async function authenticateFrom(
  request: FastifyRequest,
  token: string | undefined,
  authenticator: Authenticator,
  refused: RefusedTokens,
): Promise<Actor> {
  if (token === undefined || !refused.enabled || authenticator.knownWithoutRead(token)) return authenticator.authenticate(token);
  const address = clientAddressKey(request.raw.socket.remoteAddress);
  if (!refused.take(address)) {
    if (!(await authenticator.knownSparingly(token))) throw refused.refusal(address);
    return authenticator.authenticate(token);
  }
  try {
    const actor = await authenticator.authenticate(token);
    refused.giveBack(address);
    return actor;
  } catch (error) {
    // Only a refused token counts: a lookup that failed (the store unavailable) refused nothing.
    if (!(error instanceof MailboxError && error.code === 'UNAUTHENTICATED')) refused.giveBack(address);
    throw error;
  }
}

/**
 * Authenticates every request in `app`'s scope before its body is read, then
 * applies the per-agent rate limit (the admin token is exempt: it is the operator),
 * each message of a JSON-RPC batch counting as one request.
 */
export function requireBearer(
  app: FastifyInstance,
  authenticator: Authenticator,
  limiter: RateLimiter,
  refused: RefusedTokens,
): void {
  app.addHook('onRequest', async (request) => {
    const token = bearerToken(authorizationOf(request));
    const misplaced = token === undefined ? tokenInQuery(request) : null;
    if (misplaced !== null) throw misplaced;
    const actor = await authenticateFrom(request, token, authenticator, refused);
    if (actor.role !== 'admin') {
      try {
        await limiter.admit(actor.identity);
      } catch (error) {
        if (!(error instanceof MailboxError && error.code === 'RATE_LIMITED' && answersRateLimit(request))) throw error;
        heldRateLimit.set(request, error); // the body is read (within its limit), then refused before the handler
        return;
      }
    }
    request.actor = actor;
  });
  // A JSON-RPC batch (POST /mcp) carries up to 100 tool calls in one HTTP request: each counts against the limit, as
  // it would sent alone (one was taken above, before the body was read), else a batch multiplied the rate by 100.
  // The first hook after the body is read (registered before the scope's other checks): a held refusal still comes
  // before any other refusal of the request, as it did when it was thrown at onRequest.
  app.addHook('preValidation', async (request) => {
    const held = heldRateLimit.get(request);
    if (held) throw held;
  });
  app.addHook('preHandler', async (request) => {
    const { actor, body } = request;
    if (request.routeOptions.url !== '/mcp' || !Array.isArray(body) || body.length < 2) return;
    if (!actor || actor.role === 'admin' || !limiter.enabled) return;
    if (body.length > limiter.burstSize) {
      throw new MailboxError(
        'VALIDATION_FAILED',
        'Batch too large',
        `This JSON-RPC batch holds ${body.length} messages, and each counts as a request: more than this server's ` +
          `rate-limit burst of ${limiter.burstSize} requests, so it could never be admitted. Send at most ` +
          `${limiter.burstSize} messages per batch (or one per request). Nothing was done.`,
        { field: 'body', messages: body.length, limit: limiter.burstSize },
      );
    }
    await limiter.admit(actor.identity, body.length - 1, body.length);
  });
}
