/**
 * `mailbox audit agent` as an auditor runs it (over the API, with an auditor's token): an agent retired while it held
 * a broadcast task shows, in its timeline, the release the retirement wrote (by the admin, saying why), after its own
 * claim; the task's sender sees what others did to its task (the claim, the release, the next claim); another
 * audience member sees only its own acts, and nobody's timeline shows what happened to tasks it is no party to.
 * A registration's and a reply's entries keep this tool's words in `detail`, as tasks' do, the message's subject in
 * `subject`.
 */
import { runAuditCli as audit } from '../support/auditCli';
import { startTestServer, type TestServer } from '../support/httpServer';
import { startHeartbeat } from '../../src/heartbeat/startHeartbeat';
import { allEvents, silentLogger } from '../support/fixtures';

let server: TestServer;
let t: Record<string, string>;
let auditor: string;
let skew = 0; // moved on by a test that needs a reply overdue
const clock = { now: () => new Date(Date.now() + skew) };

beforeAll(async () => {
  server = await startTestServer({}, { clock });
  t = await server.register(['@s', '@e', '@b', '@c', '@a']);
  auditor = (await server.register(['@auditor'], 'auditor'))['@auditor'];
});
afterAll(async () => {
  await server.close();
});

type Entry = {
  position: string;
  kind: string;
  messageId: string | null;
  counterpart: string | null;
  subject: string | null;
  detail: string | null;
};

async function timeline(identity: string): Promise<Entry[]> {
  const { code, stdout, stderr } = await audit(['agent', identity, '--json', '--url', server.url], {
    MAILBOX_AUDIT_TOKEN: auditor,
  });
  expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
  return stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Entry);
}

/** Who did it and what befell the task (`detail`: the task named once, by `messageId`). */
const taskEntries = (entries: Entry[], taskId: string) =>
  entries.filter((e) => e.kind === 'task' && e.messageId === taskId).map((e) => [e.counterpart, e.detail]);

