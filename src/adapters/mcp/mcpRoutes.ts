/**
 * POST /mcp: MCP over streamable HTTP, stateless (no session: every request
 * carries its bearer token, so any API node can answer it). GET and DELETE,
 * which only make sense with sessions, are refused with 405.
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { MailboxError, answeredEnvelope, isMailboxError, requestTimedOut } from '../../errors';
import type { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { AgentApi } from '../../application/agentApi';
import { MAX_JSON_DEPTH, pathBeyondDepth, tooDeep } from '../../commands/jsonDepth';
import type { McpServerFactory, Refused, refusedCommand, refuseInvalidParams } from './mcpServer';
import { emptyBatch, invalidJsonRpc, jsonRpcError } from './jsonRpcRefusals';
import { JsonRpcCallScanner, type ScannedCall } from './jsonRpcCallScanner';
import { refusingAgentApi } from './refusingAgentApi';

const methodNotAllowed = {
  jsonrpc: '2.0',
  id: null,
  error: { code: -32000, message: 'Method not allowed: this MCP endpoint is stateless; send JSON-RPC with POST /mcp.' },
};

/**
 * This endpoint takes the same static bearer tokens as the HTTP API; it is not
 * an OAuth-protected resource (MCP authorization is optional). So its 401
 * names no resource metadata (nothing for a client to start an OAuth login
 * with) and says, in the body MCP clients show, how to authenticate.
 */
export const MCP_STATIC_TOKEN_HINT =
  'This MCP endpoint takes a static agent token, not OAuth: configure your MCP client with the header ' +
  "'Authorization: Bearer <agent token>' (the token POST /v1/agents returned; see docs/mcp.md).";

/**
 * A body the JSON parser refused (not JSON, not UTF-8, a key given twice: the only errors raised before a body is
 * read) is JSON-RPC's Parse error, in JSON-RPC's shape, as an MCP client reads it; its data is the envelope the rest of
 * the API answers, which says where the JSON broke.
 */
const parseError = (error: MailboxError) => ({
  jsonrpc: '2.0',
  id: null,
  error: { code: -32700, message: `Parse error: ${error.message}`, data: error.envelope },
});

/**
 * A tools/call over the agent's rate limit is answered as the call: a tool result with isError and the RATE_LIMITED
 * envelope (retryAfterSeconds), which the model reads and can act on. A 429 reached MCP clients as a transport error
 * ("Error POSTing to endpoint"), which hosts treat as a broken server, and the model never saw when to retry. The
 * JSON-RPC request was read and answered, so 200, as every JSON-RPC answer here; Retry-After still says when to come
 * back. Anything else (tools/list, initialize, a batch) stays 429: the client, not a model, answers to it.
 */
function rateLimitedToolCall(error: MailboxError, request: FastifyRequest, reply: FastifyReply) {
  const toolCall = singleToolCall(request.body);
  if (!toolCall) return null;
  const { retryAfterSeconds } = error.envelope;
  if (typeof retryAfterSeconds === 'number') reply.header('retry-after', String(retryAfterSeconds));
  return reply.status(200).type('application/json; charset=utf-8').send(toolErrorResponse(toolCall.id, error.envelope));
}

/** The scanners of the bodies over the request limit (the HTTP adapter shows them their bytes, never parses them). */
const oversizedCalls = new WeakMap<FastifyRequest, JsonRpcCallScanner>();

const watchesOversizedBody = (request: FastifyRequest) => {
  const scanner = new JsonRpcCallScanner();
  oversizedCalls.set(request, scanner);
  return scanner;
};

/** What a request over the limit is, in words: the size and the excess as counted, the limit. */
function overTheLimit(envelope: Record<string, unknown>, what: string): string {
  const { limit } = envelope as { limit: number };
  const [bytes, atLeast] =
    typeof envelope.bytes === 'number' ? [envelope.bytes, ''] : [envelope.bytesAtLeast as number, 'at least '];
  return (
    `${what} is ${atLeast}${bytes} bytes, ${atLeast}${bytes - limit} over this server's limit of ${limit} bytes for ` +
    'one request, so it was not read and nothing was done.'
  );
}

/**
 * A body over the request limit, answered as what it was (its bytes were counted and scanned, never kept or parsed):
 * a tools/call with an id as that call's tool error (200), whose PAYLOAD_TOO_LARGE envelope gives the limit and the
 * size, which the model reads and can act on; anything else as a JSON-RPC error in a 413 (its id when one was read).
 * A bare 413 reached MCP clients as a transport error ("Error POSTing to endpoint"), which told the model neither.
 */
