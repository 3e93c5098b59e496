/**
 * Task arguments are honored or refused, never accepted and ignored, over MCP (the SDK client on POST /mcp) as over
 * HTTP. Before: claim_task's leaseSeconds on a direct task, by a holder without a lease, or while the task waited on
 * its sender answered `events: []` and `leaseExpiresAt: null`; update_task to Submitted (a release) with a note or a
 * reason answered the release, and the text was in no event. Every refusal writes nothing.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { callTool as tool, mcpTestServer } from '../support/mcpSdkClients';

const mcp = mcpTestServer('task-arguments-e2e');
const mcpClient = (identity: string): Promise<Client> => mcp.clients.http(mcp.t[identity]);

const sendTask = (to: string) => mcp.sendAs('@a', { to, subject: 'a task', body: 'x', task: {} });

test('leaseSeconds on a direct task: refused over MCP as over HTTP, nothing written', async () => {
  const taskId = await sendTask('@b');
  const b = await mcpClient('@b');
  const before = await mcp.server.eventCount();
  const overMcp = await tool(b, 'claim_task', { taskId, leaseSeconds: 600 });
  expect(overMcp.isError).toBe(true);
  expect(overMcp.body).toMatchObject({ code: 'VALIDATION_FAILED', field: 'leaseSeconds', taskId });
  expect(overMcp.body.message).toMatch(/sent directly to @b: it is theirs from the send.*takes no lease/);
  const overHttp = await mcp.server.call('POST', `/v1/tasks/${taskId}/claim`, {
    token: mcp.t['@b'],
    body: { leaseSeconds: 600 },
  });
  expect([overHttp.status, overHttp.body]).toEqual([400, overMcp.body]);
  expect(await mcp.server.eventCount()).toBe(before);
  // Without leaseSeconds, claiming a direct task still changes nothing, as documented.
  expect((await tool(b, 'claim_task', { taskId })).body).toMatchObject({ assignee: '@b', events: [] });
});

test('the holder of a broadcast task without a lease claims again with leaseSeconds: the lease starts, and shows', async () => {
  const taskId = await sendTask('AGENT:*');
  const b = await mcpClient('@b');
  expect((await tool(b, 'claim_task', { taskId })).body).toMatchObject({ assignee: '@b', leaseExpiresAt: null });
  const again = await tool(b, 'claim_task', { taskId, leaseSeconds: 600 });
  expect(again.isError).toBe(false);
  expect(again.body).toMatchObject({ assignee: '@b', events: ['TaskLeaseRenewed'], leaseExpiresAt: expect.any(String) });
  const left = Date.parse(again.body.leaseExpiresAt) - Date.now();
  expect(left).toBeGreaterThan(590_000);
  expect(left).toBeLessThanOrEqual(600_000);
  const held = (await tool(b, 'list_tasks', { view: 'assigned' })).body.tasks.find((task: any) => task.taskId === taskId);
  expect(held.leaseExpiresAt).toBe(again.body.leaseExpiresAt);
  expect((await tool(b, 'get_task', { taskId })).body.mailbox.lease).toEqual({ expiresAt: again.body.leaseExpiresAt });
});

test('leaseSeconds while the task waits on its sender: refused (no lease runs then), nothing written', async () => {
  const taskId = await sendTask('AGENT:*');
  const b = await mcpClient('@b');
  await tool(b, 'claim_task', { taskId, leaseSeconds: 600 });
  await tool(b, 'update_task', { taskId, to: 'Working' });
  await tool(b, 'update_task', { taskId, to: 'input-required', note: 'which branch?' });
  const before = await mcp.server.eventCount();
  const refused = await tool(b, 'claim_task', { taskId, leaseSeconds: 60 });
  expect(refused.isError).toBe(true);
  expect(refused.body).toMatchObject({ code: 'VALIDATION_FAILED', field: 'leaseSeconds', state: 'InputRequired' });
  expect(refused.body.message).toMatch(/waits on its sender/);
  expect(await mcp.server.eventCount()).toBe(before);
});

test.each(['note', 'reason'])(
  'a release (update_task to Submitted) with a %s: refused, not dropped; nothing written',
  async (field) => {
    const taskId = await sendTask('AGENT:*');
    const c = await mcpClient('@c');
    await tool(c, 'claim_task', { taskId });
    const before = await mcp.server.eventCount();
    const refused = await tool(c, 'update_task', { taskId, to: 'Submitted', [field]: 'not for me' });
    expect(refused.isError).toBe(true);
    expect(refused.body).toMatchObject({ code: 'VALIDATION_FAILED', field, to: 'Submitted' });
    expect(refused.body.message).toMatch(new RegExp(`records no ${field}.*send the sender a message`));
    const overHttp = await mcp.server.call('POST', `/v1/tasks/${taskId}/transition`, {
      token: mcp.t['@c'],
      body: { to: 'Submitted', [field]: 'not for me' },
    });
    expect([overHttp.status, overHttp.body]).toEqual([400, refused.body]);
    expect(await mcp.server.eventCount()).toBe(before);
    // Released as documented, the task is claimable again.
    expect((await tool(c, 'update_task', { taskId, to: 'Submitted' })).body).toMatchObject({
      assignee: null,
      events: ['TaskReleased'],
    });
  },
);

test.each([
  ['no kind (A2A v1.0 {"text"})', { text: 'done' }, 'this one has no "kind" (its fields: text)'],
  ['"type" for "kind"', { type: 'text', text: 'done' }, 'this one has no "kind" (its fields: type, text)'],
  ['a kind of none of the three', { kind: 'txt', text: 'done' }, '"kind" "txt" is none of text, data, file'],
])(
  'a part with %s: refused with the forms a part takes and what it had, over MCP and HTTP, nothing written',
  async (_what, part, had) => {
    const forms =
      'each part is {"kind": "text", "text": "..."}, {"kind": "data", "data": {...}} or {"kind": "file", "file": {"uri": "...", "mimeType"?: "..."}}';
    const b = await mcpClient('@b');
    const a = await mcpClient('@a');
    const taskId = await sendTask('@b');
    await tool(b, 'update_task', { taskId, to: 'Working' });
    const before = await mcp.server.eventCount();
    const artifact = await tool(b, 'update_task', { taskId, to: 'Completed', artifacts: [{ parts: [part] }] });
    expect(artifact).toMatchObject({ isError: true, body: { code: 'VALIDATION_FAILED', field: 'artifacts.0.parts.0.kind' } });
    expect(artifact.body.message).toContain(`${forms}; ${had}`);
    const input = await tool(a, 'add_message', { to: '@b', subject: 's', body: 'x', task: { input: { parts: [part] } } });
    expect(input).toMatchObject({ isError: true, body: { code: 'VALIDATION_FAILED', field: 'task.input.parts.0.kind' } });
    expect(input.body.message).toContain(`${forms}; ${had}`);
    const overHttp = await mcp.server.call('POST', `/v1/tasks/${taskId}/transition`, {
      token: mcp.t['@b'],
      body: { to: 'Completed', artifacts: [{ parts: [part] }] },
    });
    expect([overHttp.status, overHttp.body]).toEqual([400, artifact.body]);
    expect(await mcp.server.eventCount()).toBe(before);
    // The form it shows is taken.
    const done = await tool(b, 'update_task', {
      taskId,
      to: 'Completed',
      artifacts: [{ parts: [{ kind: 'text', text: 'done' }] }],
    });
    expect(done.body).toMatchObject({ state: 'Completed', events: ['TaskArtifactAdded', 'TaskStateChanged'] });
  },
);

test.each([
  ['done', 'Completed'],
  ['finished', 'Completed'],
  ['in-progress', 'Working'],
  ['TASK_STATE_DONE', 'Completed'],
  ['declined', 'Rejected'],
])('update_task to %j: refused with "did you mean %s?", never taken, over MCP and HTTP, nothing written', async (word, meant) => {
  const b = await mcpClient('@b');
  const taskId = await sendTask('@b');
  await tool(b, 'update_task', { taskId, to: 'Working' });
  const before = await mcp.server.eventCount();
  const overMcp = await tool(b, 'update_task', { taskId, to: word });
  expect(overMcp).toMatchObject({ isError: true, body: { code: 'VALIDATION_FAILED', field: 'to' } });
  expect(overMcp.body.message).toMatch(/^update_task: 'to' must be a task state: one of Submitted, Working, /);
  expect(overMcp.body.message).toContain(`, not ${JSON.stringify(word)}: did you mean ${meant}?`);
  const overHttp = await mcp.server.call('POST', `/v1/tasks/${taskId}/transition`, { token: mcp.t['@b'], body: { to: word } });
  expect([overHttp.status, overHttp.body]).toEqual([400, overMcp.body]);
  expect(await mcp.server.eventCount()).toBe(before);
  expect((await mcp.server.call('GET', `/v1/tasks/${taskId}`, { token: mcp.t['@b'] })).body.mailbox.state).toBe('Working');
});

test('a word that names no state is refused as before, with no guess', async () => {
  const b = await mcpClient('@b');
  const taskId = await sendTask('@b');
  const refused = await tool(b, 'update_task', { taskId, to: 'banana' });
  expect(refused.body.message).toMatch(/^update_task: 'to' must be a task state: one of Submitted, .* not "banana"$/);
  // A long value is shown cut, not whole.
  const long = await tool(b, 'update_task', { taskId, to: 'x'.repeat(5000) });
  expect(long.body.message).toMatch(/, not "x{56}\.\.\."$/);
});
