/**
 * A read shows a task as of its time: a claim whose lease ran out, or a task past its deadline, is not shown as still
 * held (or open) because the sweeper has not run yet. Before, GET /v1/tasks/{id}, get_task and GET /v1/tasks said
 * "assignee: @b, lease to T" past T, while @c's claim would succeed and @b's update be refused LEASE_EXPIRED. On an
 * injected clock with the sweeper off: @s sends, @b holds, @c and @d are the audience. Reads write nothing.
 */
import { allEvents } from '../support/fixtures';
import { McpSdkClients } from '../support/mcpSdkClients';
import { startTestServer, type TestServer } from '../support/httpServer';

const T0 = Date.parse('2030-05-01T12:00:00.000Z');
let at = T0;
const iso = (ms: number) => new Date(ms).toISOString();

let server: TestServer;
let t: Record<string, string>;
const mcp = new McpSdkClients(() => server.url, 'lapsed-read');

beforeAll(async () => {
  server = await startTestServer({ taskSweepMs: 0 }, { clock: { now: () => new Date(at) } });
  t = await server.register(['@s', '@b', '@c', '@d']);
});
afterAll(async () => {
  await mcp.closeAll();
  await server.close();
});

const call = async (who: string, method: string, path: string, body?: object, status = 200) => {
  const answer = await server.call(method, path, { token: t[who], body });
  expect([answer.status, answer.body]).toEqual([status, expect.anything()]);
  return answer.body;
};

/** What each read says of the task: `reader`'s GET /v1/tasks/{id} (its mailbox part and status) and @s's sent listing. */
const reads = async (taskId: string, reader = '@c') => {
  const taskEvents = async () => (await allEvents(server.mailbox)).filter((event) => event.type.startsWith('Task')).length;
  const before = await taskEvents();
  const got = await call(reader, 'GET', `/v1/tasks/${taskId}`);
  const sent = (await call('@s', 'GET', '/v1/tasks?view=sent')).tasks.find((task: { taskId: string }) => task.taskId === taskId);
  expect(await taskEvents()).toBe(before); // a read records nothing of the task (a recipient's read marks it seen)
  return { got, sent };
};

/** The task as `who`'s MCP list_tasks lists it (undefined: not listed), and the client that asked. */
const listedOverMcp = async (who: string, taskId: string, args: Record<string, string>) => {
  const client = await mcp.http(t[who]);
  const listing = (await client.callTool({ name: 'list_tasks', arguments: args })) as {
    structuredContent?: { tasks: Array<{ taskId: string }> };
  };
  return { client, listed: listing.structuredContent?.tasks.find((task) => task.taskId === taskId) };
};

