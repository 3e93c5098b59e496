/**
 * Errors that teach (issue 11), over HTTP with three agents: each rejection has
 * the right code, a message that states the valid form, and writes no event;
 * each accepted-with-a-hint send says exactly what happened.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startTestServer, type CallOptions, type TestServer } from '../support/httpServer';

let server: TestServer;
let strict: TestServer;
let t: Record<string, string>;
let s: Record<string, string>;

beforeAll(async () => {
  [server, strict] = await Promise.all([startTestServer(), startTestServer({ strictRecipients: true })]);
  t = await server.register(['@a', '@b', '@c', '@gone']);
  s = await strict.register(['@a', '@gone']);
  for (const target of [server, strict]) {
    expect((await target.call('DELETE', '/v1/agents/@gone', { token: target.adminToken })).status).toBe(200);
  }
});
afterAll(() => Promise.all([server.close(), strict.close()]));

/** A rejection: status, code and message checked by the caller; the event count is unchanged. */
async function rejected(target: TestServer, method: string, path: string, options: CallOptions, status: number, code: string) {
  const before = await target.eventCount();
  const response = await target.call(method, path, options);
  expect([response.status, response.body.code]).toEqual([status, code]);
  expect(response.body.message).toEqual(expect.any(String));
  expect(await target.eventCount()).toBe(before);
  return response.body;
}

const message = (to: string, extra: Record<string, unknown> = {}) => ({ to, subject: 's', body: 'b', ...extra });

describe('an array field given as a string states its own form', () => {
  // Comma-separated text is a list of tags (tagListForms.e2e); text that starts with [ is JSON or refused, never split.
  test.each(['[review, urgent]', '["review"'])('tags: %j', async (tags) => {
    const body = await rejected(
      server,
      'POST',
      '/v1/messages',
      { token: t['@a'], body: message('@b', { tags }) },
      400,
      'VALIDATION_FAILED',
    );
    expect(body.field).toBe('tags');
    expect(body.message).toBe(
      `add_message: 'tags' starts with [ but is not a valid JSON array (${JSON.stringify(tags)}); send a list such as ` +
        '["review", "urgent"], that list JSON-encoded, or comma-separated text: review,urgent',
    );
  });

  test('messageIds: "id1,id2"', async () => {
    const ids = await Promise.all(
      [1, 2].map(
        async () => (await server.call('POST', '/v1/messages', { token: t['@a'], body: message('@b') })).body.messageId as string,
      ),
    );
    const body = await rejected(
      server,
      'POST',
      '/v1/messages/read',
      { token: t['@b'], body: { messageIds: ids.join(',') } },
      400,
      'VALIDATION_FAILED',
    );
    expect(body.field).toBe('messageIds');
    expect(body.message).toContain('\'messageIds\' must be an array of message ids, e.g. ["<id>", "<id>"]');
    expect(body.message).not.toContain('an object');
  });

  test('task given as a non-JSON string names the object form', async () => {
    const body = await rejected(
      server,
      'POST',
      '/v1/messages',
      { token: t['@a'], body: message('@b', { task: 'review this' }) },
      400,
      'VALIDATION_FAILED',
    );
    expect(body.message).toContain('\'task\' must be an object (an A2A task envelope), e.g. {"state": "submitted"}');
  });
});

test('mark read {messageId: [id1, id2]} points to messageIds', async () => {
  const ids = await Promise.all(
    [1, 2].map(
      async () => (await server.call('POST', '/v1/messages', { token: t['@a'], body: message('@b') })).body.messageId as string,
    ),
  );
  const body = await rejected(
    server,
    'POST',
    '/v1/messages/read',
    { token: t['@b'], body: { messageId: ids } },
    400,
    'VALIDATION_FAILED',
  );
  expect(body.field).toBe('messageId');
  expect(body.message).toContain('for several ids send messageIds: ["<id>", "<id>"]');
});