function oversizedRequest(error: MailboxError, scanned: ScannedCall, maxBodyBytes: number, reply: FastifyReply) {
  const json = 'application/json; charset=utf-8';
  if (!scanned.batch && scanned.method === 'tools/call' && scanned.id !== undefined) {
    const tool = scanned.tool ?? 'tool';
    const advice =
      scanned.tool === 'add_message'
        ? ` A message's body is at most ${maxBodyBytes} bytes: send less, split it over several messages, or put the ` +
          'content where the recipients can fetch it and send its location.'
        : ' Send smaller arguments.';
    const envelope = {
      ...error.envelope,
      message: overTheLimit(error.envelope, `This ${tool} call`) + advice,
      ...(scanned.tool === undefined ? {} : { tool: scanned.tool }),
    };
    return reply.status(200).type(json).send(toolErrorResponse(scanned.id, envelope));
  }
  const what = scanned.batch
    ? 'This JSON-RPC batch'
    : `This JSON-RPC request${scanned.method === undefined ? '' : ` (${scanned.method})`}`;
  const advice = scanned.batch ? ' Send fewer messages per request, or one at a time.' : ' Send a smaller request.';
  const envelope = { ...error.envelope, message: overTheLimit(error.envelope, what) + advice };
  return reply
    .status(413)
    .type(json)
    .send({ jsonrpc: '2.0', id: scanned.id ?? null, error: { code: -32600, message: envelope.message, data: envelope } });
}

async function staticTokenChallenge(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  if (isMailboxError(error) && error.code === 'RATE_LIMITED') {
    const answered = rateLimitedToolCall(error, request, reply);
    if (answered) return answered;
  }
  if (isMailboxError(error) && error.code === 'VALIDATION_FAILED' && request.body === undefined)
    return reply.status(400).type('application/json; charset=utf-8').send(parseError(error));
  if (!isMailboxError(error) || error.code !== 'UNAUTHENTICATED') throw error; // the server's own handler answers the rest
  const presented = request.headers.authorization !== undefined;
  // RFC 6750: error="invalid_token" only when a token was presented.
  reply.header(
    'www-authenticate',
    `Bearer realm="agent-mailbox"${presented ? ', error="invalid_token", error_description="unknown or retired token"' : ''}`,
  );
  return reply
    .status(401)
    .type('application/json; charset=utf-8')
    .send({ ...error.envelope, message: `${error.message} ${MCP_STATIC_TOKEN_HINT}`, oauth: false });
}

/**
 * The routes, for the HTTP server to mount behind its bearer authentication (the composition root hands them over):
 * the HTTP adapter gives each request its caller's agent API, so this adapter needs nothing of HTTP's.
 */
/** message > params > arguments: the levels JSON-RPC adds around a tool's arguments. */
const JSON_RPC_LEVELS = 3;

type JsonRpcMessage = { jsonrpc?: unknown; id?: unknown; method?: unknown; params?: { arguments?: unknown } };

/**
 * The JSON nesting limit, before the SDK or a tool validates anything: a tool
 * call whose arguments are too deep gets the VALIDATION_FAILED envelope as its
 * tool error (like any refused call); any other over-deep body is a 400.
 */
function depthRefusal(
  body: unknown,
): { toolCall: JsonRpcMessage; error: ReturnType<typeof tooDeep> } | { error: ReturnType<typeof tooDeep> } | null {
  for (const message of (Array.isArray(body) ? body : [body]) as JsonRpcMessage[]) {
    const args = message && typeof message === 'object' ? message.params?.arguments : undefined;
    const argsPath = pathBeyondDepth(args);
    if (argsPath) {
      const error = tooDeep(argsPath);
      return !Array.isArray(body) && message.method === 'tools/call' && message.id !== undefined
        ? { toolCall: message, error }
        : { error };
    }
  }
  const path = pathBeyondDepth(body, MAX_JSON_DEPTH + JSON_RPC_LEVELS);
  return path ? { error: tooDeep(path, [], MAX_JSON_DEPTH + JSON_RPC_LEVELS) } : null;
}

/**
 * A request (any method but notifications/*) sent without an id is a JSON-RPC notification: the SDK answers none
 * and runs nothing, so the HTTP answer would be an empty 202 and a tools/call silently dropped. Refused instead.
 */