test('a lease that ran out: every read shows the task back with its audience, lapsed at the lease end', async () => {
  const { messageId: taskId } = await call(
    '@s',
    'POST',
    '/v1/messages',
    {
      to: ['@b', '@c', '@d'],
      subject: 'leased',
      body: 'x',
      task: {},
    },
    201,
  );
  const lease = iso(at + 60_000);
  await call('@b', 'POST', `/v1/tasks/${taskId}/claim`, { leaseSeconds: 60 });
  await call('@b', 'POST', `/v1/tasks/${taskId}/transition`, { to: 'Working' });

  at += 59_000; // still running: held by @b
  const running = await reads(taskId);
  expect(running.got.mailbox).toMatchObject({
    state: 'Working',
    assignee: '@b',
    lease: { expiresAt: lease },
    lapsedClaimant: null,
  });
  expect(running.sent).toMatchObject({ state: 'Working', assignee: '@b', leaseExpiresAt: lease });

  at += 2_000; // past the lease, not swept
  const lapsed = await reads(taskId);
  expect(lapsed.got.mailbox).toMatchObject({
    state: 'Submitted',
    assignee: null,
    claimedAt: null,
    lease: null,
    lapsedClaimant: '@b',
  });
  expect(lapsed.got.status).toMatchObject({
    state: 'TASK_STATE_SUBMITTED',
    timestamp: lease,
    message: { parts: [{ kind: 'text', text: `the lease of @b lapsed at ${lease}: back to Submitted, claimable again` }] },
  });
  expect(lapsed.sent).toMatchObject({
    state: 'Submitted',
    assignee: null,
    claimedAt: null,
    leaseExpiresAt: null,
    lapsedClaimant: '@b',
    updatedAt: lease,
  });
  // What it says is what the commands do: @b's update is refused, @d's claim wins.
  expect(
    (await server.call('POST', `/v1/tasks/${taskId}/transition`, { token: t['@b'], body: { to: 'Completed' } })).body,
  ).toMatchObject({
    code: 'LEASE_EXPIRED',
  });

  // Over MCP alike.
  const client = await mcp.http(t['@d']);
  const viaMcp = (await client.callTool({ name: 'get_task', arguments: { taskId } })) as { structuredContent?: any };
  expect(viaMcp.structuredContent?.mailbox).toMatchObject({ state: 'Submitted', assignee: null, lapsedClaimant: '@b' });

  // Swept a minute later, the log says the same, dated at the lease end still (the listings and get_task's status and
  // history said the sweep's time before): over HTTP and MCP, for the sender and the audience, and @b's refusal.
  at += 60_000;
  expect(await server.mailbox.sweeper.sweepOnce()).toMatchObject({ changed: 1 });
  const swept = await reads(taskId);
  expect(swept.got.mailbox).toMatchObject({ state: 'Submitted', assignee: null, lease: null, lapsedClaimant: '@b' });
  expect(swept.got.status).toMatchObject({ state: 'TASK_STATE_SUBMITTED', timestamp: lease });
  expect(swept.got.history.at(-1).metadata).toMatchObject({ from: 'sweeper', at: lease, event: 'TaskLeaseExpired' });
  expect(swept.sent).toMatchObject({
    state: 'Submitted',
    assignee: null,
    lapsedClaimant: '@b',
    updatedAt: lease,
    updatedBy: 'sweeper',
  });
  const claimable = (await call('@c', 'GET', '/v1/tasks?view=claimable')).tasks.find(
    (task: { taskId: string }) => task.taskId === taskId,
  );
  expect(claimable).toMatchObject({ state: 'Submitted', updatedAt: lease, updatedBy: 'sweeper' });
  expect(
    (await server.call('POST', `/v1/tasks/${taskId}/transition`, { token: t['@b'], body: { to: 'Completed' } })).body,
  ).toMatchObject({ code: 'LEASE_EXPIRED', leaseExpiresAt: lease });
  for (const [who, view] of [
    ['@s', 'sent'],
    ['@c', 'claimable'],
    ['@d', 'claimable'],
  ]) {
    const { client, listed } = await listedOverMcp(who, taskId, { view });
    expect([who, listed]).toEqual([who, expect.objectContaining({ state: 'Submitted', updatedAt: lease, updatedBy: 'sweeper' })]);
    const got = (await client.callTool({ name: 'get_task', arguments: { taskId } })) as { structuredContent?: any };
    expect([who, got.structuredContent?.status]).toEqual([who, expect.objectContaining({ timestamp: lease })]);
    expect([who, got.structuredContent?.history.at(-1).metadata.at]).toEqual([who, lease]);
  }
  expect(await call('@d', 'POST', `/v1/tasks/${taskId}/claim`, {})).toMatchObject({ assignee: '@d', events: ['TaskClaimed'] });
});

test('a task past its deadline: every read shows it Canceled, expired at its deadline', async () => {
  const deadline = iso(at + 30_000);
  const { messageId: taskId } = await call(
    '@s',
    'POST',
    '/v1/messages',
    {
      to: '@b',
      subject: 'due soon',
      body: 'x',
      task: { expiresAt: deadline },
    },
    201,
  );
  await call('@b', 'POST', `/v1/tasks/${taskId}/transition`, { to: 'Working' });
  at += 31_000;
  const expired = await reads(taskId, '@b');
  expect(expired.got.mailbox).toMatchObject({ state: 'Canceled', assignee: '@b', lease: null });
  expect(expired.got.status).toMatchObject({
    state: 'TASK_STATE_CANCELLED',
    timestamp: deadline,
    message: { parts: [{ kind: 'text', text: `expired at its deadline ${deadline}` }] },
  });
  expect(expired.sent).toMatchObject({ state: 'Canceled', reason: 'expired', statusMessage: 'expired', updatedAt: deadline });

  // Swept a minute later: the listings still date the expiry at the deadline, as get_task does (they said the sweep's
  // time before). Over MCP's list_tasks alike, for the sender and the holder.
  at += 60_000;
  expect(await server.mailbox.sweeper.sweepOnce()).toMatchObject({ changed: 1 });
  const swept = await reads(taskId, '@b');
  expect(swept.got.status).toMatchObject({ state: 'TASK_STATE_CANCELLED', timestamp: deadline });
  expect(swept.sent).toMatchObject({ state: 'Canceled', reason: 'expired', updatedAt: deadline, updatedBy: 'sweeper' });
  for (const [who, view] of [
    ['@s', 'sent'],
    ['@b', 'assigned'],
  ]) {
    const { listed } = await listedOverMcp(who, taskId, { view, state: 'Canceled' });
    expect([who, listed]).toEqual([who, expect.objectContaining({ state: 'Canceled', updatedAt: deadline })]);
  }
});
