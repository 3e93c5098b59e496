/**
 * POST /mcp: MCP over streamable HTTP, stateless (no session: every request
 * carries its bearer token, so any API node can answer it). GET and DELETE,
 * which only make sense with sessions, are refused with 405.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { AgentApi } from '../../application/agentApi';
import { McpServerFactory } from './mcpServer';

const methodNotAllowed = { jsonrpc: '2.0', id: null,
  error: { code: -32000, message: 'Method not allowed: this MCP endpoint is stateless; send JSON-RPC with POST /mcp.' } };

/**
 * The routes, for the HTTP server to mount behind its bearer authentication (the composition root hands them over):
 * the HTTP adapter gives each request its caller's agent API, so this adapter needs nothing of HTTP's.
 */
export const mcpRoutes = (logger: Logger) => (app: FastifyInstance, agentApiFor: (request: FastifyRequest) => AgentApi): void => {
  const factory = new McpServerFactory((error) => logger.error({ err: error }, 'MCP tool failed'));

  app.post('/mcp', { config: { streaming: true } }, async (request, reply) => { // the transport writes the response itself
    const server = factory.create(agentApiFor(request));
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
};
