/**
 * A model sending a task writes its input as it would a body: `"input": "please review"`, or `{"text": "..."}`. It was
 * told "'task.input' must be an object (a JSON object of fields), not text" or "allowed fields in 'task.input': parts."
 * alone, and had to guess what a part is. Every refusal of the input's shape now shows it, as an artifact's refusal
 * shows an artifact: 'a task's input is {"parts": [{"kind": "text", "text": "..."}, ...]}, e.g. ...'. Nothing is sent.
 */
import { mcpTestServer, type ToolResult } from '../support/mcpSdkClients';

const mcp = mcpTestServer('task-input-form-e2e', ['@alice', '@bob', '@carol']);

const FORM =
  'a task\'s input is {"parts": [{"kind": "text", "text": "..."}, ...]}, e.g. "input": {"parts": [{"kind": "text", ' +
  '"text": "please review"}]}';
const send = (input: unknown) => ({ to: ['@bob', '@carol'], subject: 'review', body: 'b', task: { input } });

test.each(['http', 'stdio'])('over MCP (%s), a wrong input is shown the form; nothing is sent', async (via) => {
  const alice = via === 'http' ? await mcp.clients.http(mcp.t['@alice']) : await mcp.clients.stdio(mcp.t['@alice']);
  const cases: Array<[unknown, string, string, string]> = [
    [
      'please review',
      'VALIDATION_FAILED',
      'task.input',
      `add_message: 'task.input' must be an object (a JSON object of fields), not text "please review": ${FORM}`,
    ],
    [
      { text: 'please review' },
      'UNKNOWN_FIELD',
      'task.input.text',
      `add_message does not accept 'task.input.text'; allowed fields in 'task.input': parts; ${FORM}.`,
    ],
    [
      { parts: 'please review' },
      'VALIDATION_FAILED',
      'task.input.parts',
      `add_message: 'task.input.parts' must be a list (a JSON array), not text "please review": ${FORM}`,
    ],
  ];
  for (const [input, code, field, message] of cases) {
    const before = await mcp.server.eventCount();
    const result = (await alice.callTool({ name: 'add_message', arguments: send(input) })) as ToolResult;
    expect([input, result.isError]).toEqual([input, true]);
    expect(result.structuredContent).toMatchObject({ code, field, message });
    expect(await mcp.server.eventCount()).toBe(before);
  }
  // The form as shown is sent: the positive signal.
  const sent = (await alice.callTool({
    name: 'add_message',
    arguments: send({ parts: [{ kind: 'text', text: 'please review' }] }),
  })) as ToolResult;
  expect(sent.structuredContent).toMatchObject({ status: 'sent', recipients: ['@bob', '@carol'] });
});

test('over HTTP /v1 the same', async () => {
  const before = await mcp.server.eventCount();
  const refused = await mcp.server.call('POST', '/v1/messages', { token: mcp.t['@carol'], body: send('please review') });
  expect(refused.status).toBe(400);
  expect(refused.body).toMatchObject({ code: 'VALIDATION_FAILED', field: 'task.input' });
  expect(refused.body.message).toContain(`not text "please review": ${FORM}`);
  expect(await mcp.server.eventCount()).toBe(before);
});
