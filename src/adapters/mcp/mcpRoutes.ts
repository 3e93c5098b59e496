/**
 * POST /mcp: MCP over streamable HTTP, stateless (no session: every request
 * carries its bearer token, so any API node can answer it). GET and DELETE,
 * which only make sense with sessions, are refused with 405.
 */
import type { FastifyInstance } from 'fastify';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { actorOf } from '../http/auth';
import type { HttpContext } from '../http/httpContext';
import { inProcessAgentApi } from './agentApi';
import { McpServerFactory } from './mcpServer';

const methodNotAllowed = { jsonrpc: '2.0', id: null,
  error: { code: -32000, message: 'Method not allowed: this MCP endpoint is stateless; send JSON-RPC with POST /mcp.' } };

export function mcpRoutes(app: FastifyInstance, { mailbox, metrics, wakeLatency, logger }: HttpContext): void {
  const factory = new McpServerFactory((error) => logger.error({ err: error }, 'MCP tool failed'));

  app.post('/mcp', { config: { streaming: true } }, async (request, reply) => { // the transport writes the response itself
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
