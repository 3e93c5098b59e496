/**
 * POST /mcp: MCP over streamable HTTP, stateless (no session: every request
 * carries its bearer token, so any API node can answer it). GET and DELETE,
 * which only make sense with sessions, are refused with 405.
 */
import type { FastifyInstance } from 'fastify';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { MAX_JSON_DEPTH, pathBeyondDepth, tooDeep } from '../../commands/jsonDepth';
import { actorOf } from '../http/auth';
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

export function mcpRoutes(app: FastifyInstance, { mailbox, metrics, wakeLatency, logger }: HttpContext): void {
  const factory = new McpServerFactory((error) => logger.error({ err: error }, 'MCP tool failed'));

  app.post('/mcp', { config: { streaming: true } }, async (request, reply) => { // the transport writes the response itself
    const refusal = depthRefusal(request.body);
    if (refusal && 'toolCall' in refusal) {
      const envelope = refusal.error.envelope;
      return reply.status(200).send({ jsonrpc: '2.0', id: refusal.toolCall.id,
        result: { isError: true, content: [{ type: 'text', text: JSON.stringify(envelope) }], structuredContent: envelope } });
    }
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
    await transport.handleRequest(request.raw, reply.raw, request.body);
  });

  for (const method of ['GET', 'DELETE'] as const) {
    app.route({ method, url: '/mcp', handler: async (_request, reply) => reply.status(405).header('allow', 'POST').send(methodNotAllowed) });
  }
}
