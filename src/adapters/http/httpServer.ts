/**
 * The HTTP API v1 (DESIGN section 6) on fastify, over the library layer:
 * every route calls Mailbox.commands / Mailbox.queries; nothing here decides.
 */
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyRequest } from 'fastify';
import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Logger } from 'pino';
import { inProcessAgentApi, type AgentApi } from '../../application/agentApi';
import { isCommandName } from '../../application/commandNames';
import { causeOf, isMailboxError, MailboxError } from '../../errors';
import type { MailboxServices } from '../../application/mailboxServices';
import { actorOf, requireBearer } from './auth';
import { ConnectionDrain } from './connectionDrain';
import { boundHandlers } from './handlerTimeout';
import { requestLimitOf, type HttpContext } from './httpContext';
import { abandonedStatus, routeNotFound, sendEnvelope, toMailboxError } from './httpErrors';
import { registerJsonBodyParser } from './jsonBody';
import { readOversizedBodies } from './oversizedBody';
import { assertQueryDecodable, queryOf } from './queryEncoding';
import { MailboxMetrics } from './metrics';
import { RateLimiter } from './rateLimiter';
import { RefusedTokens } from './refusedTokens';
import { SharedLimitsFallback } from './sharedLimitsFallback';
import { ConsoleSeries } from './consoleSeries';
import { recordHttpCommands, recordRouteNotFound, toolRefusals } from './commandRecorder';
import { agentRoutes } from './routes/agentRoutes';
import { auditStreamRoutes } from './routes/auditStreamRoutes';
import { consoleApiRoutes } from './routes/consoleApiRoutes';
import { consoleRoutes } from './routes/consoleRoutes';
import { messageRoutes } from './routes/messageRoutes';
import { taskRoutes } from './routes/taskRoutes';
import { opsRoutes } from './routes/opsRoutes';
import { viewRoutes } from './routes/viewRoutes';
import { wakeRoutes } from './routes/wakeRoutes';
import { WakeLatencyTracker } from './wakeLatency';
import { OpenStreams } from './openStreams';
import { TOKEN_RECHECK_MS, WakeStreams } from './wakeStreams';
import { refuseEmptyPathParameters } from './emptyPathParameter';
import { refuseListingWordsAsIds } from './listingWordAsId';
import { refuseBodyOnReads, refuseIdempotencyKeyWhereNotHonored, refuseQueryOnWrites } from './writeQuery';
import {
  assertHeadWithinLimits,
  clientErrorHandler,
  frameworkErrorHandler,
  MAX_HEAD_BYTES,
  missingHost,
  NO_SNIFF,
  requestTimeoutOptions,
  UNPARSED_ROUTE,
} from './wireErrors';

declare module 'fastify' {
  interface FastifyRequest {
    startedAt: number;
  }
}

export interface HttpServer {
  app: FastifyInstance;
  context: HttpContext;
  /** Every route served (method and fastify path), for documentation checks. */
  routes: Array<{ method: string; url: string }>;
  /** Listens on host:port (port 0: any free port) and returns the base URL. */
  listen(host: string, port: number): Promise<string>;
  /** Ends the wake streams, stops accepting requests, waits for those in flight. */
  close(): Promise<void>;
}

/**
 * Routes another surface serves over this server behind its bearer authentication (MCP over streamable HTTP),
 * handed in by the composition root; each request gets its caller's agent API.
 */
export type AgentApiRoutes = (
  scope: FastifyInstance,
  agentApiFor: (request: FastifyRequest) => AgentApi,
  /** Records what a tool call refused (the rejection log): MCP answers refusals as results, never as HTTP errors. */
  refusedFor: (request: FastifyRequest) => (command: string, error: unknown) => void,
) => void;

/** fastify's default: no path parameter of this API (a UUID, an identity) comes near it. */
const MAX_PARAM_LENGTH = 100;

const shuttingDown = () =>
  new MailboxError(
    'UNAVAILABLE',
    'Shutting down',
    'This server is shutting down; retry against another node or after it restarts (the request was not applied).',
  );

