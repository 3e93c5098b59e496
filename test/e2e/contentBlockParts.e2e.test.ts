/**
 * A model writes what it reads: its tool results are MCP content blocks, {"type": "text", "text": "..."}. A task part
 * written so (add_message's task.input.parts, update_task's artifacts) was refused with the part forms and "this one
 * has no "kind" (its fields: type, text)", not that "type" is the word to change; a body (or subject) sent as content
 * blocks, "must be text (a JSON string), not an array [...]" alone. The refusal now says it: a part names its kind in
 * "kind" where a content block says "type", with the part written right ({"kind": "text", "text": "please review"});
 * text given as content blocks is told to give the text itself. Still refused (suggested, never taken), over MCP (the
 * SDK's client, both transports) and HTTP alike, nothing written; the form shown is then taken.
 */
import { mcpTestServer, type ToolResult } from '../support/mcpSdkClients';

const mcp = mcpTestServer('content-block-parts', ['@a', '@b', '@c']);

const PART_SAID = 'a part names its kind in "kind", where an MCP content block says "type"';

async function refusedWithoutEvents<T>(call: () => Promise<T>): Promise<T> {
  const before = await mcp.server.eventCount();
  const refused = await call();
  expect(await mcp.server.eventCount()).toBe(before);
  return refused;
}

describe.each(['http', 'stdio'] as const)('MCP over %s', (via) => {
  const client = (identity: string) => (via === 'http' ? mcp.clients.http(mcp.t[identity]) : mcp.clients.stdio(mcp.t[identity]));
  const callTool = async (identity: string, name: string, args: Record<string, unknown>) =>
    (await (await client(identity)).callTool({ name, arguments: args })) as ToolResult;

  test('add_message with a task input part written {"type": "text", ...}: told to write "kind", nothing written', async () => {
    const refused = await refusedWithoutEvents(() =>
      callTool('@a', 'add_message', {
        to: ['@b', '@c'],
        subject: 'review',
        body: 'see the task',
        task: { input: { parts: [{ type: 'text', text: 'please review' }] } },
      }),
    );
    expect(refused.isError).toBe(true);
    expect(refused.structuredContent).toMatchObject({ code: 'VALIDATION_FAILED', field: 'task.input.parts.0.kind' });
    expect(refused.structuredContent.message).toContain(
      `this one has no "kind" (its fields: type, text): ${PART_SAID}: write it {"kind": "text", "text": "please review"}`,
    );
    // Written as shown, it is taken: one message, delivered to both.
    const sent = await callTool('@a', 'add_message', {
      to: ['@b', '@c'],
      subject: 'review',
      body: 'see the task',
      task: { input: { parts: [{ kind: 'text', text: 'please review' }] } },
    });
    expect(sent.isError).toBeFalsy();
    expect(sent.structuredContent).toMatchObject({ recipients: ['@b', '@c'] });
  });

  test('update_task with an artifact part written {"type": "text", ...}: told to write "kind", the task unchanged', async () => {
    const taskId = await mcp.sendAs('@a', { to: '@b', subject: 'review', body: 'please', task: {} });
    expect((await callTool('@b', 'update_task', { taskId, to: 'Working' })).structuredContent).toMatchObject({
      state: 'Working',
    });
    const refused = await refusedWithoutEvents(() =>
      callTool('@b', 'update_task', { taskId, to: 'Completed', artifacts: [{ parts: [{ type: 'text', text: 'LGTM' }] }] }),
    );
    expect(refused.structuredContent).toMatchObject({ code: 'VALIDATION_FAILED', field: 'artifacts.0.parts.0.kind' });
    expect(refused.structuredContent.message).toContain(`${PART_SAID}: write it {"kind": "text", "text": "LGTM"}`);
    const task = await callTool('@b', 'get_task', { taskId });
    expect(task.structuredContent).toMatchObject({ status: { state: 'TASK_STATE_WORKING' }, artifacts: [] });
  });

  test('a body sent as content blocks: told to give the text itself, nothing written', async () => {
    const refused = await refusedWithoutEvents(() =>
      callTool('@a', 'add_message', {
        to: ['@b', '@c'],
        subject: 'standup',
        body: [{ type: 'text', text: '10:00 in room 4' }],
      }),
    );
    expect(refused.structuredContent).toMatchObject({ code: 'VALIDATION_FAILED', field: 'body' });
    expect(refused.structuredContent.message).toContain(
      `'body' must be text (a JSON string), not an array [{"type":"text","text":"10:00 in room 4"}]: give the text ` +
        `itself, "10:00 in room 4", not MCP content blocks ({"type": "text", "text": ...})`,
    );
  });
});

test('HTTP: the same refusals, the same envelopes as MCP, nothing written', async () => {
  const alice = await mcp.clients.http(mcp.t['@a']);
  const message = {
    to: ['@b', '@c'],
    subject: 'review',
    body: 'see the task',
    task: { input: { parts: [{ type: 'text', text: 'please review' }] } },
  };
  const overMcp = (await alice.callTool({ name: 'add_message', arguments: message })) as ToolResult;
  const overHttp = await refusedWithoutEvents(() =>
    mcp.server.call('POST', '/v1/messages', { token: mcp.t['@a'], body: message }),
  );
  expect([overHttp.status, overHttp.body]).toEqual([400, overMcp.structuredContent]);
  const blocks = await refusedWithoutEvents(() =>
    mcp.server.call('POST', '/v1/messages', {
      token: mcp.t['@a'],
      body: { to: '@b', subject: { type: 'text', text: 'standup' }, body: 'x' },
    }),
  );
  expect(blocks.status).toBe(400);
  expect(blocks.body).toMatchObject({ code: 'VALIDATION_FAILED', field: 'subject' });
  expect(blocks.body.message).toContain('give the text itself, "standup", not MCP content blocks');
  // A content block of a kind parts do not have: the kinds there are.
  const image = await refusedWithoutEvents(() =>
    mcp.server.call('POST', '/v1/messages', {
      token: mcp.t['@a'],
      body: { ...message, task: { input: { parts: [{ type: 'image', data: 'iVBORw0KGgo=', mimeType: 'image/png' }] } } },
    }),
  );
  expect(image.body.message).toContain(
    `${PART_SAID}; the kinds are text, data and file (other content, such as an image, goes in a file part by its uri)`,
  );
  const inbox = await mcp.server.call('GET', '/v1/messages', { token: mcp.t['@c'] });
  expect(inbox.body.messages.map((m: { subject: string }) => m.subject)).not.toContain('standup');
});