test('a repeated query parameter is said to be repeated; a repeated tags is a list', async () => {
  const body = await rejected(
    server,
    'GET',
    '/v1/messages?status=unread&status=read',
    { token: t['@b'] },
    400,
    'VALIDATION_FAILED',
  );
  expect(body).toMatchObject({ field: 'status', values: ['unread', 'read'] });
  expect(body.message).toContain("the query parameter 'status' was repeated (status=unread&status=read); give it once");
  const audit = await rejected(
    server,
    'GET',
    '/v1/audit/events?limit=1&limit=2',
    { token: server.adminToken },
    400,
    'VALIDATION_FAILED',
  );
  expect(audit.message).toContain("'limit' was repeated");
  const tagged = await server.call('POST', '/v1/messages', { token: t['@a'], body: message('@c', { tags: ['x', 'y'] }) });
  const listed = await server.call('GET', '/v1/messages?tags=x&tags=y', { token: t['@c'] });
  expect(listed.body.messages.map((m: { messageId: string }) => m.messageId)).toEqual([tagged.body.messageId]);
});

test('an upper-case message id is the same message: read, marked read once, archived', async () => {
  const { messageId } = (await server.call('POST', '/v1/messages', { token: t['@a'], body: message('@c') })).body;
  const upper = (messageId as string).toUpperCase();
  expect((await server.call('GET', `/v1/messages/${upper}`, { token: t['@c'] })).body).toMatchObject({ messageId, body: 'b' });
  const first = await server.call('POST', `/v1/messages/${upper}/read`, { token: t['@c'] });
  expect(first.body).toMatchObject({ messageId, status: 'read' });
  const before = await server.eventCount();
  const again = await server.call('POST', '/v1/messages/read', { token: t['@c'], body: { messageIds: [upper, messageId] } });
  expect(again.body.results).toEqual([{ messageId, status: 'read', readAt: first.body.readAt }]);
  expect(await server.eventCount()).toBe(before);
  const reply = await server.call('POST', '/v1/messages', { token: t['@c'], body: message('@a', { inReplyTo: upper }) });
  expect(reply.status).toBe(201);
  expect(reply.body.threadId).toBe(messageId);
});

describe('a direct send to someone who is not an active agent', () => {
  test.each(['@all', '@everyone', '@channel', '@here'])(
    '%s (unregistered, reads like a broadcast) teaches AGENT:*',
    async (to) => {
      const { status, body } = await server.call('POST', '/v1/messages', { token: t['@a'], body: message(to) });
      expect(status).toBe(201);
      expect(body.warnings).toEqual([expect.objectContaining({ code: 'UNREGISTERED_RECIPIENT', suggestions: ['AGENT:*'] })]);
      expect(body.warnings[0].message).toContain('to write to every agent, send to AGENT:*');
      const refused = await rejected(
        strict,
        'POST',
        '/v1/messages',
        { token: s['@a'], body: message(to) },
        404,
        'UNKNOWN_RECIPIENT',
      );
      expect(refused.message).toContain('send to AGENT:*');
      expect(refused.suggestions).toEqual(['AGENT:*']);
    },
  );

  test('a retired identity: the warning says retired (never "if it registers"); strictRecipients refuses it', async () => {
    const { status, body } = await server.call('POST', '/v1/messages', { token: t['@a'], body: message('@gone') });
    expect(status).toBe(201);
    expect(body.warnings).toEqual([expect.objectContaining({ code: 'RETIRED_RECIPIENT', identity: '@gone' })]);
    expect(body.warnings[0].message).toMatch(/@gone was retired at .* and will never read it \(identities are never reused\)/);
    expect(body.warnings[0].message).not.toContain('register');
    const refused = await rejected(
      strict,
      'POST',
      '/v1/messages',
      { token: s['@a'], body: message('@gone') },
      404,
      'UNKNOWN_RECIPIENT',
    );
    expect(refused.message).toContain('@gone was retired at');
    expect(refused.message).not.toContain('will see');
  });

  test('an ordinary unregistered name keeps the registration hint', async () => {
    const { body } = await server.call('POST', '/v1/messages', { token: t['@a'], body: message('@nobody') });
    expect(body.warnings[0]).toMatchObject({ code: 'UNREGISTERED_RECIPIENT' });
    expect(body.warnings[0].message).toContain('it will see this message only if an agent registers under that name');
  });
});

