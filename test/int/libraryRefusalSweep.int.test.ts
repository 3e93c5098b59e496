/**
 * Every refusal the library's clients produce, swept: each method called by an admin, an auditor and three agents
 * with the arguments a user gets wrong (nothing, the wrong type, an unknown key, a wrong id, someone else's message or
 * task, a finished task, a filter that names nobody), and mailbox.as with wrong tokens. libraryTerms.ts rewrites the
 * MCP tools and HTTP routes the shared refusals name into methods, by a table and patterns; a new wording slipped
 * through silently, seen by no test that did not name that very refusal. Here no refusal may name a tool (the MCP
 * server's own list), a route, a variable or an HTTP header, and none may write an event.
 */
import { TOOLS } from '../../src/adapters/mcp/tools';
import { ADMIN_ACTOR } from '../../src/commands/roles';
import { isMailboxError, type ErrorEnvelope } from '../../src/errors';
import type { MailboxClient } from '../../src/mailbox';
import { inMethodWords } from '../../src/libraryTerms';
import { ADMIN_TOKEN, allEvents, memoryMailbox, registerAgents } from '../support/fixtures';

const TOOL_NAMES = TOOLS.map((tool) => tool.name);
/** The commands' own names, said beside the tools' (register_agent, ...) and the routes, headers and variables. */
const NOT_LIBRARY_WORDS = new RegExp(
  String.raw`\b(${[...TOOL_NAMES, 'register_agent', 'retire_agent', 'rotate_agent_token'].join('|')})\b|` +
    String.raw`\/v1\/|\b(GET|POST|PUT|PATCH|DELETE|HEAD) \/|MAILBOX_[A-Z]|Authorization|Bearer|Idempotency-Key|` +
    String.raw`\bmailbox (serve|send|agent|audit|inbox|read|task|tasks|heartbeat|projections|backup|mcp)\b|--[a-z]`,
);

type Method = Exclude<keyof MailboxClient, 'actor'>;
type Call = (client: MailboxClient) => Promise<unknown>;

/** What a user gets wrong, whatever the method: nothing, the wrong type, an unknown key, a blank. */
const ANY_WRONG: unknown[] = [undefined, null, 5, '', 'x', [], {}, { nope: 1 }, { messageId: 5 }, { identity: 'bob' }];

