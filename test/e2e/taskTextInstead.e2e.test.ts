/**
 * update_task to Rejected (or Failed) with a note and no reason, the sentence a model wrote under the field it had used
 * for InputRequired, was told "needs a reason ...; add \"reason\"." as if it had given nothing, and the converse for a
 * question sent as a reason. The refusal now says the text it got is no stand-in: "(the note given goes beside the
 * reason, never in its place)", with `given`. Nothing is written; the move with the field it needs is taken.
 */
import { mcpTestServer, type ToolResult } from '../support/mcpSdkClients';

const mcp = mcpTestServer('task-text-instead-e2e', ['@alice', '@bob', '@carol']);

test.each(['http', 'stdio'])('over MCP (%s), a note for a reason and a reason for a note are told so', async (via) => {
  const bob = via === 'http' ? await mcp.clients.http(mcp.t['@bob']) : await mcp.clients.stdio(mcp.t['@bob']);
  const declined = await mcp.sendAs('@alice', { to: '@bob', subject: `decline ${via}`, body: 'b', task: {} });
  const asked = await mcp.sendAs('@alice', { to: '@bob', subject: `ask ${via}`, body: 'b', task: { state: 'Working' } });
  const cases: Array<[Record<string, unknown>, string, string]> = [
    [
      { taskId: declined, to: 'Rejected', note: 'too busy this week' },
      'reason',
      'Moving a task to Rejected needs a reason (a sentence for the sender saying why); add "reason" (the note given ' +
        'goes beside the reason, never in its place).',
    ],
    [
      { taskId: asked, to: 'InputRequired', reason: 'which branch?' },
      'note',
      'Moving a task to InputRequired needs a note (what you need from the sender); add "note" (the reason given goes ' +
        'beside the note, never in its place).',
    ],
  ];
  for (const [args, field, message] of cases) {
    const before = await mcp.server.eventCount();
    const result = (await bob.callTool({ name: 'update_task', arguments: args })) as ToolResult;
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toMatchObject({
      code: 'VALIDATION_FAILED',
      field,
      message,
      given: field === 'reason' ? 'note' : 'reason',
    });
    expect(await mcp.server.eventCount()).toBe(before);
  }
  const taken = (await bob.callTool({
    name: 'update_task',
    arguments: { taskId: declined, to: 'Rejected', reason: 'too busy this week', note: 'ask @carol' },
  })) as ToolResult;
  expect(taken.structuredContent).toMatchObject({ state: 'Rejected' });
});
