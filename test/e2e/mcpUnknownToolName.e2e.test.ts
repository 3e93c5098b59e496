/**
 * A model calling a tool by a name it guessed (send_message, send, read_messages, get_inbox, mark_as_read...) was told
 * "There is no tool 'send_message'; the tools are add_message, list_messages, ..." and had to pick from thirteen. The
 * refusal now names the tool it most likely meant ("Did you mean add_message?", `suggestions`), from common names and
 * near spellings, over both MCP transports. Suggested, never called: nothing is written, nothing is read as sent.
 */
import { mcpTestServer, type ToolResult } from '../support/mcpSdkClients';

const mcp = mcpTestServer('unknown-tool-name-e2e');

const MEANT: Array<[string, string[]]> = [
  ['send_message', ['add_message']],
  ['send', ['add_message']],
  ['sendMessage', ['add_message']],
  ['broadcast', ['add_message']],
  ['read_messages', ['list_messages']],
  ['get_inbox', ['list_messages']],
  ['get_messages', ['list_messages', 'get_message']],
  ['list_message', ['list_messages']],
  ['read_message', ['get_message']],
  ['mark_as_read', ['mark_read']],
  ['markRead', ['mark_read']],
  ['get_unread_count', ['unread_count']],
  ['complete_task', ['update_task']],
  ['get_tasks', ['list_tasks', 'get_task']],
  ['mailbox__add_message', ['add_message']],
];

test.each(['http', 'stdio'])('over %s, an unknown tool names the one meant; none is called, nothing written', async (via) => {
  const a = via === 'http' ? await mcp.clients.http(mcp.t['@a']) : await mcp.clients.stdio(mcp.t['@a']);
  const to = via === 'http' ? '@b' : '@c'; // each transport's own recipient: its inbox holds only what this test sent
  for (const [name, suggestions] of MEANT) {
    const before = await mcp.server.eventCount();
    const result = (await a.callTool({
      name,
      arguments: { to, subject: 'standup', body: 'at 10', messageIds: [], view: 'assigned' },
    })) as ToolResult;
    expect([name, result.isError]).toEqual([name, true]);
    expect([name, result.structuredContent]).toMatchObject([name, { code: 'NOT_FOUND', tool: name, suggestions }]);
    expect(result.structuredContent.message).toContain(
      `There is no tool '${name}'. Did you mean ${suggestions.join(' or ')}? The tools are add_message, list_messages,`,
    );
    expect(JSON.parse(result.content[0].text)).toEqual(result.structuredContent);
    expect(await mcp.server.eventCount()).toBe(before);
  }
  const other = (await a.callTool({ name: 'launch_rocket', arguments: {} })) as ToolResult;
  expect(other.structuredContent).toMatchObject({ code: 'NOT_FOUND', tool: 'launch_rocket' });
  expect(other.structuredContent).not.toHaveProperty('suggestions');
  expect(other.structuredContent.message).toMatch(/^There is no tool 'launch_rocket'\. The tools are add_message, /);
  // The positive signal: a real send is written and its recipient sees it, and nothing of the unknown calls before it.
  const sent = (await a.callTool({ name: 'add_message', arguments: { to, subject: 'real', body: 'x' } })) as ToolResult;
  expect(sent.isError ?? false).toBe(false);
  const recipient = await mcp.clients.http(mcp.t[to]);
  const inbox = (await recipient.callTool({ name: 'list_messages', arguments: {} })) as ToolResult;
  expect(inbox.structuredContent.messages.map((m: { subject: string }) => m.subject)).toEqual(['real']);
});
