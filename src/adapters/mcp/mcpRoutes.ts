/**
 * POST /mcp: MCP over streamable HTTP, stateless (no session: every request
 * carries its bearer token, so any API node can answer it). GET and DELETE,
 * which only make sense with sessions, are refused with 405.
 */
import type { FastifyInstance } from 'fastify';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { MAX_JSON_DEPTH, pathBeyondDepth, tooDeep } from '../../commands/jsonDepth';
import { actorOf } from '../http/auth';
import { timedOut } from '../http/handlerTimeout';
import { sendEnvelope } from '../http/httpErrors';
import type { HttpContext } from '../http/httpContext';
import { inProcessAgentApi } from './agentApi';
import { McpServerFactory } from './mcpServer';

const methodNotAllowed = { jsonrpc: '2.0', id: null,
  error: { code: -32000, message: 'Method not allowed: this MCP endpoint is stateless; send JSON-RPC with POST /mcp.' } };

/** message > params > arguments: the levels JSON-RPC adds around a tool's arguments. */
const JSON_RPC_LEVELS = 3;

type JsonRpcMessage = { jsonrpc?: unknown; id?: unknown; method?: unknown; params?: { arguments?: unknown } };

/**
 * The JSON nesting limit, before the SDK or a tool validates anything: a tool
 * call whose arguments are too deep gets the VALIDATION_FAILED envelope as its
 * tool error (like any refused call); any other over-deep body is a 400.
 */
function depthRefusal(body: unknown): { toolCall: JsonRpcMessage; error: ReturnType<typeof tooDeep> } | { error: ReturnType<typeof tooDeep> } | null {
  for (const message of (Array.isArray(body) ? body : [body]) as JsonRpcMessage[]) {
    const args = message && typeof message === 'object' ? message.params?.arguments : undefined;
    const argsPath = pathBeyondDepth(args);
    if (argsPath) {
      const error = tooDeep(argsPath);
      return !Array.isArray(body) && message.method === 'tools/call' && message.id !== undefined ? { toolCall: message, error } : { error };
    }
  }
  const path = pathBeyondDepth(body, MAX_JSON_DEPTH + JSON_RPC_LEVELS);
  return path ? { error: tooDeep(path, [], MAX_JSON_DEPTH + JSON_RPC_LEVELS) } : null;
}

/** A tool error result carrying the envelope, as the JSON-RPC answer to `id`. */
const toolErrorResponse = (id: unknown, envelope: object) => ({ jsonrpc: '2.0', id,
  result: { isError: true, content: [{ type: 'text', text: JSON.stringify(envelope) }], structuredContent: envelope } });

const singleToolCall = (body: unknown): JsonRpcMessage | null => {
  const message = body as JsonRpcMessage | null;
  return message && typeof message === 'object' && !Array.isArray(message) && message.method === 'tools/call' && message.id !== undefined
    ? message : null;
};

export function mcpRoutes(app: FastifyInstance, { mailbox, metrics, wakeLatency, logger, config }: HttpContext): void {
  const factory = new McpServerFactory((error) => logger.error({ err: error }, 'MCP tool failed'));

  app.post('/mcp', { config: { streaming: true } }, async (request, reply) => { // the transport writes the response itself
    const refusal = depthRefusal(request.body);
    if (refusal && 'toolCall' in refusal) return reply.status(200).send(toolErrorResponse(refusal.toolCall.id, refusal.error.envelope));
    if (refusal) return sendEnvelope(reply, refusal.error);
    const api = inProcessAgentApi(mailbox, actorOf(request), metrics, (sent) => wakeLatency.sendAcknowledged(sent.messageId, request.startedAt));
    const server = factory.create(api);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    reply.hijack();
    reply.raw.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await underDeadline(transport.handleRequest(request.raw, reply.raw, request.body), config.requestTimeoutMs, () => {
      // The request deadline, as on every other route (the transport writes its own response, so the
      // handler timeout cannot wrap it). Past it the transport's late answer has nowhere to go.
      if (reply.raw.headersSent) return;
      const error = timedOut(config.requestTimeoutMs);
      const toolCall = singleToolCall(request.body);
      const [status, body] = toolCall ? [200, toolErrorResponse(toolCall.id, error.envelope)] : [error.status, error.envelope];
      reply.raw.writeHead(status, { 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify(body));
    });
  });

  for (const method of ['GET', 'DELETE'] as const) {
    app.route({ method, url: '/mcp', handler: async (_request, reply) => reply.status(405).header('allow', 'POST').send(methodNotAllowed) });
  }
}

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