function requestWithoutId(body: unknown): { message: JsonRpcMessage; error: MailboxError } | null {
  for (const message of (Array.isArray(body) ? body : [body]) as JsonRpcMessage[]) {
    if (!message || typeof message !== 'object' || typeof message.method !== 'string') continue;
    if (message.method.startsWith('notifications/') || message.id !== undefined) continue;
    const error = new MailboxError(
      'VALIDATION_FAILED',
      'Validation failed',
      `'${message.method}' was sent without an id: a JSON-RPC message without an id is a notification, which gets no answer, ` +
        'so nothing was done. Give it an id (e.g. "id": 1); only notifications/* methods are sent without one.',
      { field: 'id', method: message.method },
    );
    return { message, error };
  }
  return null;
}

/** A tool error result carrying the envelope, as the JSON-RPC answer to `id`. */
const toolErrorResponse = (id: unknown, envelope: object) => ({
  jsonrpc: '2.0',
  id,
  result: { isError: true, content: [{ type: 'text', text: JSON.stringify(envelope) }], structuredContent: envelope },
});

const singleToolCall = (body: unknown): JsonRpcMessage | null => {
  const message = body as JsonRpcMessage | null;
  return message &&
    typeof message === 'object' &&
    !Array.isArray(message) &&
    message.method === 'tools/call' &&
    message.id !== undefined
    ? message
    : null;
};

/**
 * The header `mailbox mcp` sends with a message it refused itself (MailboxHttpClient.postMcp), for this server to refuse
 * and record it as its own: such a message is checked as any other and never run.
 */
export const REFUSAL_REPORT_HEADER = 'mailbox-refusal-report';
const reportOnly = (request: FastifyRequest) => request.headers[REFUSAL_REPORT_HEADER] !== undefined;
const NOT_RUN = new MailboxError(
  'FORBIDDEN',
  'Not run',
  `This message was sent as a refusal report (the ${REFUSAL_REPORT_HEADER} header) and passed every check here: it was ` +
    'neither run nor recorded. Send it without that header to run it.',
);

export interface McpRouteOptions {
  logger: Logger;
  /** The largest message body (MAILBOX_MAX_BODY_BYTES), named to a tool call too large to be read and in tools/list. */
  maxBodyBytes: number;
  /** The request deadline of every route (MAILBOX_REQUEST_TIMEOUT_MS); 0: none. */
  requestTimeoutMs: number;
}