export function buildHttpServer(mailbox: MailboxServices, logger: Logger, agentApiRoutes: AgentApiRoutes[] = []): HttpServer {
  const { config } = mailbox;
  // The rate limit and the wake-stream count share one: an outage is logged once when it starts and once when it ends.
  const sharedFallback = new SharedLimitsFallback(logger, config);
  const wakeStreams = new WakeStreams(config.maxWakeStreamsPerAgent, mailbox.sharedLimits ?? null, sharedFallback);
  // Each holds a subscription to the log, read at every append: an auditor's token is capped as an agent's wake streams
  // are (600 open streams doubled a send's latency); the admin, the operator, is not.
  const auditStreams = new WakeStreams(config.maxWakeStreamsPerAgent, null, undefined, 'audit streams');
  const openAuditStreams = new OpenStreams();
  const metrics = new MailboxMetrics(mailbox, () => wakeStreams.size);
  // Timed by the mailbox's clock, as the registry reads it guards are (a test moves both).
  const clock = mailbox.clock ?? { now: () => new Date() };
  const refused = new RefusedTokens(config.refusedTokensPerSecond, config.refusedTokenBurst, () => clock.now().getTime());
  // When the request a socket carries now began, as near as can be told of one node refused before it was a request:
  // the connection's opening, then the end of each answer on it (keep-alive), a request's start being unknown then.
  // With the bytes read by then: a connection that sent nothing since (a load balancer's TCP check, a browser's
  // preconnect) and is cut off by the request timeout made no request, and is not counted as one.
  const socketSince = new WeakMap<object, { at: number; bytesRead: number }>();
  const sinceNow = (socket: Socket) => socketSince.set(socket, { at: performance.now(), bytesRead: socket.bytesRead });
  const unparsed = (status: number, socket: Socket) => {
    const since = socketSince.get(socket);
    if (since !== undefined && socket.bytesRead === since.bytesRead) return;
    metrics.request(UNPARSED_ROUTE, UNPARSED_ROUTE, status, (performance.now() - (since?.at ?? performance.now())) / 1000);
  };
  const context: HttpContext = {
    mailbox,
    config,
    logger,
    metrics,
    wakeStreams,
    auditStreams,
    openAuditStreams,
    wakeLatency: new WakeLatencyTracker((seconds) => metrics.wakeDelivered(seconds)),
    requestLimit: requestLimitOf(config),
  };
  const httpLogger = logger.child({ component: 'http' });
  const app = Fastify({
    loggerInstance: httpLogger as FastifyBaseLogger,
    logController: new LogController({ disableRequestLogging: true }), // per-request lines would dominate the log; metrics count requests
    bodyLimit: context.requestLimit,
    requestTimeout: config.requestTimeoutMs, // receiving the request
    return503OnClosing: false,
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    frameworkErrors: frameworkErrorHandler(MAX_PARAM_LENGTH),
    clientErrorHandler: clientErrorHandler(config.requestTimeoutMs, unparsed),
    // Node answers an HTTP/1.1 request without a Host header with a bare 400 (no body) before fastify sees it; the
    // onRequest hook below refuses it instead, in the envelope (wireErrors.ts: missingHost).
    http: {
      requireHostHeader: false,
      maxHeaderSize: MAX_HEAD_BYTES,
      ...requestTimeoutOptions(config.requestTimeoutMs),
    },
  });
  // Every answer declares its type and holds to it: first on node's response, before fastify's handler, so that the
  // answers that bypass fastify's reply (event streams, MCP, routing errors) carry it too (wireErrors.ts: raw answers).
  app.server.prependListener('request', (_request, response: ServerResponse) => response.setHeader(...NO_SNIFF));
  app.server.on('connection', sinceNow);
  const connections = new ConnectionDrain(app.server);
  const series = new ConsoleSeries(mailbox, metrics);
  series.start();
  // A retired agent's open wake streams end at once, with a last `revoked` event. A retirement or a rotation done
  // through another API node reaches this one only through the registry: each second, the tokens of the open streams
  // are looked up again, as a request with them would be.
  const stopRevoking = mailbox.authenticator.onRevoked((identity, reason) => wakeStreams.revoke(identity, reason));
  const recheckTokens = setInterval(
    () => void wakeStreams.recheck((tokenHash) => mailbox.authenticator.revocationOf(tokenHash)),
    TOKEN_RECHECK_MS,
  );
  recheckTokens.unref();
  let closing = false;
  const routes: HttpServer['routes'] = [];
  // The methods each path takes, for the Allow header of a 405: a route that only answers 405 in a protocol's own
  // shape (GET, DELETE /mcp) is no method its path takes.
  const allowed: HttpServer['routes'] = [];
  app.addHook('onRoute', (route) => {
    const refusal = (route.config as { refusesMethod?: boolean } | undefined)?.refusesMethod === true;
    for (const method of [route.method].flat()) {
      if (method === 'HEAD') continue;
      routes.push({ method, url: route.url });
      if (!refusal) allowed.push({ method, url: route.url });
    }
  });

  boundHandlers(app, config.requestTimeoutMs);
  app.decorateRequest('actor', null);
  app.decorateRequest('startedAt', 0);
  registerJsonBodyParser(app);
  // Each request once in the duration histogram, with the status its client got: fastify's onResponse runs only for a
  // response that finished, so a request the request timeout cut off (408 on the socket) or its client abandoned (499)
  // was never counted. The response's close says so for those.
  const measured = new WeakSet<FastifyRequest>();
  const measure = (request: FastifyRequest, status: number) => {
    if (measured.has(request)) return;
    measured.add(request);
    if (request.raw.socket) sinceNow(request.raw.socket);
    const seconds = (performance.now() - request.startedAt) / 1000;
    metrics.request(request.method, request.routeOptions.url ?? 'unmatched', status, seconds);
  };
  app.addHook('onRequest', async (request, reply) => {
    request.startedAt = performance.now();
    reply.raw.once('close', () => {
      if (!reply.raw.writableFinished) measure(request, abandonedStatus(reply.raw, request.raw.socket ?? null));
    });
    assertHeadWithinLimits(request.raw); // a long query string is told so, not taken for oversized headers
    if (request.raw.httpVersion === '1.1' && request.headers.host === undefined) throw missingHost();
    if (closing) throw shuttingDown();
    assertQueryDecodable(queryOf(request.url)); // fastify's parser keeps what it cannot decode as written
  });
  app.addHook('onResponse', async (request, reply) => measure(request, reply.statusCode));
  app.setErrorHandler(async (error, request, reply) => {
    const limits = { requestLimit: context.requestLimit, timeoutMs: config.requestTimeoutMs };
    const translated = toMailboxError(error, limits, request.raw);
    if (translated.code === 'INTERNAL') request.log.error({ err: error, url: request.url }, 'request failed unexpectedly');
    else if (translated.status >= 500)
      request.log.warn({ code: translated.code, url: request.url, cause: causeOf(translated) }, translated.message);
    return sendEnvelope(reply, translated);
  });
  app.setNotFoundHandler(async (request, reply) => {
    const error = routeNotFound(request.method, request.url, allowed);
    await recordRouteNotFound(mailbox.rejections, clock, mailbox.authenticator, refused, request, error);
    const { allow } = error.envelope; // a path that is a route, asked with another method: 405, Allow says which
    if (Array.isArray(allow)) reply.header('allow', allow.join(', '));
    return sendEnvelope(reply, error);
  });
  app.addHook('preClose', async () => {
    closing = true;
    series.stop();
    stopRevoking();
    clearInterval(recheckTokens);
    wakeStreams.closeAll('server shutting down');
    openAuditStreams.closeAll('server shutting down');
    connections.drain();
  });

  refuseBodyOnReads(app);
  opsRoutes(app, context);
  consoleRoutes(app);
  const limiter = new RateLimiter(
    config.rateLimitPerSecond,
    config.rateLimitBurst,
    undefined,
    mailbox.sharedLimits ?? null,
    sharedFallback,
  );
  app.register(async (scope) => {
    recordHttpCommands(scope, mailbox.rejections, clock, metrics, {
      requestLimit: context.requestLimit,
      timeoutMs: config.requestTimeoutMs,
    });
    requireBearer(scope, mailbox.authenticator, limiter, refused);
    refuseQueryOnWrites(scope);
    refuseEmptyPathParameters(scope, allowed);
    refuseListingWordsAsIds(scope);
    refuseIdempotencyKeyWhereNotHonored(scope);
    for (const register of [agentRoutes, messageRoutes, taskRoutes, viewRoutes, wakeRoutes, auditStreamRoutes])
      register(scope, context);
    consoleApiRoutes(scope, context, series);
    const agentApiFor = (request: FastifyRequest) =>
      inProcessAgentApi(mailbox, actorOf(request), metrics, (sent) => {
        // A replayed add_message sent nothing: the wake latency runs from the original's arrival (messageRoutes.ts).
        if (!sent.replayed) context.wakeLatency.sendAcknowledged(sent.result.messageId, request.startedAt);
      });
    // In a scope of their own, whose bodies are read by readOversizedBodies: a route there may answer a body over the
    // limit in its own protocol (POST /mcp: a tool call too large to be read is that call's tool error).
    scope.register(async (apiRoutes) => {
      readOversizedBodies(apiRoutes, context.requestLimit);
      // A refused command is counted here too, when its command did not count it (its arguments refused by the tool
      // before the command ran): /metrics then counts what the rejection log records.
      const refusedFor = (request: FastifyRequest) => {
        const record = toolRefusals(mailbox.rejections, clock, actorOf(request));
        return (command: string, error: unknown) => {
          // (A call of a tool that does not exist, NOT_FOUND, is recorded by the name called, `send` too: no command ran.)
          if (isCommandName(command) && !(isMailboxError(error) && error.code === 'NOT_FOUND'))
            metrics.refusedOnce(command, 'mcp', error);
          record(command, error);
        };
      };
      for (const register of agentApiRoutes) register(apiRoutes, agentApiFor, refusedFor);
    });
  });

  return {
    app,
    context,
    routes,
    async listen(host, port) {
      // fastify logs `Server listening at <address>` (at info, once per address) as it binds and has no option to leave
      // it out (listenTextResolver only rewords it); the server says where it listens in its own line (server.ts: with
      // the docs URL and the log head), so an operator read the address twice. Its logger is at warn while it binds:
      // its warnings and errors still show, and it logs at the configured level again once bound.
      const level = httpLogger.level;
      if (httpLogger.isLevelEnabled('info')) httpLogger.level = 'warn';
      try {
        await app.listen({ host, port });
      } finally {
        httpLogger.level = level;
      }
      const address = app.server.address();
      const actualPort = typeof address === 'object' && address ? address.port : port;
      return `http://${host.includes(':') ? `[${host}]` : host}:${actualPort}`;
    },
    async close() {
      closing = true;
      await app.close();
    },
  };
}
