/**
 * A path that stops where its id goes names no message, task or agent: `GET /v1/messages/` (a listing asked with a
 * trailing slash) was told "'messageId' must be a message id: a UUID, as returned by a send", as if an id had been
 * sent. Every such path is refused with the envelope saying what it lacks and the valid forms (the listing, and the
 * route with its id); nothing is written.
 */
import { startTestServer, type TestServer } from '../support/httpServer';

let server: TestServer;
let t: Record<string, string>;
beforeAll(async () => {
  server = await startTestServer();
  t = { ...(await server.register(['@a'])), ...(await server.register(['@aud'], 'auditor')) };
});
afterAll(() => server.close());

const MESSAGE_ID = 'its message id (a UUID, as a send or a listing returns it)';
const TASK_ID = 'its task id (the messageId of the message that carried the task, a UUID)';

test.each<[string, string, string, string]>([
  [
    'GET',
    '/v1/messages/',
    'messageId',
    `GET /v1/messages/ names no message id: the path is empty where it goes. To list the messages, GET /v1/messages; for one, GET /v1/messages/{id} with ${MESSAGE_ID}.`,
  ],
  [
    'GET',
    '/v1/messages//delivery',
    'messageId',
    `GET /v1/messages//delivery names no message id: the path is empty where it goes. To list the messages, GET /v1/messages; for one, GET /v1/messages/{id}/delivery with ${MESSAGE_ID}.`,
  ],
  [
    'POST',
    '/v1/messages//read',
    'messageId',
    `POST /v1/messages//read names no message id: the path is empty where it goes. To list the messages, GET /v1/messages; for one, POST /v1/messages/{id}/read with ${MESSAGE_ID}. Nothing was done.`,
  ],
  [
    'POST',
    '/v1/messages//archive',
    'messageId',
    `POST /v1/messages//archive names no message id: the path is empty where it goes. To list the messages, GET /v1/messages; for one, POST /v1/messages/{id}/archive with ${MESSAGE_ID}. Nothing was done.`,
  ],
  [
    'GET',
    '/v1/tasks/',
    'taskId',
    `GET /v1/tasks/ names no task id: the path is empty where it goes. To list the tasks, GET /v1/tasks; for one, GET /v1/tasks/{id} with ${TASK_ID}.`,
  ],
  [
    'POST',
    '/v1/tasks//claim',
    'taskId',
    `POST /v1/tasks//claim names no task id: the path is empty where it goes. To list the tasks, GET /v1/tasks; for one, POST /v1/tasks/{id}/claim with ${TASK_ID}. Nothing was done.`,
  ],
])('%s %s: 400 VALIDATION_FAILED naming the listing and the one-item form', async (method, path, field, message) => {
  const before = await server.eventCount();
  const { status, body } = await server.call(method, path, { token: t['@a'] });
  expect(status).toBe(400);
  expect(body).toEqual({ error: 'Validation failed', code: 'VALIDATION_FAILED', message, field, path });
  expect(await server.eventCount()).toBe(before);
});

test('GET /v1/audit/messages/ (no listing there): the one-message form only', async () => {
  const { status, body } = await server.call('GET', '/v1/audit/messages/', { token: t['@aud'] });
  expect([status, body.code, body.field]).toEqual([400, 'VALIDATION_FAILED', 'messageId']);
  expect(body.message).toBe(
    `GET /v1/audit/messages/ names no message id: the path is empty where it goes. Give one: GET /v1/audit/messages/{id} with ${MESSAGE_ID}.`,
  );
});

test('DELETE /v1/agents/ (admin): the listing and the retire form, nothing written', async () => {
  const before = await server.eventCount();
  const { status, body } = await server.call('DELETE', '/v1/agents/', { token: server.adminToken });
  expect([status, body.code, body.field]).toEqual([400, 'VALIDATION_FAILED', 'identity']);
  expect(body.message).toBe(
    'DELETE /v1/agents/ names no identity: the path is empty where it goes. To list the agents, GET /v1/agents; for one, ' +
      'DELETE /v1/agents/{identity} with its identity (@ followed by its name, e.g. @neo-gpt). Nothing was done.',
  );
  expect(await server.eventCount()).toBe(before);
});

test('authentication still comes first: no token is 401, not a lesson about the path', async () => {
  const { status, body } = await server.call('GET', '/v1/messages/', {});
  expect([status, body.code]).toEqual([401, 'UNAUTHENTICATED']);
});

test('GET /v1/messages (no slash) still lists, and an id that is no UUID still says what an id is', async () => {
  expect((await server.call('GET', '/v1/messages', { token: t['@a'] })).status).toBe(200);
  const { status, body } = await server.call('GET', '/v1/messages/abc', { token: t['@a'] });
  expect([status, body.field]).toEqual([400, 'messageId']);
  expect(body.message).toBe(
    "get_message: 'messageId' must be a message id: a UUID such as 5b2a33c9-6374-5961-8e7b-b5d7c7ddbb86, as a send " +
      "returns it and a listing shows it (list_messages' messageId, list_tasks' taskId); 'abc' is not one",
  );
});

test.each<[string, string, string]>([
  ['/v1/messages/unread', 'messageId', 'GET /v1/messages?status=unread'],
  ['/v1/messages/Archived', 'messageId', 'GET /v1/messages?status=archived'],
  ['/v1/messages/outbox', 'messageId', 'GET /v1/messages?box=outbox'],
  ['/v1/tasks/claimable', 'taskId', 'GET /v1/tasks?view=claimable'],
])('GET %s (a listing word where the id goes): 400 naming the listing with it as its filter', async (path, field, listing) => {
  const before = await server.eventCount();
  const { status, body } = await server.call('GET', path, { token: t['@a'] });
  expect([status, body.code, body.field]).toEqual([400, 'VALIDATION_FAILED', field]);
  expect(body.message).toContain(`To list them: ${listing};`);
  expect(body.message).toMatch(/not a (message|task) id/);
  expect(body.suggestions).toEqual([listing, field === 'taskId' ? 'GET /v1/tasks/{id}' : 'GET /v1/messages/{id}']);
  expect(await server.eventCount()).toBe(before);
  // The listing it names answers.
  const [route, query] = listing.slice('GET '.length).split('?');
  expect((await server.call('GET', `${route}?${query}`, { token: t['@a'] })).status).toBe(200);
});