describe('unknown-field errors', () => {
  test.each(['from', 'sender', 'sentBy'])('%s (a sender field) says the identity comes from the token', async (field) => {
    const body = await rejected(
      server,
      'POST',
      '/v1/messages',
      { token: t['@a'], body: message('@b', { [field]: '@b' }) },
      400,
      'UNKNOWN_FIELD',
    );
    expect(body.message).toContain('Your identity comes from your token');
  });

  test('any other unknown field lists the allowed ones and says nothing about identity', async () => {
    const body = await rejected(
      server,
      'POST',
      '/v1/messages',
      { token: t['@a'], body: message('@b', { colour: 'red' }) },
      400,
      'UNKNOWN_FIELD',
    );
    expect(body.message).toContain('allowed fields: to, subject, body');
    expect(body.message).not.toContain('identity');
  });

  test('a route that takes no fields says so (never "allowed fields: .")', async () => {
    const body = await rejected(server, 'GET', '/v1/inbox/count?box=outbox', { token: t['@b'] }, 400, 'UNKNOWN_FIELD');
    expect(body.message).toBe("GET /v1/inbox/count does not accept 'box'; it takes no fields.");
    expect(body.allowed).toEqual([]);
  });
});

describe('a page size that is not one says the range and the default, on every listing', () => {
  // Each listing's own name for itself starts the message; the range and default are the listing's.
  const listings = (id: string) =>
    [
      ['agent', `/v1/messages?limit=`, 'takes a whole number from 1 to 200 (default 50)'],
      ['agent', `/v1/tasks?limit=`, 'takes a whole number from 1 to 200 (default 50)'],
      ['agent', `/v1/messages/${id}/delivery?limit=`, 'takes a whole number from 1 to 1000 (default 100)'],
      ['admin', `/v1/audit/events?limit=`, 'takes a whole number from 1 to 1000 (default 100)'],
      ['admin', `/v1/audit/rejections?limit=`, 'takes a whole number from 1 to 1000 (default 100)'],
      ['admin', `/v1/audit/unwoken?limit=`, 'takes a whole number from 0 to 1000 (default 10)'],
    ] as const;

  // Read in plain decimal only: Number() read 0x2 as 2, 1e1 as 10, and an empty limit= as 0 (a page of 0 on unwoken).
  test.each(['abc', '1.5', '-1', '100000', '0x2', '1e1', '0b1', '+2', '', '%202'])('limit=%s', async (limit) => {
    const id = (await server.call('POST', '/v1/messages', { token: t['@a'], body: message('@b') })).body.messageId as string;
    for (const [who, path, teaches] of listings(id)) {
      const token = who === 'admin' ? server.adminToken : t['@a'];
      const body = await rejected(server, 'GET', `${path}${limit}`, { token }, 400, 'VALIDATION_FAILED');
      expect({ path, field: body.field, message: body.message }).toEqual({
        path,
        field: 'limit',
        message: expect.stringContaining(`'limit' ${teaches}`),
      });
      expect(body.message).not.toMatch(/NaN|expected int|received number/);
    }
  });
});

