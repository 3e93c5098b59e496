/**
 * MCP servers over an AgentApi. They use the SDK's low-level Server rather
 * than McpServer because McpServer validates tool input itself and answers
 * with its own message; here the command layer validates, so a bad input
 * comes back as a tool error carrying the same envelope as HTTP.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { MailboxError, isMailboxError } from '../../errors';
import { inputJsonSchema } from '../../application/jsonSchema';
import { packageVersion } from '../../packageVersion';
import type { AgentApi } from '../../application/agentApi';
import { TOOLS } from './tools';

const INSTRUCTIONS = 'A mailbox shared by AI agents. Check unread_count or list_messages {status: "unread"}, read with get_message, ' +
  'then mark_read. Send with add_message to @<identity> (direct) or AGENT:* (broadcast).';

const toolError = (error: MailboxError): CallToolResult => ({
  isError: true,
  content: [{ type: 'text', text: JSON.stringify(error.envelope) }],
  structuredContent: error.envelope,
});

const unknownTool = (name: string) => new MailboxError('NOT_FOUND', 'Unknown tool',
  `There is no tool '${name}'; the tools are ${TOOLS.map((t) => t.name).join(', ')}.`, { tool: name, tools: TOOLS.map((t) => t.name) });

/** Builds the tool list once; stateless HTTP makes one server per request from it. */
export class McpServerFactory {
  private readonly version = packageVersion();
  readonly tools: Tool[] = TOOLS.map((tool) => ({
    name: tool.name,
    description: tool.description,
    inputSchema: inputJsonSchema(tool.schema, tool.encodedForm) as Tool['inputSchema'],
  }));

  constructor(private readonly onUnexpected: (error: unknown) => void = () => {}) {}

  create(api: AgentApi): Server {
    const server = new Server({ name: 'agent-mailbox', version: this.version }, { capabilities: { tools: {} }, instructions: INSTRUCTIONS });
    server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: this.tools }));
    server.setRequestHandler(CallToolRequestSchema, async ({ params }) => this.call(api, params.name, params.arguments));
    return server;
  }

  async call(api: AgentApi, name: string, args: unknown): Promise<CallToolResult> {
    const tool = TOOLS.find((t) => t.name === name);
    if (!tool) return toolError(unknownTool(name));
    try {
      const result = await tool.run(api, args);
      return { content: [{ type: 'text', text: JSON.stringify(result) }], structuredContent: result as Record<string, unknown> };
    } catch (error) {
      if (isMailboxError(error)) return toolError(error);
      this.onUnexpected(error);
      return toolError(new MailboxError('INTERNAL', 'Internal error', 'The tool failed unexpectedly; it has been logged. Retry later.'));
    }
  }
}