export const mcpRoutes =
  ({ logger, maxBodyBytes, requestTimeoutMs }: McpRouteOptions) =>
  (
    app: FastifyInstance,
    agentApiFor: (request: FastifyRequest) => AgentApi,
    refusedFor: (request: FastifyRequest) => Refused,
  ): void => {
    // The MCP SDK and the tools' JSON schemas, loaded at the first POST /mcp (~0.15 s): a server no MCP client talks
    // to, and every start, does without them. A failed load is not kept: the next request tries again.
    let mcp:
      | Promise<{
          factory: McpServerFactory;
          Transport: typeof StreamableHTTPServerTransport;
          isJsonRpcMessage: (message: unknown) => boolean;
          refuseInvalidParams: typeof refuseInvalidParams;
          refusedCommand: typeof refusedCommand;
        }>
      | undefined;
    const loadMcp = () =>
      (mcp ??= Promise.all([
        import('./mcpServer'),
        import('@modelcontextprotocol/sdk/server/streamableHttp.js'),
        import('@modelcontextprotocol/sdk/types.js'),
      ]).then(
        ([
          { McpServerFactory, refuseInvalidParams, refusedCommand },
          { StreamableHTTPServerTransport },
          { JSONRPCMessageSchema },
        ]) => ({
          factory: new McpServerFactory((error) => logger.error({ err: error }, 'MCP tool failed'), { maxBodyBytes }),
          Transport: StreamableHTTPServerTransport,
          isJsonRpcMessage: (message: unknown) => JSONRPCMessageSchema.safeParse(message).success,
          refuseInvalidParams,
          refusedCommand,
        }),
        (error: unknown) => {
          mcp = undefined;
          throw error;
        },
      ));

    // answersRateLimit: the HTTP adapter reads the body of a rate-limited request, so that a tool call is refused as one.
    // watchesOversizedBody: it reads a body over the request limit (counted and scanned, never kept), so that a tool
    // call too large to be read is answered as that call.
    const config = { streaming: true, answersRateLimit: true, watchesOversizedBody };
    const errorHandler = async (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
      const scanned = oversizedCalls.get(request);
      if (scanned && isMailboxError(error) && error.code === 'PAYLOAD_TOO_LARGE' && request.body === undefined)
        return oversizedRequest(error, scanned.result(), maxBodyBytes, reply);
      return staticTokenChallenge(error, request, reply);
    };
    app.post('/mcp', { config, errorHandler }, async (request, reply) => {
      // the transport writes the response itself
      const refused = refusedFor(request);
      // Each refusal is recorded (the rejection log) by the tool or method it was for (refusedCommand), before it is answered.
      const json = 'application/json; charset=utf-8';
      const empty = emptyBatch(request.body);
      if (empty) {
        await refused('POST /mcp', empty, request.body); // no message in it: named by the route
        return reply.status(400).type(json).send(jsonRpcError(-32600, empty));
      }
      const refusal = depthRefusal(request.body);
      const { factory, Transport, isJsonRpcMessage, refuseInvalidParams, refusedCommand } = await loadMcp();
      if (refusal) {
        const message = 'toolCall' in refusal ? refusal.toolCall : Array.isArray(request.body) ? undefined : request.body;
        await refused(refusedCommand(message, 'POST /mcp'), refusal.error, message);
        if ('toolCall' in refusal) return reply.status(200).send(toolErrorResponse(refusal.toolCall.id, refusal.error.envelope));
        return reply.status(refusal.error.status).type(json).send(refusal.error.envelope);
      }
      const invalid = invalidJsonRpc(request.body, isJsonRpcMessage);
      if (invalid) {
        const { index } = invalid.error.envelope;
        const message = Array.isArray(request.body) ? request.body[index as number] : request.body;
        await refused(refusedCommand(message, 'POST /mcp'), invalid.error, message);
        return reply
          .status(invalid.code === -32602 ? 200 : 400) // Invalid params: a request answered, as the SDK answers its own
          .type(json)
          .send(jsonRpcError(invalid.code, invalid.error, invalid.id));
      }
      const withoutId = requestWithoutId(request.body);
      if (withoutId) {
        await refused(refusedCommand(withoutId.message), withoutId.error, withoutId.message);
        return reply.status(withoutId.error.status).type(json).send(withoutId.error.envelope);
      }
      // A refusal report (`mailbox mcp` telling what it refused itself) is checked as any message and never run: a
      // message this server would accept (another version's stdio, which refused it by other rules) is answered
      // FORBIDDEN and recorded nowhere; forwarded as an ordinary request, it would have run what the agent was told
      // was refused (a send written after "refused").
      const server = reportOnly(request)
        ? factory.create(refusingAgentApi(NOT_RUN), (command, error, message) =>
            error === NOT_RUN ? undefined : refused(command, error, message),
          )
        : factory.create(agentApiFor(request), refused, request.actor);
      const transport = new Transport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      reply.hijack();
      reply.raw.on('close', () => {
        void transport.close();
        void server.close();
      });
      await server.connect(transport);
      refuseInvalidParams(transport, refused);
      await underDeadline(transport.handleRequest(request.raw, reply.raw, request.body), requestTimeoutMs, () => {
        // The request deadline, as on every other route (the transport writes its own response, so the
        // handler timeout cannot wrap it). Past it the transport's late answer has nowhere to go.
        if (reply.raw.headersSent) return;
        const error = requestTimedOut(requestTimeoutMs);
        const envelope = answeredEnvelope(error);
        const toolCall = singleToolCall(request.body);
        const [status, body] = toolCall ? [200, toolErrorResponse(toolCall.id, envelope)] : [error.status, envelope];
        reply.raw
          .writeHead(status, {
            'content-type': 'application/json; charset=utf-8',
            'retry-after': String(envelope.retryAfterSeconds),
          })
          .end(JSON.stringify(body));
      });
    });

    for (const method of ['GET', 'DELETE'] as const) {
      app.route({
        method,
        url: '/mcp',
        // A refusal, not a method /mcp takes: left out of the Allow header of 405s (OPTIONS /mcp: `POST`).
        config: { refusesMethod: true },
        errorHandler: staticTokenChallenge,
        handler: async (_request, reply) => reply.status(405).header('allow', 'POST').send(methodNotAllowed),
      });
    }
  };

/** Waits for `work` at most `timeoutMs` (0: no limit); past it runs `onTimeout` and stops waiting. */
async function underDeadline(work: Promise<void>, timeoutMs: number, onTimeout: () => void): Promise<void> {
  if (timeoutMs <= 0) return work;
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<void>((resolve) => {
    timer = setTimeout(() => {
      onTimeout();
      resolve();
    }, timeoutMs);
  });
  try {
    await Promise.race([work, deadline]);
  } finally {
    clearTimeout(timer);
  }
  work.catch(() => undefined); // a late failure of abandoned work is not this request's any more
}
