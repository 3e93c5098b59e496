/**
 * A model that spells the broadcast otherwise (agent:*, 'AGENT:* ', AGENTS:*, *, AGENT:all) is refused as before,
 * never corrected, and now told by its tool result that it meant AGENT:*, with AGENT:* first in suggestions, over
 * both MCP transports (POST /mcp and `mailbox mcp` on stdio); nothing is written. The literal broadcast then reaches
 * every other agent.
 */
import { McpSdkClients } from '../support/mcpSdkClients';
import { startTestServer, type TestServer } from '../support/httpServer';

type ToolResult = { isError?: boolean; content: Array<{ text: string }>; structuredContent?: any };

let server: TestServer;
let t: Record<string, string>;
const clients = new McpSdkClients(() => server.url, 'broadcast-spelling-e2e');

beforeAll(async () => {
  server = await startTestServer();
  t = await server.register(['@a', '@b', '@c', '@d']);
});
afterAll(async () => {
  await clients.closeAll();
  await server.close();
});

const SPELLINGS = ['agent:*', 'AGENT:* ', 'AGENTS:*', '*', 'AGENT:all'];

test.each(['http', 'stdio'])(
  'over %s, the broadcast spelled otherwise is refused, saying it meant AGENT:*; nothing is written',
  async (via) => {
    const a = via === 'http' ? await clients.http(t['@a']) : await clients.stdio(t['@a']);
    for (const to of SPELLINGS) {
      const before = await server.eventCount();
      const result = (await a.callTool({
        name: 'add_message',
        arguments: { to, subject: 'standup', body: 'at 10' },
      })) as ToolResult;
      expect([to, result.isError]).toEqual([to, true]);
      expect(result.structuredContent).toMatchObject({ code: 'INVALID_RECIPIENT_SHAPE', to, suggestions: ['AGENT:*'] });
      expect(result.structuredContent.message).toContain('Did you mean AGENT:*, the broadcast? It is written exactly so');
      expect(JSON.parse(result.content[0].text)).toEqual(result.structuredContent);
      expect(await server.eventCount()).toBe(before);
    }
    const sent = (await a.callTool({
      name: 'add_message',
      arguments: { to: 'AGENT:*', subject: 'standup', body: 'at 10' },
    })) as ToolResult;
    expect(sent.isError ?? false).toBe(false);
    expect([...sent.structuredContent.recipients].sort()).toEqual(['@b', '@c', '@d']);
  },
);
