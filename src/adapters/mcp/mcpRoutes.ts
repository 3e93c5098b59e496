/**
 * POST /mcp: MCP over streamable HTTP, stateless (no session: every request
 * carries its bearer token, so any API node can answer it). GET and DELETE,
 * which only make sense with sessions, are refused with 405.
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { isMailboxError } from '../../errors';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { AgentApi } from '../../application/agentApi';
import { McpServerFactory } from './mcpServer';

const methodNotAllowed = { jsonrpc: '2.0', id: null,
  error: { code: -32000, message: 'Method not allowed: this MCP endpoint is stateless; send JSON-RPC with POST /mcp.' } };

/**
 * This endpoint takes the same static bearer tokens as the HTTP API; it is not
 * an OAuth-protected resource (MCP authorization is optional). So its 401
 * names no resource metadata (nothing for a client to start an OAuth login
 * with) and says, in the body MCP clients show, how to authenticate.
 */
export const MCP_STATIC_TOKEN_HINT = 'This MCP endpoint takes a static agent token, not OAuth: configure your MCP client with the header ' +
  "'Authorization: Bearer <agent token>' (the token POST /v1/agents returned; see docs/mcp.md).";

async function staticTokenChallenge(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  if (!isMailboxError(error) || error.code !== 'UNAUTHENTICATED') throw error; // the server's own handler answers the rest
  const presented = request.headers.authorization !== undefined;
  // RFC 6750: error="invalid_token" only when a token was presented.
  reply.header('www-authenticate', `Bearer realm="agent-mailbox"${presented ? ', error="invalid_token", error_description="unknown or retired token"' : ''}`);
  return reply.status(401).type('application/json; charset=utf-8')
    .send({ ...error.envelope, message: `${error.message} ${MCP_STATIC_TOKEN_HINT}`, oauth: false });
}

/**
* The routes, for the HTTP server to mount behind its bearer authentication (the composition root hands them over):
 * the HTTP adapter gives each request its caller's agent API, so this adapter needs nothing of HTTP's.
 */
export const mcpRoutes = (logger: Logger) => (app: FastifyInstance, agentApiFor: (request: FastifyRequest) => AgentApi): void => {
  const factory = new McpServerFactory((error) => logger.error({ err: error }, 'MCP tool failed'));

  app.post('/mcp', { config: { streaming: true }, errorHandler: staticTokenChallenge }, async (request, reply) => { // the transport writes the response itself
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
    app.route({ method, url: '/mcp', errorHandler: staticTokenChallenge, handler: async (_request, reply) => reply.status(405).header('allow', 'POST').send(methodNotAllowed) });
  }
};