test('no refusal of any client method or of mailbox.as names an MCP tool, an HTTP route, a variable or a header; none writes an event', async () => {
  const mailbox = await memoryMailbox({ adminToken: ADMIN_TOKEN });
  try {
    const agents = await registerAgents(mailbox, ['@a', '@b', '@c']);
    const admin = mailbox.asActor(ADMIN_ACTOR);
    const { token: auditorToken } = await admin.registerAgent({ identity: '@auditor', role: 'auditor' });
    const auditor = await mailbox.as(auditorToken);
    await admin.registerAgent({ identity: '@gone' });
    await admin.retireAgent('@gone');
    const { '@a': a, '@b': b, '@c': c } = agents;
    const plain = (await a.send({ to: '@b', subject: 'plain', body: 'x' }, { idempotencyKey: 'k' })).messageId;
    const task = (await a.send({ to: '@b', subject: 'task', body: 'x', task: {} })).messageId;
    const shared = (await a.send({ to: 'AGENT:*', subject: 'shared', body: 'x', task: {} })).messageId;
    const done = (await a.send({ to: '@c', subject: 'done', body: 'x', task: {} })).messageId;
    await c.claimTask(done);
    await c.updateTask({ taskId: done, to: 'Working' });
    await c.updateTask({ taskId: done, to: 'Completed' });
    await b.claimTask(shared);
    const unknownId = '0190c2a4-0000-7000-8000-000000000000';
    const ids = [plain, task, shared, done, unknownId, 'nope', ''];
    const identities = ['@nobody', '@B', 'b', '@gone', 'AGENT:*', ''];

    const specific: Record<Method, unknown[][]> = {
      registerAgent: [
        [{ identity: '@a' }],
        [{ identity: 'bad id' }],
        [{ identity: '@q', role: 'king' }],
        [{ identity: '@q' }, { idempotencyKey: 'k' }],
      ],
      retireAgent: identities.map((identity) => [identity]),
      rotateToken: identities.map((identity) => [identity]),
      send: [
        ...identities.map((to) => [{ to, subject: 's', body: 'x' }]),
        [{ to: ['@b', 'AGENT:*'], subject: 's', body: 'x' }],
        [{ to: '@b', subject: '', body: 'x' }],
        [{ to: '@b', subject: 's', body: '' }],
        [{ to: '@b', subject: 's', body: 'x', task: { state: 'nope' } }],
        [{ to: '@b', subject: 's', body: 'x', threadId: 'nope' }],
        [{ to: '@b', subject: 's', body: 'x', inReplyTo: unknownId }],
        [{ to: '@b', subject: 's', body: 'x', priority: 'urgent!' }],
        [{ to: '@b', subject: 'other', body: 'x' }, { idempotencyKey: 'k' }],
        [{ to: '@b', subject: 's', body: 'x' }, { idempotency: 'k' }],
        [{ to: '@b', subject: 's', body: 'x', tags: [5] }],
      ],
      sendOutcome: [
        [{ to: '@nobody', subject: 's', body: 'x' }],
        [{ to: '@b', subject: 'other', body: 'x' }, { idempotencyKey: 'k' }],
      ],
      markRead: [
        ...ids.map((messageId) => [{ messageId }]),
        [{ messageIds: [] }],
        [{ messageIds: ['nope', plain] }],
        [{ all: true, from: '@nobody' }],
        [{ all: true, from: '@B' }],
        [{ from: '@a' }],
      ],
      archive: ids.map((id) => [id]),
      unarchive: ids.map((id) => [id]),
      listMessages: [
        [{ limit: 0 }],
        [{ cursor: 'bad' }],
        [{ box: 'nope' }],
        [{ status: 'x' }],
        [{ from: '@B' }],
        [{ from: '@nobody' }],
        [{ to: '@B', box: 'outbox' }],
        [{ box: 'outbox', status: 'unread' }],
      ],
      getMessage: ids.map((id) => [id]),
      delivery: [...ids.map((id) => [id]), [plain, { limit: 0 }], [plain, { after: 'x' }], [plain, { nope: 1 }]],
      unreadCount: [[]],
      listAgents: [[]],
      heartbeats: [[]],
      auditEvents: [['x'], [-1], [null, 0], [null, 5000], [{}]],
      watch: [[5], [() => undefined, { onErr: 1 }]],
      claimTask: [...ids.map((id) => [id]), [task, { leaseSeconds: -1 }], [task, { lease: 5 }]],
      updateTask: [
        ...ids.map((taskId) => [{ taskId, to: 'Working' }]),
        [{ taskId: task, to: 'Bogus' }],
        [{ taskId: done, to: 'Working' }],
        [{ taskId: shared, to: 'Completed', artifacts: 5 }],
        [{ taskId: task, to: 'InputRequired' }],
        [{ taskId: task }],
      ],
      listTasks: [[{ view: 'nope' }], [{ state: 'x' }], [{ limit: 0 }], [{ cursor: 'bad' }], [{ from: '@B' }]],
      getTask: ids.map((id) => [id]),
    };

    const callers: Array<[string, MailboxClient]> = [
      ['admin', admin],
      ['auditor', auditor],
      ['@a', a],
      ['@b', b],
      ['@c', c],
    ];
    const calls: Array<[string, Call]> = [];
    for (const [method, argumentLists] of Object.entries(specific) as Array<[Method, unknown[][]]>) {
      const lists = [...argumentLists, ...ANY_WRONG.map((wrong) => [wrong])];
      for (const args of lists)
        calls.push([
          `${method}(${JSON.stringify(args)})`,
          (client) => (client[method] as (...a: unknown[]) => Promise<unknown>)(...args),
        ]);
    }

    const refusals = new Map<string, { said: string; by: string }>();
    const note = (by: string, error: unknown) => {
      if (!isMailboxError(error)) throw new Error(`${by} threw something other than a MailboxError: ${String(error)}`);
      const said = JSON.stringify(error.envelope as ErrorEnvelope);
      refusals.set(`${error.code} ${error.message}`, { said, by });
    };
    for (const [name, call] of calls) {
      for (const [who, client] of callers) {
        const before = (await allEvents(mailbox)).length;
        const refused = await call(client).then(
          () => false,
          (error: unknown) => (note(`${who} ${name}`, error), true),
        );
        if (refused) expect([`${who} ${name}`, (await allEvents(mailbox)).length]).toEqual([`${who} ${name}`, before]);
      }
    }
    for (const token of [undefined, null, '', 'not-a-token', 5, {}, `${ADMIN_TOKEN}x`])
      await mailbox.as(token as string).then(
        () => undefined,
        (error: unknown) => note(`as(${JSON.stringify(token)})`, error),
      );

    const slipped = [...refusals.values()].filter(({ said }) => NOT_LIBRARY_WORDS.test(said));
    expect(slipped).toEqual([]);
    // The sweep reached the refusals it is for: every kind a client's call can meet.
    const codes = new Set([...refusals.keys()].map((key) => key.split(' ')[0]));
    expect([...codes].sort()).toEqual(
      expect.arrayContaining([
        'AGENT_EXISTS',
        'AGENT_NOT_FOUND',
        'CURSOR_MISMATCH',
        'FORBIDDEN',
        'IDEMPOTENCY_KEY_REUSED',
        'INVALID_RECIPIENT_SHAPE',
        'INVALID_TRANSITION',
        'MESSAGE_NOT_FOUND',
        'TASK_NOT_FOUND',
        'UNAUTHENTICATED',
        'UNKNOWN_FIELD',
        'UNKNOWN_RECIPIENT',
        'VALIDATION_FAILED',
      ]),
    );
    expect(refusals.size).toBeGreaterThan(100);
  } finally {
    await mailbox.close();
  }
}, 120_000);

// A tool added to the MCP server without its method in libraryTerms.ts would be named as it is in a refusal.
test('every MCP tool has the library method that does the same, which a refusal names in its place', () => {
  const unnamed = TOOL_NAMES.filter((tool) => inMethodWords(`${tool} lists them`) === `${tool} lists them`);
  expect(unnamed).toEqual([]);
});