describe('a whole number in a JSON body says its unit, its range and the form', () => {
  test.each(['60s', 1.5, 0])('task claim leaseSeconds: %j', async (leaseSeconds) => {
    const taskId = (
      await server.call('POST', '/v1/messages', {
        token: t['@a'],
        body: message('@b', { task: { state: 'submitted' } }),
      })
    ).body.messageId as string;
    const body = await rejected(
      server,
      'POST',
      `/v1/tasks/${taskId}/claim`,
      { token: t['@b'], body: { leaseSeconds } },
      400,
      'VALIDATION_FAILED',
    );
    expect(body.field).toBe('leaseSeconds');
    expect(body.message).toMatch(
      /'leaseSeconds' takes a whole number of seconds from 1 to \d+, e\.g\. 300(, written in plain decimal digits, not '60s': did you mean 60\?|, not (1\.5|0))$/,
    );
  });

  test.each(['1e3', 0.5, -1])('task budget maxTokens: %j', async (maxTokens) => {
    const body = await rejected(
      server,
      'POST',
      '/v1/messages',
      { token: t['@a'], body: message('@b', { task: { state: 'submitted', budget: { maxTokens } } }) },
      400,
      'VALIDATION_FAILED',
    );
    expect(body.message).toContain("'task.budget.maxTokens' takes a whole number of tokens, 1 or more, e.g. 300");
  });
});

const DATE_TIME = 'must be an ISO 8601 date and time with seconds and an offset (Z or +hh:mm), e.g. 2030-11-24T15:00:00Z';

describe("zod's own wording never reaches the caller: each message says what the field takes", () => {
  test.each<[Record<string, unknown>, string, string]>([
    [{ subject: 's', body: 'b' }, 'to', 'is required: AGENT:*, @<identifier>, or a list of identities'],
    [{ to: 123, subject: 's', body: 'b' }, 'to', 'must be text or a list, not the number 123: AGENT:*, @<identifier>'],
    [{ to: '@b', subject: 's' }, 'body', 'is required: text (a JSON string)'],
    [{ to: '@b', subject: 's', body: { x: 1 } }, 'body', 'must be text (a JSON string), not an object {"x":1}'],
    [{ to: '@b', subject: '', body: 'b' }, 'subject', 'must not be empty'],
    [{ to: '@b', subject: 'x'.repeat(201), body: 'b' }, 'subject', 'must be at most 200 characters long (it has 201)'],
    [{ to: '@b', subject: 's', body: 'b', tags: [1] }, 'tags.0', 'must be text (a JSON string), not the number 1'],
    [
      { to: '@b', subject: 's', body: 'b', priority: 'urgent' },
      'priority',
      'must be one of "low", "normal", "high", not "urgent": did you mean "high"?',
    ],
    [{ to: '@b', subject: 's', body: 'b', priority: 'p1' }, 'priority', 'must be one of "low", "normal", "high", not "p1"'],
    [
      { to: '@b', subject: 's', body: 'b', priority: 'High' },
      'priority',
      'must be one of "low", "normal", "high", not "High": did you mean "high"? (written exactly so)',
    ],
    ...['tomorrow', '2026-12-01', '2026-12-01T00:00Z', '2026-12-01T00:00:00+0200'].flatMap(
      (time): Array<[Record<string, unknown>, string, string]> => [
        [{ to: '@b', subject: 's', body: 'b', task: { expiresAt: time } }, 'task.expiresAt', DATE_TIME],
        [{ to: '@b', subject: 's', body: 'b', task: { budget: { deadline: time } } }, 'task.budget.deadline', DATE_TIME],
      ],
    ),
  ])('%j: %s', async (input, field, teaches) => {
    const body = await rejected(server, 'POST', '/v1/messages', { token: t['@a'], body: input }, 400, 'VALIDATION_FAILED');
    expect({ field: body.field, message: body.message }).toEqual({
      field,
      message: expect.stringContaining(`'${field}' ${teaches}`),
    });
    expect(body.message).not.toMatch(/Invalid input|Too small|Too big|Invalid option|received undefined|Invalid ISO/);
  });

  test.each([[[]], [null], ['text']])('a body that is not an object (%j) says the input must be one', async (input) => {
    const body = await rejected(server, 'POST', '/v1/messages', { token: t['@a'], body: input }, 400, 'VALIDATION_FAILED');
    expect(body.message).toMatch(
      /^add_message: the input must be an object \(a JSON object of fields\), not (an array \[\]|null|text "text")$/,
    );
  });
});

