/**
 * Pagination cursors over HTTP and MCP: a cursor pages only the listing that
 * issued it (same caller, box and filters). Anything else, or a cursor altered
 * in one character, is 400 CURSOR_MISMATCH and writes nothing. Pages stay
 * exact while new messages arrive between them.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { TASK_STATES } from '../../src/events/taskShapes';
import { startTestServer, type TestServer } from '../support/httpServer';

let server: TestServer;
let t: Record<string, string>;
const clients: Client[] = [];
/** @b's inbox, newest first: 6 messages from @a and @c. */
let inboxOfB: string[];

const list = (who: string, query: string) => server.call('GET', `/v1/messages?${query}`, { token: t[who] });
const ids = (body: any): string[] => body.messages.map((m: any) => m.messageId);
const send = async (from: string, to: string, extra: Record<string, unknown> = {}) => {
  const sent = await server.call('POST', '/v1/messages', { token: t[from], body: { to, subject: 's', body: 'b', ...extra } });
  expect(sent.status).toBe(201);
  return sent.body.messageId as string;
};

/** Every page of one listing, following nextCursor; `between` runs after each page (e.g. new mail arriving). */
async function pages(who: string, query: string, between: () => Promise<void> = async () => undefined): Promise<string[][]> {
  const result: string[][] = [];
  let cursor: string | null = null;
  do {
    const { status, body } = await list(who, `${query}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    expect(status).toBe(200);
    result.push(ids(body));
    cursor = body.nextCursor;
    await between();
  } while (cursor !== null);
  return result;
}

async function expectMismatch(who: string, query: string) {
  const before = await server.eventCount();
  const { status, body } = await list(who, query);
  expect({ status, code: body.code }).toEqual({ status: 400, code: 'CURSOR_MISMATCH' });
  expect(body).toMatchObject({ error: expect.any(String), field: 'cursor' });
  expect(body.message).toMatch(/start again without a cursor/);
  expect(await server.eventCount()).toBe(before);
}

const firstCursor = async (who: string, query: string): Promise<string> => {
  const { body } = await list(who, query);
  expect(body.nextCursor).toEqual(expect.any(String));
  return body.nextCursor;
};

beforeAll(async () => {
  server = await startTestServer();
  t = await server.register(['@a', '@b', '@c']);
  const sent: string[] = [];
  for (let i = 0; i < 6; i++) sent.push(await send(i % 2 === 0 ? '@a' : '@c', '@b', { tags: i < 3 ? ['ops'] : ['db'] }));
  for (let i = 0; i < 3; i++) await send('@b', '@c');
  for (let i = 0; i < 3; i++) await send('@c', '@a');
  inboxOfB = sent.reverse();
});
afterAll(async () => {
  for (const client of clients) await client.close();
  await server.close();
});

test('a cursor pages the listing that issued it, newest first, with no gaps or repeats, whatever the page size', async () => {
  expect(await pages('@b', 'limit=2')).toEqual([inboxOfB.slice(0, 2), inboxOfB.slice(2, 4), inboxOfB.slice(4, 6)]);
  expect((await pages('@b', 'tags=ops&limit=2')).flat()).toEqual(inboxOfB.slice(3));
  const cursor = await firstCursor('@b', 'limit=4');
  expect(ids((await list('@b', `limit=1&cursor=${encodeURIComponent(cursor)}`)).body)).toEqual([inboxOfB[4]]);
});

test('an outbox cursor on the inbox: CURSOR_MISMATCH, nothing written', async () => {
  const cursor = await firstCursor('@b', 'box=outbox&limit=1');
  await expectMismatch('@b', `cursor=${encodeURIComponent(cursor)}&limit=1`);
  await expectMismatch('@b', `box=inbox&cursor=${encodeURIComponent(cursor)}`);
});

test('a cursor under other filters: CURSOR_MISMATCH, nothing written', async () => {
  const cursor = encodeURIComponent(await firstCursor('@b', 'status=unread&limit=2'));
  await expectMismatch('@b', `cursor=${cursor}`);
  await expectMismatch('@b', `status=all&cursor=${cursor}`);
  await expectMismatch('@b', `status=unread&from=@a&cursor=${cursor}`);
  await expectMismatch('@b', `status=unread&tags=ops&cursor=${cursor}`);
  // The same filters, any page size: still the same listing.
  expect((await list('@b', `status=unread&limit=10&cursor=${cursor}`)).status).toBe(200);
});

// status=all is the inbox's default (unread and read, not archived): a cursor issued without status was refused on
// status=all, and one issued on status=all without it, "from another message listing" while it was the same listing.
test('status=all and no status are one listing: a cursor of either pages the other', async () => {
  const fromAll = encodeURIComponent(await firstCursor('@b', 'status=all&limit=2'));
  const fromNone = encodeURIComponent(await firstCursor('@b', 'limit=2'));
  for (const [query, cursor] of [
    ['limit=2', fromAll],
    ['status=all&limit=2', fromNone],
  ]) {
    const { status, body } = await list('@b', `${query}&cursor=${cursor}`);
    expect([query, status, body.code]).toEqual([query, 200, undefined]);
    expect(ids(body)).toEqual(inboxOfB.slice(2, 4));
  }
});

/**
 * Three new agents, the first sending four tasks to `to` (the second, or a list with it): the tasks newest first, a
 * task listing as one of them, and the cursor of the second's first page of two in a listing.
 */
async function fourTasks(names: [string, string, string], to: string | string[]) {
  const u = await server.register(names);
  const tasks: string[] = [];
  for (const subject of ['t1', 't2', 't3', 't4']) {
    const sent = await server.call('POST', '/v1/messages', { token: u[names[0]], body: { to, subject, body: 'b', task: {} } });
    expect(sent.status).toBe(201);
    tasks.unshift(sent.body.messageId);
  }
  const listTasks = (who: string, query: string) => server.call('GET', `/v1/tasks?${query}`, { token: u[who] });
  const cursorOf = async (query: string) => encodeURIComponent((await listTasks(names[1], `${query}&limit=2`)).body.nextCursor);
  return { tasks, listTasks, cursorOf };
}

// A task listing with no state and one naming every state list the same tasks: a cursor from one was refused on the
// other ("from another task listing"). Either now pages the other; a listing of some states is still another one.
test('a task listing naming every state and one naming none are one listing: a cursor of either pages the other', async () => {
  const { tasks, listTasks, cursorOf } = await fourTasks(['@sa', '@sb', '@sc'], '@sb');
  const every = `state=${TASK_STATES.join(',')}`;
  const fromEvery = await cursorOf(every);
  const fromNone = await cursorOf('view=assigned');
  for (const [query, cursor] of [
    ['view=assigned', fromEvery],
    [every, fromNone],
    [`view=assigned&state=${[...TASK_STATES].reverse().join(',')}`, fromNone],
  ]) {
    const { status, body } = await listTasks('@sb', `${query}&limit=2&cursor=${cursor}`);
    expect([query, status, body.code]).toEqual([query, 200, undefined]);
    expect(body.tasks.map((task: { taskId: string }) => task.taskId)).toEqual(tasks.slice(2, 4));
  }
  const before = await server.eventCount();
  for (const [who, query] of [
    ['@sb', `state=Submitted,Working&cursor=${fromNone}`], // some states: another listing
    ['@sb', `state=Submitted,Working&cursor=${fromEvery}`],
    ['@sb', `view=sent&cursor=${fromEvery}`],
    ['@sc', `cursor=${fromEvery}`],
  ]) {
    const refused = await listTasks(who, query);
    expect([who, query, refused.status, refused.body.code]).toEqual([who, query, 400, 'CURSOR_MISMATCH']);
  }
  expect(await server.eventCount()).toBe(before);
});

// The claimable view holds only Submitted tasks: with state=Submitted it lists the same tasks as without, but a cursor
// of one was CURSOR_MISMATCH on the other (this file expected it). Any state filter naming Submitted is the same listing.
test('a claimable listing with state=Submitted and one without are one listing: a cursor of either pages the other', async () => {
  const { tasks, listTasks, cursorOf } = await fourTasks(['@qa', '@qb', '@qc'], ['@qb', '@qc']);
  const fromSubmitted = await cursorOf('view=claimable&state=Submitted');
  const fromNone = await cursorOf('view=claimable');
  for (const [query, cursor] of [
    ['view=claimable', fromSubmitted],
    ['view=claimable&state=Submitted', fromNone],
    ['view=claimable&state=Working,Submitted', fromNone],
  ]) {
    const { status, body } = await listTasks('@qb', `${query}&limit=2&cursor=${cursor}`);
    expect([query, status, body.code]).toEqual([query, 200, undefined]);
    expect(body.tasks.map((task: { taskId: string }) => task.taskId)).toEqual(tasks.slice(2, 4));
  }
  const before = await server.eventCount();
  for (const [who, query] of [
    ['@qb', `view=assigned&state=Submitted&cursor=${fromSubmitted}`], // another view
    ['@qb', `view=sent&cursor=${fromNone}`],
    ['@qc', `view=claimable&state=Submitted&cursor=${fromSubmitted}`], // another caller
  ]) {
    const refused = await listTasks(who, query);
    expect([who, query, refused.status, refused.body.code]).toEqual([who, query, 400, 'CURSOR_MISMATCH']);
  }
  expect(await server.eventCount()).toBe(before);
});

test("agent @b's cursor used by @a (same query, own inbox): CURSOR_MISMATCH, nothing written", async () => {
  const cursor = encodeURIComponent(await firstCursor('@b', 'limit=1'));
  expect((await list('@a', 'limit=1')).body.nextCursor).toEqual(expect.any(String)); // @a has a second page of its own
  await expectMismatch('@a', `limit=1&cursor=${cursor}`);
  await expectMismatch('@c', `limit=1&cursor=${cursor}`);
});

test('a cursor with one character flipped: CURSOR_MISMATCH, nothing written', async () => {
  const cursor = await firstCursor('@b', 'limit=2');
  for (const i of [0, 5, Math.floor(cursor.length / 2), cursor.length - 1]) {
    const flipped = cursor.slice(0, i) + (cursor[i] === 'A' ? 'B' : 'A') + cursor.slice(i + 1);
    await expectMismatch('@b', `limit=2&cursor=${encodeURIComponent(flipped)}`);
  }
  await expectMismatch('@b', 'limit=2&cursor=MTIz'); // a bare position, as cursors used to be
});

// A task listing's cursor on GET /v1/messages was told "(another box, other filters, another caller, or altered)", while a
// message cursor on GET /v1/tasks was told "(a message listing, another view, other states, ...)": each now says which
// listing the cursor came from and which it was used on, then to start again without a cursor, in the same words.
test('a task cursor on the messages and a message cursor on the tasks say where each came from and was used; nothing written', async () => {
  const u = await server.register(['@kd', '@ke', '@kf']);
  for (let i = 0; i < 2; i++)
    expect(
      (
        await server.call('POST', '/v1/messages', {
          token: u['@kd'],
          body: { to: ['@ke', '@kf'], subject: `t${i}`, body: 'b', task: {} },
        })
      ).status,
    ).toBe(201);
  const taskCursor = (await server.call('GET', '/v1/tasks?view=claimable&limit=1', { token: u['@ke'] })).body
    .nextCursor as string;
  const messageCursor = (await server.call('GET', '/v1/messages?limit=1', { token: u['@ke'] })).body.nextCursor as string;
  expect([taskCursor, messageCursor]).toEqual([expect.any(String), expect.any(String)]);
  const before = await server.eventCount();
  const onMessages = await server.call('GET', `/v1/messages?cursor=${encodeURIComponent(taskCursor)}`, { token: u['@ke'] });
  expect({ status: onMessages.status, ...onMessages.body }).toEqual({
    status: 400,
    error: 'Cursor mismatch',
    code: 'CURSOR_MISMATCH',
    field: 'cursor',
    message:
      'This cursor came from a task listing (GET /v1/tasks, list_tasks) and was used on a message listing (GET ' +
      '/v1/messages, list_messages): a cursor pages only the listing that issued it; start again without a cursor, and ' +
      'pass each nextCursor back unchanged with the same box and filters.',
  });
  const onTasks = await server.call('GET', `/v1/tasks?view=claimable&cursor=${encodeURIComponent(messageCursor)}`, {
    token: u['@ke'],
  });
  expect({ status: onTasks.status, message: onTasks.body.message }).toEqual({
    status: 400,
    message:
      'This cursor came from a message listing (GET /v1/messages, list_messages) and was used on a task listing (GET ' +
      '/v1/tasks, list_tasks): a cursor pages only the listing that issued it; start again without a cursor, and pass ' +
      'each nextCursor back unchanged with the same view and state.',
  });
  // Of the same kind, another listing (or another caller's): the same shape.
  const otherView = await server.call('GET', `/v1/tasks?view=sent&cursor=${encodeURIComponent(taskCursor)}`, { token: u['@ke'] });
  expect(otherView.body.message).toBe(
    "This cursor came from another task listing (another view or other states, or another caller's) or was altered, " +
      'and was used on this one (GET /v1/tasks, list_tasks): a cursor pages only the listing that issued it; start again ' +
      'without a cursor, and pass each nextCursor back unchanged with the same view and state.',
  );
  const otherBox = await server.call('GET', `/v1/messages?box=outbox&cursor=${encodeURIComponent(messageCursor)}`, {
    token: u['@ke'],
  });
  expect(otherBox.body.message).toBe(
    "This cursor came from another message listing (another box or other filters, or another caller's) or was altered, " +
      'and was used on this one (GET /v1/messages, list_messages): a cursor pages only the listing that issued it; ' +
      'start again without a cursor, and pass each nextCursor back unchanged with the same box and filters.',
  );
  expect(await server.eventCount()).toBe(before);
});

test('paging an inbox while new messages arrive between pages: no gaps, no duplicates; the new ones head the next listing', async () => {
  const arrived: string[] = [];
  const seen = await pages('@b', 'limit=2', async () => {
    arrived.push(await send('@a', '@b'), await send('@c', '@b'));
  });
  expect(seen.flat()).toEqual(inboxOfB);
  expect(ids((await list('@b', 'limit=200')).body)).toEqual([...arrived.reverse(), ...inboxOfB]);
});

test('the OpenAPI document says what a cursor is bound to and lists CURSOR_MISMATCH', async () => {
  const { body } = await server.call('GET', '/openapi.json');
  const listing = body.paths['/v1/messages'].get;
  const cursor = listing.parameters.find((p: any) => p.name === 'cursor');
  expect(cursor.description).toMatch(/bound to the listing that issued it.*CURSOR_MISMATCH/);
  expect(listing.responses['400'].description).toMatch(/CURSOR_MISMATCH/);
});

describe('over MCP (list_messages)', () => {
  async function mcpClient(token: string): Promise<Client> {
    const client = new Client({ name: 'mailbox-cursors-e2e', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${token}` } },
      }),
    );
    clients.push(client);
    return client;
  }
  type ToolResult = { isError?: boolean; content: Array<{ type: string; text: string }> };
  const listTool = async (client: Client, args: Record<string, unknown>) => {
    const result = (await client.callTool({ name: 'list_messages', arguments: args })) as ToolResult;
    return { isError: result.isError ?? false, body: JSON.parse(result.content[0].text) };
  };
  async function expectToolMismatch(client: Client, args: Record<string, unknown>) {
    const before = await server.eventCount();
    const { isError, body } = await listTool(client, args);
    expect({ isError, code: body.code }).toEqual({ isError: true, code: 'CURSOR_MISMATCH' });
    expect(body.message).toMatch(/start again without a cursor/);
    expect(await server.eventCount()).toBe(before);
  }

  test('a valid cursor pages; outbox on inbox, other filters, another caller and a flipped character are CURSOR_MISMATCH', async () => {
    const [b, a] = [await mcpClient(t['@b']), await mcpClient(t['@a'])];
    const first = await listTool(b, { limit: 2 });
    const second = await listTool(b, { limit: 2, cursor: first.body.nextCursor });
    expect(second.isError).toBe(false);
    expect(ids(second.body)).toHaveLength(2);
    expect(ids(second.body)).not.toContain(ids(first.body)[0]);
    const outbox = (await listTool(b, { box: 'outbox', limit: 1 })).body.nextCursor;
    await expectToolMismatch(b, { cursor: outbox });
    await expectToolMismatch(b, { status: 'unread', limit: 2, cursor: first.body.nextCursor });
    await expectToolMismatch(a, { limit: 2, cursor: first.body.nextCursor });
    const cursor: string = first.body.nextCursor;
    await expectToolMismatch(b, { limit: 2, cursor: `${cursor[0] === 'A' ? 'B' : 'A'}${cursor.slice(1)}` });
    const tools = (await b.listTools()).tools;
    const schema = tools.find((tool) => tool.name === 'list_messages')!.inputSchema.properties as any;
    expect(schema.cursor.description).toMatch(/CURSOR_MISMATCH/);
  });
});

