/**
 * HEAD answers a GET's status and headers without its body: nothing is shown to the caller, so nothing becomes seen.
 * Before, HEAD /v1/messages (an uptime probe, a link checker, a proxy's cache check) ran the listing whole and marked
 * the page seen: the agent's unseenCount fell to 0 and the sender's ledger said "seen" for mail nobody had been shown;
 * HEAD /v1/tasks did the same to the tasks' messages, and HEAD /v1/tasks/{id} recorded the sender as having seen the
 * task's outcome. Each wrote events. GET still does all of it. HEAD /v1/messages/{id} and HEAD /v1/tasks/{id} still
 * marked the message seen for a recipient (its ledger said "seen", its unseenCount fell) until the third test.
 */
import { startTestServer, type TestServer } from '../support/httpServer';

let server: TestServer;
let t: Record<string, string>;

beforeAll(async () => {
  server = await startTestServer();
  t = await server.register(['@a', '@b', '@c']);
});
afterAll(() => server.close());

/** Every seen mark this node noted is written and in the views (the positive signal before counting what was not). */
async function settle(): Promise<void> {
  await server.mailbox.flushSeenMarks();
  expect(await server.mailbox.runner.waitFor((await server.mailbox.eventStore.headPosition())!, 5000)).toBe(true);
}

const unseen = async (identity: string) => (await server.call('GET', '/v1/inbox/count', { token: t[identity] })).body.unseenCount;

test('HEAD /v1/messages and HEAD /v1/tasks mark nothing seen and write nothing; GET does', async () => {
  const direct = await server.call('POST', '/v1/messages', { token: t['@a'], body: { to: '@b', subject: 'one', body: 'x' } });
  const task = await server.call('POST', '/v1/messages', {
    token: t['@a'],
    body: { to: ['@b', '@c'], subject: 'review', body: 'x', task: {} },
  });
  expect([direct.status, task.status]).toEqual([201, 201]);
  await settle();
  expect([await unseen('@b'), await unseen('@c')]).toEqual([2, 1]);
  const before = await server.eventCount();

  for (const [identity, path] of [
    ['@b', '/v1/messages'],
    ['@c', '/v1/messages'],
    ['@b', '/v1/tasks?view=claimable'],
    ['@c', '/v1/tasks?view=claimable'],
  ]) {
    const head = await server.call('HEAD', path, { token: t[identity] });
    expect({ identity, path, status: head.status, body: head.body }).toEqual({ identity, path, status: 200, body: '' });
  }
  await settle();
  expect([await unseen('@b'), await unseen('@c')]).toEqual([2, 1]);
  expect(await server.eventCount()).toBe(before);
  const ledger = await server.call('GET', `/v1/messages/${task.body.messageId}/delivery`, { token: t['@a'] });
  expect(ledger.body.recipients.map((r: { recipient: string; seen: unknown }) => [r.recipient, r.seen])).toEqual([
    ['@b', null],
    ['@c', null],
  ]);

  // GET shows the page: it is seen.
  expect((await server.call('GET', '/v1/messages', { token: t['@b'] })).body.messages).toHaveLength(2);
  expect((await server.call('GET', '/v1/tasks?view=claimable', { token: t['@c'] })).body.tasks).toHaveLength(1);
  await settle();
  expect([await unseen('@b'), await unseen('@c')]).toEqual([0, 0]);
  expect(await server.eventCount()).toBeGreaterThan(before);
});

test("HEAD /v1/tasks/{id} does not record the sender as having seen the task's outcome; GET does", async () => {
  const sent = await server.call('POST', '/v1/messages', {
    token: t['@a'],
    body: { to: '@c', subject: 'do it', body: 'x', task: {} },
  });
  const taskId = sent.body.messageId as string;
  for (const to of ['Working', 'Completed'])
    expect((await server.call('POST', `/v1/tasks/${taskId}/transition`, { token: t['@c'], body: { to } })).status).toBe(200);
  await settle();
  const before = await server.eventCount();
  const head = await server.call('HEAD', `/v1/tasks/${taskId}`, { token: t['@a'] });
  expect({ status: head.status, body: head.body }).toEqual({ status: 200, body: '' });
  await settle();
  expect(await server.eventCount()).toBe(before);
  const got = await server.call('GET', `/v1/tasks/${taskId}`, { token: t['@a'] });
  expect(got.status).toBe(200);
  await settle();
  expect(await server.eventCount()).toBe(before + 1); // the outcome seen, recorded by the GET
});

test('HEAD /v1/messages/{id} and HEAD /v1/tasks/{id} mark nothing seen for a recipient and write nothing; GET does', async () => {
  const direct = await server.call('POST', '/v1/messages', { token: t['@a'], body: { to: '@b', subject: 'one id', body: 'x' } });
  const task = await server.call('POST', '/v1/messages', {
    token: t['@a'],
    body: { to: ['@b', '@c'], subject: 'one task', body: 'x', task: {} },
  });
  expect([direct.status, task.status]).toEqual([201, 201]);
  const [messageId, taskId] = [direct.body.messageId as string, task.body.messageId as string];
  await settle();
  const unseenBefore = [await unseen('@b'), await unseen('@c')];
  const before = await server.eventCount();

  for (const [identity, path] of [
    ['@b', `/v1/messages/${messageId}`],
    ['@b', `/v1/messages/${taskId}`],
    ['@b', `/v1/tasks/${taskId}`],
    ['@c', `/v1/tasks/${taskId}`],
  ]) {
    const head = await server.call('HEAD', path, { token: t[identity] });
    expect({ identity, path, status: head.status, body: head.body }).toEqual({ identity, path, status: 200, body: '' });
  }
  await settle();
  expect(await server.eventCount()).toBe(before);
  expect([await unseen('@b'), await unseen('@c')]).toEqual(unseenBefore);
  const seenOf = async (id: string) =>
    (await server.call('GET', `/v1/messages/${id}/delivery`, { token: t['@a'] })).body.recipients.map(
      (r: { recipient: string; seen: unknown }) => [r.recipient, r.seen],
    );
  expect(await seenOf(messageId)).toEqual([['@b', null]]);
  expect(await seenOf(taskId)).toEqual([
    ['@b', null],
    ['@c', null],
  ]);

  // GET shows it: it is seen.
  expect((await server.call('GET', `/v1/messages/${messageId}`, { token: t['@b'] })).status).toBe(200);
  expect((await server.call('GET', `/v1/tasks/${taskId}`, { token: t['@c'] })).status).toBe(200);
  await settle();
  expect((await seenOf(messageId))[0][1]).not.toBeNull();
  expect((await seenOf(taskId)).map(([recipient, seen]: [string, unknown]) => [recipient, seen !== null])).toEqual([
    ['@b', false],
    ['@c', true],
  ]);
  expect(await server.eventCount()).toBeGreaterThan(before);
});