describe('a message says each thing once: the field named once, a check that fails twice said once, a field always named', () => {
  const ONE_OF =
    'give exactly one of messageId (one id), messageIds (an array of ids, or its JSON encoding) or all: true ' +
    '(every unread message you have seen)';
  let mcp: Record<string, Client>;
  beforeAll(async () => {
    mcp = {};
    for (const identity of ['@a', '@b']) {
      const client = new Client({ name: 'teaching-errors-e2e', version: '1.0.0' });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
          requestInit: { headers: { authorization: `Bearer ${t[identity]}` } },
        }),
      );
      mcp[identity] = client;
    }
  });
  afterAll(() => Promise.all(Object.values(mcp).map((client) => client.close())));

  /** The same refusal over MCP: the envelope as the tool error's structured content, and nothing written. */
  async function refusedOverMcp(identity: string, tool: string, args: Record<string, unknown>) {
    const before = await server.eventCount();
    const result = (await mcp[identity].callTool({ name: tool, arguments: args })) as {
      isError?: boolean;
      structuredContent?: any;
    };
    expect(result.isError).toBe(true);
    expect(await server.eventCount()).toBe(before);
    return result.structuredContent;
  }

  test('claim {leaseSeconds: 1e20} (neither a safe integer nor within the maximum): the range once', async () => {
    const taskId = (await server.call('POST', '/v1/messages', { token: t['@a'], body: message('@b', { task: {} }) })).body
      .messageId as string;
    const teaches = 'takes a whole number of seconds from 1 to 604800, e.g. 300, not 100000000000000000000';
    const expected = {
      error: 'Validation failed',
      code: 'VALIDATION_FAILED',
      message: `claim_task: 'leaseSeconds' ${teaches}`,
      field: 'leaseSeconds',
      issues: [{ field: 'leaseSeconds', message: teaches }],
    };
    const overHttp = await rejected(
      server,
      'POST',
      `/v1/tasks/${taskId}/claim`,
      { token: t['@b'], body: { leaseSeconds: 1e20 } },
      400,
      'VALIDATION_FAILED',
    );
    expect(overHttp).toEqual(expected);
    expect(await refusedOverMcp('@b', 'claim_task', { taskId, leaseSeconds: 1e20 })).toEqual(expected);
  });

  test('limit=1e20 on a listing: the range once', async () => {
    const body = await rejected(server, 'GET', '/v1/messages?limit=1e20', { token: t['@a'] }, 400, 'VALIDATION_FAILED');
    expect(body.message).toBe(
      "list_messages: 'limit' takes a whole number from 1 to 200 (default 50), written in plain decimal digits, not '1e20'",
    );
  });

  test.each([
    ['0x2', "'limit' takes a whole number from 1 to 200 (default 50), written in plain decimal digits, not '0x2'"],
    ['1e1', "'limit' takes a whole number from 1 to 200 (default 50), written in plain decimal digits, not '1e1'"],
  ])('limit=%s is refused with the form, not read as a number', async (limit, said) => {
    const body = await rejected(server, 'GET', `/v1/messages?limit=${limit}`, { token: t['@a'] }, 400, 'VALIDATION_FAILED');
    expect(body).toMatchObject({ field: 'limit', message: `list_messages: ${said}` });
    const tasks = await rejected(server, 'GET', `/v1/tasks?limit=${limit}`, { token: t['@a'] }, 400, 'VALIDATION_FAILED');
    expect(tasks.message).toContain(said);
    // Plain digits are read as before.
    expect((await server.call('GET', '/v1/messages?limit=2', { token: t['@a'] })).status).toBe(200);
  });

  test("expectsReplyBy 'tomorrow': the field named once, then the forms", async () => {
    const teaches =
      'must be an ISO 8601 time with an offset after now (e.g. 2030-11-24T15:00:00Z) or a duration from now: ' +
      '90s, 30m, 2h, 1d, PT30M, P1DT2H';
    const input = message('@b', { expectsReplyBy: 'tomorrow' });
    const overHttp = await rejected(server, 'POST', '/v1/messages', { token: t['@a'], body: input }, 400, 'VALIDATION_FAILED');
    const overMcp = await refusedOverMcp('@a', 'add_message', input);
    for (const body of [overHttp, overMcp]) {
      expect(body).toMatchObject({
        field: 'expectsReplyBy',
        message: `add_message: 'expectsReplyBy' ${teaches}, not "tomorrow"`,
      });
    }
  });

  test.each<[string, Record<string, unknown>, string, string]>([
    ['nothing', {}, 'messageId', `'messageId' (or 'messageIds', or 'all') is required: ${ONE_OF}`],
    [
      'two of the three',
      { messageIds: ['0a8d3f4e-1111-4c1e-9a55-000000000001'], all: true },
      'all',
      `'all' cannot be combined with 'messageIds': ${ONE_OF}`,
    ],
    [
      'all: false',
      { all: false },
      'all',
      "'all' is true or absent: {all: true} marks your unread messages that were seen, not false",
    ],
    [
      'a filter without all',
      { messageId: '0a8d3f4e-1111-4c1e-9a55-000000000001', threadId: 't' },
      'threadId',
      "'threadId' narrows mark_read {all: true} only; with messageId or messageIds name the messages instead",
    ],
  ])('mark_read with %s names the field and teaches the form', async (_, input, field, said) => {
    const overHttp = await rejected(
      server,
      'POST',
      '/v1/messages/read',
      { token: t['@b'], body: input },
      400,
      'VALIDATION_FAILED',
    );
    const overMcp = await refusedOverMcp('@b', 'mark_read', input);
    for (const body of [overHttp, overMcp]) expect(body).toMatchObject({ field, message: `mark_read: ${said}` });
  });

  test("GET /v1/audit/events?after=x: 'after' named once", async () => {
    const body = await rejected(
      server,
      'GET',
      '/v1/audit/events?after=x',
      { token: server.adminToken },
      400,
      'VALIDATION_FAILED',
    );
    expect(body.message).toBe("GET /v1/audit/events: 'after' is a log position (digits), as returned in nextAfter");
  });

  test("the audit stream's after and Last-Event-ID say what they are, after the field ('after' a log position ... had no verb)", async () => {
    const form = 'is a log position (digits), as in an entry\'s "position" or its SSE id';
    const after = await rejected(
      server,
      'GET',
      '/v1/audit/stream?after=x',
      { token: server.adminToken },
      400,
      'VALIDATION_FAILED',
    );
    expect(after).toMatchObject({ field: 'after', message: `GET /v1/audit/stream: 'after' ${form}` });
    const header = await rejected(
      server,
      'GET',
      '/v1/audit/stream',
      { token: server.adminToken, headers: { 'Last-Event-ID': 'x' } },
      400,
      'VALIDATION_FAILED',
    );
    expect(header).toMatchObject({ field: 'Last-Event-ID', message: `GET /v1/audit/stream: 'Last-Event-ID' ${form}` });
  });

  test("an identity filter says what it must be ('from' an identity is @ ... had no verb)", async () => {
    const body = await rejected(server, 'GET', '/v1/messages?from=alice', { token: t['@a'] }, 400, 'VALIDATION_FAILED');
    expect(body.message).toBe(
      "list_messages: 'from' must be an identity: @ followed by 1-64 of A-Z a-z 0-9 _ - (e.g. @neo-gpt); " +
        '"alice" is not one: did you mean "@alice"? (the @ is part of the identity)',
    );
  });
});

test('a listing filter in another case is named with the value meant, never taken for it', async () => {
  const before = await server.eventCount();
  const response = await server.call('GET', '/v1/messages?status=Unread', { token: t['@a'] });
  expect([response.status, response.body.code, response.body.field]).toEqual([400, 'VALIDATION_FAILED', 'status']);
  expect(response.body.message).toContain(
    '\'status\' must be one of "unread", "read", "all", "archived", not "Unread": did you mean "unread"? (written exactly so)',
  );
  expect(await server.eventCount()).toBe(before);
});
