/**
 * get_delivery refused: a recipient asking for the ledger of a message it received, or a sender with a mistyped id,
 * was told "The delivery ledger of message <id> is shown only to its sender, auditors and admins." The sender read
 * that as "but I am its sender" and retried the same id. The tool error now says what holds for every such caller
 * (the message is not among those it sent) and where its own ids are, with the same envelope as GET
 * /v1/messages/{id}/delivery, over POST /mcp and `mailbox mcp` on stdio; a read, so nothing is written.
 */
import { mcpTestServer, type ToolResult } from '../support/mcpSdkClients';

const fixture = mcpTestServer('delivery-refused-e2e', ['@a', '@b', '@c']);

const refusal = (id: string) => ({
  error: 'Forbidden',
  code: 'FORBIDDEN',
  message:
    `Message ${id} is not among the messages you sent, and a delivery ledger is shown only to its sender, auditors ` +
    'and admins: check the id in your outbox (list_messages {"box": "outbox"}, GET /v1/messages?box=outbox).',
  messageId: id,
});

test.each(['http', 'stdio'] as const)(
  'over %s: a recipient, a stranger and a mistyping sender get the same true refusal',
  async (via) => {
    const { server, t, clients } = fixture;
    const sent = await fixture.sendAs('@a', { to: '@b', subject: 'ledger', body: '.' });
    const typo = `${sent.slice(0, -1)}${sent.endsWith('0') ? '1' : '0'}`;
    const before = await server.eventCount();
    for (const [who, id] of [
      ['@b', sent],
      ['@c', sent],
      ['@a', typo],
    ]) {
      const client = via === 'http' ? await clients.http(t[who]) : await clients.stdio(t[who]);
      const result = (await client.callTool({ name: 'get_delivery', arguments: { messageId: id } })) as ToolResult;
      expect([who, result.isError]).toEqual([who, true]);
      expect(result.structuredContent).toEqual(refusal(id));
      const http = await server.call('GET', `/v1/messages/${id}/delivery`, { token: t[who] });
      expect([http.status, http.body]).toEqual([403, result.structuredContent]);
    }
    const own = await clients.http(t['@a']);
    const ledger = (await own.callTool({ name: 'get_delivery', arguments: { messageId: sent } })) as ToolResult;
    expect(ledger.structuredContent).toMatchObject({ messageId: sent, sender: '@a', summary: { recipients: 1 } });
    expect(await server.eventCount()).toBe(before);
  },
);