// A task listing's cursor, refused, was told to keep "the same box and filters": a task listing has neither (it is
// chosen by view and state), so the advice named parameters list_tasks does not take.
test('a task listing cursor used with another view: CURSOR_MISMATCH naming view and state, nothing written', async () => {
  for (const subject of ['t1', 't2']) await send('@a', 'AGENT:*', { subject, task: {} });
  const first = await server.call('GET', '/v1/tasks?view=claimable&limit=1', { token: t['@b'] });
  expect(first.status).toBe(200);
  const cursor = encodeURIComponent(first.body.nextCursor);
  expect((await server.call('GET', `/v1/tasks?view=claimable&limit=1&cursor=${cursor}`, { token: t['@b'] })).status).toBe(200);
  const before = await server.eventCount();
  for (const [who, query] of [
    ['@b', `view=assigned&cursor=${cursor}`],
    ['@c', `view=claimable&cursor=${cursor}`],
  ]) {
    const refused = await server.call('GET', `/v1/tasks?${query}`, { token: t[who] });
    expect([refused.status, refused.body.code]).toEqual([400, 'CURSOR_MISMATCH']);
    expect(refused.body.message).toBe(
      "This cursor came from another task listing (another view or other states, or another caller's) or was altered, " +
        'and was used on this one (GET /v1/tasks, list_tasks): a cursor pages only the listing that issued it; start ' +
        'again without a cursor, and pass each nextCursor back unchanged with the same view and state.',
    );
  }
  const onMessages = await server.call('GET', `/v1/messages?cursor=${cursor}`, { token: t['@b'] });
  expect(onMessages.body.message).toContain('with the same box and filters.');
  expect(await server.eventCount()).toBe(before);
});