test('the release written by retiring a holder is in the holder’s and the sender’s timelines, with who did it and why', async () => {
  const sent = await server.call('POST', '/v1/messages', {
    token: t['@s'],
    body: { to: 'AGENT:*', subject: 'review', body: 'x', task: { state: 'submitted' } },
  });
  expect(sent.status).toBe(201);
  const taskId = sent.body.messageId as string;
  expect((await server.call('POST', `/v1/tasks/${taskId}/claim`, { token: t['@e'] })).status).toBe(200);
  const other = await server.call('POST', '/v1/messages', {
    token: t['@c'],
    body: { to: 'AGENT:*', subject: 'other', body: 'x', task: { state: 'submitted' } },
  });
  expect((await server.call('POST', `/v1/tasks/${other.body.messageId}/claim`, { token: t['@b'] })).status).toBe(200);
  const retired = await server.call('DELETE', '/v1/agents/@e', { token: server.adminToken });
  expect(retired).toMatchObject({ status: 200, body: { releasedTasks: [taskId] } });
  expect((await server.call('POST', `/v1/tasks/${taskId}/claim`, { token: t['@b'] })).status).toBe(200);

  const released = `released from @e, who was retired, by admin (Submitted -> Submitted, claimable again)`;
  const holder = await timeline('@e');
  expect(taskEntries(holder, taskId)).toEqual([
    [null, `claimed by @e`],
    ['admin', released],
  ]);
  const retiredAt = holder.findIndex((e) => e.kind === 'retired');
  expect(retiredAt).toBeGreaterThan(-1);
  expect(holder.slice(retiredAt + 1).map((e) => [e.kind, e.counterpart])).toEqual([['task', 'admin']]);

  expect(taskEntries(await timeline('@s'), taskId)).toEqual([
    ['@e', `claimed by @e`],
    ['admin', released],
    ['@b', `claimed by @b`],
  ]);
  const bystander = await timeline('@b');
  expect(taskEntries(bystander, taskId)).toEqual([[null, `claimed by @b`]]);
  expect(taskEntries(await timeline('@c'), taskId)).toEqual([]);
  expect(taskEntries(await timeline('@c'), other.body.messageId)).toEqual([['@b', `claimed by @b`]]);

  // `subject` is the task's subject (it held the task's words, its id within them), as for every party to it.
  for (const identity of ['@e', '@s', '@b'])
    expect((await timeline(identity)).filter((e) => e.kind === 'task' && e.messageId === taskId).map((e) => e.subject)).toEqual(
      expect.arrayContaining(['review']),
    );
  expect(
    [...holder, ...(await timeline('@s'))].filter((e) => e.kind === 'task' && e.messageId === taskId && e.subject !== 'review'),
  ).toEqual([]);

  // The text names it too, and the task once: "task <id>" was said again after "message <id>".
  const text = await audit(['agent', '@e', '--url', server.url], { MAILBOX_AUDIT_TOKEN: auditor });
  const line = text.stdout.split('\n').find((l) => l.includes('who was retired'));
  expect(line?.replace(/^#\d+ +\S+ +/, '')).toBe(`task               message ${taskId}  ${released}`);
  const taskLines = text.stdout.split('\n').filter((l) => / task +message /.test(l));
  expect(taskLines).toHaveLength(2);
  for (const l of taskLines) expect(l.split(taskId)).toHaveLength(2);
});

test('the cancels written by retiring a sender are in the sender’s timeline, by the admin with the reason', async () => {
  const sent = await server.call('POST', '/v1/messages', {
    token: t['@a'],
    body: { to: ['@b', '@c'], subject: 'asking', body: 'x', task: { state: 'submitted' } },
  });
  expect(sent.status).toBe(201);
  const taskId = sent.body.messageId as string;
  expect((await server.call('POST', `/v1/tasks/${taskId}/claim`, { token: t['@b'] })).status).toBe(200);
  for (const body of [{ to: 'working' }, { to: 'input-required', note: 'which one?' }])
    expect((await server.call('POST', `/v1/tasks/${taskId}/transition`, { token: t['@b'], body })).status).toBe(200);
  const retired = await server.call('DELETE', '/v1/agents/@a', { token: server.adminToken });
  expect(retired).toMatchObject({ status: 200, body: { canceledTasks: [taskId] } });

  const canceled = `InputRequired -> Canceled by admin (reason: "sender retired")`;
  const sender = await timeline('@a');
  const retiredAt = sender.findIndex((e) => e.kind === 'retired');
  expect(retiredAt).toBeGreaterThan(-1);
  expect(sender.slice(retiredAt + 1).map((e) => [e.kind, e.counterpart, e.subject, e.detail])).toEqual([
    ['task', 'admin', 'asking', canceled],
  ]);
  expect(taskEntries(sender, taskId)).toEqual([
    ['@b', `claimed by @b`],
    ['@b', `Submitted -> Working by @b`],
    ['@b', `Working -> InputRequired by @b (note: "which one?")`],
    ['admin', canceled],
  ]);
  // Its holder sees the cancel too, by the admin with the reason (it saw only its own acts).
  expect(taskEntries(await timeline('@b'), taskId)).toEqual([
    [null, `claimed by @b`],
    [null, `Submitted -> Working by @b`],
    [null, `Working -> InputRequired by @b (note: "which one?")`],
    ['admin', canceled],
  ]);
  // The other audience member was no party to it: nothing of it in its timeline.
  expect(taskEntries(await timeline('@c'), taskId)).toEqual([]);
});

test("a direct task's holder sees what its sender did to it: the sender's cancel is in both timelines", async () => {
  const sent = await server.call('POST', '/v1/messages', {
    token: t['@s'],
    body: { to: '@c', subject: 'direct', body: 'x', task: { state: 'submitted' } },
  });
  expect(sent.status).toBe(201);
  const taskId = sent.body.messageId as string;
  const canceled = await server.call('POST', `/v1/tasks/${taskId}/transition`, {
    token: t['@s'],
    body: { to: 'canceled', reason: 'not needed' },
  });
  expect(canceled.status).toBe(200);
  const line = `Submitted -> Canceled by @s (reason: "not needed")`;
  expect(taskEntries(await timeline('@c'), taskId)).toEqual([['@s', line]]);
  expect(taskEntries(await timeline('@s'), taskId)).toEqual([[null, line]]);
  expect(taskEntries(await timeline('@b'), taskId)).toEqual([]);
});

test("audit message counts a task's events in its own stream: the header named the message's stream with both counts", async () => {
  const sent = await server.call('POST', '/v1/messages', {
    token: t['@s'],
    body: { to: '@c', subject: 'fix', body: 'x', task: {} },
  });
  const taskId = sent.body.messageId as string;
  expect((await server.call('POST', `/v1/tasks/${taskId}/transition`, { token: t['@c'], body: { to: 'Working' } })).status).toBe(
    200,
  );
  expect((await server.call('POST', `/v1/messages/${taskId}/read`, { token: t['@c'] })).status).toBe(200);
  const plain = await server.call('POST', '/v1/messages', {
    token: t['@s'],
    body: { to: ['@b', '@c'], subject: 'fyi', body: 'x' },
  });
  const story = async (messageId: string, json: string[] = []) => {
    const run = await audit(['message', messageId, '--url', server.url, ...json], { MAILBOX_AUDIT_TOKEN: auditor });
    expect(run.code).toBe(0);
    return run.stdout;
  };
  expect((await story(taskId)).split('\n')[0]).toBe(
    `message ${taskId}  (stream mailbox-message-${taskId}, 2 events; stream mailbox-task-${taskId}, 1 event)`,
  );
  expect(JSON.parse(await story(taskId, ['--json']))).toMatchObject({
    streamName: `mailbox-message-${taskId}`,
    events: 3,
    streams: [
      { streamName: `mailbox-message-${taskId}`, events: 2 },
      { streamName: `mailbox-task-${taskId}`, events: 1 },
    ],
  });
  const id = plain.body.messageId as string;
  expect((await story(id)).split('\n')[0]).toBe(`message ${id}  (stream mailbox-message-${id}, 1 event)`);
});

// The role and the reply asked or overdue were `subject` (this tool's words where a message's subject belongs), unlike
// a woken or task entry's: they are `detail` now, `subject` the message's (null for a registration).
test("a registration's and a reply's entries: this tool's words in detail, the message's subject in subject", async () => {
  const sent = await server.call('POST', '/v1/messages', {
    token: t['@s'],
    body: { to: ['@b', '@c'], subject: 'answer me', body: 'x', expectsReplyBy: '1m' },
  });
  expect(sent.status).toBe(201);
  const messageId = sent.body.messageId as string;
  const requested = (await allEvents(server.mailbox)).find((e) => e.type === 'ReplyRequested' && e.data.messageId === messageId);
  const dueBy = (requested?.data as { dueBy: string }).dueBy;
  skew += 120_000;
  const heartbeat = await startHeartbeat(server.mailbox, {
    clock,
    schedule: false,
    settings: { metricsPort: null },
    logger: silentLogger,
  });
  try {
    expect((await heartbeat.tick()).replies.overdue).toHaveLength(1);
  } finally {
    await heartbeat.stop();
  }
  const replyEntries = async (identity: string) =>
    (await timeline(identity))
      .filter((e) => e.messageId === messageId && e.kind.startsWith('reply_'))
      .map((e) => [e.kind, e.counterpart, e.subject, e.detail]);
  expect(await replyEntries('@s')).toEqual([
    ['reply_requested', null, 'answer me', `asked for replies by ${dueBy}`],
    ['reply_overdue', '@b, @c', 'answer me', `replies overdue since ${dueBy}, waiting on @b, @c`],
  ]);
  for (const identity of ['@b', '@c'])
    expect(await replyEntries(identity)).toEqual([
      ['reply_requested', '@s', 'answer me', `@s expects a reply by ${dueBy}`],
      ['reply_overdue', '@s', 'answer me', `reply to @s overdue since ${dueBy}`],
    ]);
  expect((await timeline('@a')).filter((e) => e.messageId === messageId)).toEqual([]);
  expect((await timeline('@s')).filter((e) => e.kind === 'registered').map((e) => [e.subject, e.detail])).toEqual([
    [null, 'agent'],
  ]);

  // The text is as it was: the words, unquoted, after the message; the role after "registered as".
  const text = (await audit(['agent', '@c', '--url', server.url], { MAILBOX_AUDIT_TOKEN: auditor })).stdout.split('\n');
  const columns = (l: string) => l.replace(/^#\d+ +\S+ +/, '');
  expect(text.filter((l) => l.includes(messageId) && / reply_/.test(l)).map(columns)).toEqual([
    `reply_requested    message ${messageId}  @s expects a reply by ${dueBy}`,
    `reply_overdue      message ${messageId}  reply to @s overdue since ${dueBy}`,
  ]);
  expect(text.filter((l) => / registered /.test(l)).map(columns)).toEqual(['registered         registered as agent']);
});
