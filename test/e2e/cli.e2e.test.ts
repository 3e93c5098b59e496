/**
 * The CLI client against a real server: agent add|list|retire, send, inbox,
 * read, archive, watch, human and --json output, errors printed from the
 * envelope with exit code 1 and nothing written.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { buildProgram } from '../../src/cli/main';
import { startHeartbeat } from '../../src/heartbeat/startHeartbeat';
import { silentLogger, tempDir } from '../support/fixtures';
import { startTestServer, type TestServer } from '../support/httpServer';
import { ensureBuilt, runCli } from '../support/builtCli';
import { RecordingNudgeTarget } from '../support/recordingNudgeTarget';

let server: TestServer;
let out: string[];
let err: string[];

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());
beforeEach(() => {
  out = [];
  err = [];
  jest.spyOn(process.stdout, 'write').mockImplementation((chunk) => (out.push(String(chunk)), true));
  jest.spyOn(process.stderr, 'write').mockImplementation((chunk) => (err.push(String(chunk)), true));
  process.exitCode = undefined;
});
afterEach(() => {
  jest.restoreAllMocks();
  process.exitCode = undefined;
});

async function mailbox(token: string, ...args: string[]) {
  out = [];
  err = [];
  await buildProgram()
    .exitOverride()
    .parseAsync(['node', 'mailbox', ...args, '--url', server.url, '--token', token]);
  return { out: out.join(''), err: err.join(''), exitCode: process.exitCode ?? 0 };
}
const json = async (token: string, ...args: string[]) => JSON.parse((await mailbox(token, ...args, '--json')).out);

test('the walkthrough: register, send, inbox, read, archive, with human and JSON output', async () => {
  const added = await mailbox(server.adminToken, 'agent', 'add', '@alice');
  expect(added.out).toMatch(/Registered @alice \(agent\)[\s\S]*Token \(shown only now[\s\S]*mbx_/);
  const alice = /(mbx_\S+)/.exec(added.out)![1];
  const bob = (await json(server.adminToken, 'agent', 'add', '@bob')).token as string;
  expect((await mailbox(bob, 'agent', 'list')).out).toMatch(/@alice\s+agent\s+registered[\s\S]*@bob/);

  const sent = await mailbox(
    alice,
    'send',
    '@bob',
    'review #12',
    'Please look at the diff.',
    '--priority',
    'high',
    '--tag',
    'review',
  );
  expect(sent.out).toMatch(/^Sent [0-9a-f-]{36} to @bob \(delivered to @bob\)\./);
  const inbox = await mailbox(bob, 'inbox');
  expect(inbox.out).toMatch(/^1 unread\n\* \S+ \S+ {2}@alice -> @bob {2}\[high\] review #12 {2}\([0-9a-f-]{36}\)/);
  const page = await json(bob, 'inbox', '--status', 'unread', '--tag', 'review');
  const id = page.messages[0].messageId as string;
  expect(page.unreadCount).toBe(1);

  // --peek shows it and says it is still unread; read marks it and says when (both printed the same text).
  const peeked = await mailbox(bob, 'read', '--peek', id);
  expect(peeked.out).toContain('\nread     no: still unread\n');
  const read = await mailbox(bob, 'read', id);
  expect(read.out).toContain('subject  review #12');
  expect(read.out).toContain('Please look at the diff.');
  expect(read.out).toMatch(/\nread {5}\d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ\n/);
  // The sender's view has every recipient's receipt instead.
  const asSender = await mailbox(alice, 'read', id);
  expect(asSender.out).toMatch(/\nreceipts @bob read /);
  expect(asSender.out).not.toContain('\nread     ');
  expect((await json(bob, 'inbox', '--status', 'unread')).messages).toEqual([]);
  expect((await mailbox(alice, 'inbox', '--outbox')).out).toMatch(/sent messages[\s\S]*review #12/);
  expect((await mailbox(bob, 'archive', id)).out).toMatch(/^Archived /);
  const retired = await mailbox(server.adminToken, 'agent', 'retire', '@alice');
  expect(retired.out).toMatch(/^Retired @alice at /);
  const retiredAt = /^Retired @alice at (\S+)\./.exec(retired.out)![1];
  // A second retirement writes nothing and says so (it read as a fresh retirement, with the first one's time).
  const before = await server.eventCount();
  const again = await mailbox(server.adminToken, 'agent', 'retire', '@alice');
  expect(again.out).toBe(`@alice was already retired at ${retiredAt}; nothing changed.\n`);
  expect(JSON.parse((await mailbox(server.adminToken, 'agent', 'retire', '@alice', '--json')).out)).toMatchObject({
    identity: '@alice',
    retiredAt,
    changed: false,
    releasedTasks: [],
    canceledTasks: [],
  });
  expect(await server.eventCount()).toBe(before);
});

test('errors print the envelope message (or the envelope with --json), exit 1, and write nothing', async () => {
  const { '@carol': carol } = await server.register(['@carol']);
  const before = await server.eventCount();
  const refused = await mailbox(carol, 'send', 'AGENT:gpt', 'hi', 'hello');
  expect(refused.exitCode).toBe(1);
  expect(refused.err).toContain("error: Recipient 'AGENT:gpt' does not match either valid shape");
  expect(refused.err).toContain('valid recipients: AGENT:* (literal broadcast');
  // Several identities in one argument: the CLI's form (one argument each), not the HTTP body's JSON list.
  for (const several of ['@carol,@neo-gpt', '@carol, @neo-gpt']) {
    const joined = await mailbox(carol, 'send', several, 'hi', 'hello');
    expect(joined.exitCode).toBe(1);
    expect(joined.err).toContain('give each as its own argument: mailbox send @carol @neo-gpt "subject" "body"');
    expect(joined.err).not.toContain('["@carol","@neo-gpt"]');
  }
  const asJson = await mailbox(carol, 'send', 'neo-gpt', 'hi', 'hello', '--json');
  expect(JSON.parse(asJson.err)).toMatchObject({ code: 'INVALID_RECIPIENT_SHAPE', to: 'neo-gpt' });
  const filter = await mailbox(carol, 'inbox', '--outbox', '--status', 'unread');
  expect(filter.err).toContain('FILTER_NOT_APPLICABLE');
  const badToken = await mailbox('mbx_nope', 'inbox');
  expect(badToken.err).toContain('UNAUTHENTICATED');
  const forbidden = await mailbox(carol, 'agent', 'add', '@mallory');
  expect(forbidden.err).toContain('needs the admin role');
  expect(forbidden.exitCode).toBe(1);
  expect(await server.eventCount()).toBe(before);
});

test('watch prints sync then wakes, and --count ends it', async () => {
  const t = await server.register(['@dave', '@erin']);
  const watching = mailbox(t['@erin'], 'watch', '--count', '1', '--json');
  // The sync event shows the stream is open; then a message wakes it.
  await waitFor(() => out.join('').includes('"event":"sync"'));
  await server.call('POST', '/v1/messages', { token: t['@dave'], body: { to: '@erin', subject: 'ping', body: 'x' } });
  const { out: printed, exitCode } = await watching;
  const events = printed
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line));
  expect(events.map((e) => e.event)).toEqual(['sync', 'wake']);
  expect(events[1].data).toMatchObject({ from: '@dave', subject: 'ping', recipient: '@erin' });
  expect(exitCode).toBe(0);
});

test.each([
  [
    '0x2',
    "'--count' takes a whole number of wake events, 1 or more (e.g. --count 1), written in plain decimal digits, not '0x2'",
  ],
  [
    'abc',
    "'--count' takes a whole number of wake events, 1 or more (e.g. --count 1), written in plain decimal digits, not 'abc'",
  ],
  ['0', "'--count' takes a whole number of wake events, 1 or more (e.g. --count 1)"],
])(
  'watch --count %s is refused with the form (it was read by Number(): 0x2 as 2, abc and 0 ended at once)',
  async (count, said) => {
    const t = await server.register([`@wc${count.replace(/\W/g, '')}`]);
    const run = await mailbox(Object.values(t)[0], 'watch', '--count', count);
    expect(run).toEqual({ out: '', err: `error: mailbox watch: ${said} (VALIDATION_FAILED)\n`, exitCode: 1 });
  },
);

test('task claim --lease 0x10 is refused with the form and claims nothing', async () => {
  const tokens = await server.register(['@lsa', '@lsb']);
  const sent = await server.call('POST', '/v1/messages', {
    token: tokens['@lsa'],
    body: { to: '@lsb', subject: 'lease', body: 'x', task: {} },
  });
  const before = await server.eventCount();
  for (const lease of ['0x10', '1e3', 'abc']) {
    const run = await mailbox(tokens['@lsb'], 'task', 'claim', sent.body.messageId as string, '--lease', lease);
    expect(run).toEqual({
      out: '',
      err:
        `error: mailbox task claim: '--lease' takes a whole number of seconds from 1 to 604800 (e.g. --lease 600), ` +
        `written in plain decimal digits, not '${lease}' (VALIDATION_FAILED)\n`,
      exitCode: 1,
    });
  }
  // A duration is told the seconds it stands for (suggested, not taken).
  const run = await mailbox(tokens['@lsb'], 'task', 'claim', sent.body.messageId as string, '--lease', '10m');
  expect(run.err).toBe(
    `error: mailbox task claim: '--lease' takes a whole number of seconds from 1 to 604800 (e.g. --lease 600), ` +
      `written in plain decimal digits, not '10m': did you mean 600? (VALIDATION_FAILED)\n`,
  );
  expect(await server.eventCount()).toBe(before);
});

test.each([
  ['inbox', [], 'inbox', 'takes a whole number from 1 to 200 (default 50)'],
  ['task list', ['task', 'list'], 'task list', 'takes a whole number from 1 to 200 (default 50)'],
  [
    'delivery',
    ['delivery', '00000000-0000-4000-8000-000000000000'],
    'delivery',
    'takes a whole number from 1 to 1000 (default 100)',
  ],
])(
  "%s --limit is refused naming --limit as typed (the error named the server's field, limit)",
  async (_, args, what, teaches) => {
    const t = await server.register([`@lim${what.replace(/\W/g, '')}`]);
    const token = Object.values(t)[0];
    const command = args.length ? args : [what];
    for (const limit of ['0x2', '1e1', 'abc', ' 2']) {
      expect(await mailbox(token, ...command, '--limit', limit)).toEqual({
        out: '',
        err: `error: mailbox ${what}: '--limit' ${teaches}, written in plain decimal digits, not '${limit}' (VALIDATION_FAILED)\n`,
        exitCode: 1,
      });
    }
    for (const limit of ['0', '201000']) {
      expect(await mailbox(token, ...command, '--limit', limit)).toEqual({
        out: '',
        err: `error: mailbox ${what}: '--limit' ${teaches}, not ${limit} (VALIDATION_FAILED)\n`,
        exitCode: 1,
      });
    }
    // A limit in range still reaches the server as typed (delivery: a message that does not exist, so NOT_FOUND).
    process.exitCode = undefined; // set by the refusals above
    const valid = await mailbox(token, ...command, '--limit', '2');
    expect(valid.err).not.toContain('limit');
    expect(valid).toMatchObject({ exitCode: what === 'delivery' ? 1 : 0 });
  },
);

test('watch --count 1 also ends on a task change (a wake of its own, printed as a task: line), as --help says', async () => {
  const t = await server.register(['@wtsend', '@wtclaim']);
  const sent = await server.call('POST', '/v1/messages', {
    token: t['@wtsend'],
    body: { to: 'AGENT:*', subject: 'a job', body: 'x', task: {} },
  });
  const taskId = sent.body.messageId as string;
  const watching = mailbox(t['@wtsend'], 'watch', '--count', '1');
  await waitFor(() => out.join('').startsWith('sync: '));
  // A claim wakes the task's sender: that is the one wake counted; no message was sent to it.
  expect((await server.call('POST', `/v1/tasks/${taskId}/claim`, { token: t['@wtclaim'], body: {} })).status).toBe(200);
  const { out: printed, exitCode } = await watching;
  const lines = printed.trim().split('\n');
  expect(lines).toHaveLength(2);
  expect(lines[0]).toMatch(/^sync: \d+ unread/);
  expect(lines[1]).toMatch(new RegExp(`^task: ${taskId} \\w+ \\(TaskClaimed by @wtclaim\\)`));
  expect(exitCode).toBe(0);
});

test.each([
  ['text', [] as string[]],
  ['--json', ['--json']],
])(
  'watch --no-reconnect (%s) whose server shuts down before --count is reached says so and exits 1 (it exited 0, as if the wake had come)',
  async (_form, flags) => {
    const own = await startTestServer();
    const { '@nora': nora } = await own.register(['@nora']);
    const watching = buildProgram()
      .exitOverride()
      .parseAsync(['node', 'mailbox', 'watch', '--no-reconnect', '--count', '1', ...flags, '--url', own.url, '--token', nora]);
    await waitFor(() => /sync/.test(out.join('')));
    await own.close();
    await watching;
    expect(process.exitCode).toBe(1);
    const said = err.join('');
    expect(said).toContain('The wake stream ended (the server ended it: server shutting down) after 0 of the 1 wake(s)');
    expect(said).toContain('--no-reconnect');
    if (flags.length) expect(JSON.parse(said)).toMatchObject({ code: 'UNAVAILABLE' });
  },
);

/**
 * A wake stream that sends its heartbeat header and a sync, then `beats` heartbeats `everyMs` apart, then (with `wake`) a
 * wake, then nothing: a server stopped (SIGSTOP) or a connection dropped without a FIN looks like this to the client.
 * The client allows three intervals of silence; it runs on this process's event loop, so a stall of the loop longer than
 * that reads as silence: a test that the stream stays alive uses a wider interval than one that it goes silent.
 */
async function silentWakeServer(
  beats: number,
  wake: boolean,
  everyMs = 40,
): Promise<{ url: string; close: () => Promise<void> }> {
  const server = http.createServer((request, response) => {
    response.writeHead(200, { 'content-type': 'text/event-stream', 'x-mailbox-heartbeat-ms': String(everyMs) });
    response.write('retry: 2000\n\nevent: sync\ndata: {"unreadCount":0,"byPriority":{"low":0,"normal":0,"high":0}}\n\n');
    let sent = 0;
    const timer = setInterval(() => {
      if (sent++ < beats) return void response.write(': heartbeat\n\n');
      clearInterval(timer);
      if (wake) {
        const data = {
          messageId: '00000000-0000-4000-8000-000000000001',
          from: '@x',
          to: '@y',
          recipient: '@y',
          subject: 'late',
        };
        response.write(`event: wake\ndata: ${JSON.stringify({ ...data, priority: 'normal', unreadCount: 1 })}\n\n`);
      }
    }, everyMs);
    request.on('close', () => clearInterval(timer));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}

test('watch on a stream gone silent (no event, no heartbeat for three of its intervals) says so and exits 1 with --no-reconnect (it waited forever)', async () => {
  // The real server names its interval (MAILBOX_SSE_HEARTBEAT_MS, 15000 by default) on every stream.
  const { '@hazel': hazel } = await server.register(['@hazel']);
  const head = await fetch(`${server.url}/v1/wake`, { method: 'HEAD', headers: { authorization: `Bearer ${hazel}` } });
  expect(head.headers.get('x-mailbox-heartbeat-ms')).toBe('15000');
  const silent = await silentWakeServer(0, false);
  try {
    await buildProgram()
      .exitOverride()
      .parseAsync(['node', 'mailbox', 'watch', '--no-reconnect', '--url', silent.url, '--token', 'mbx_any']);
    expect(process.exitCode).toBe(1);
    expect(out.join('')).toMatch(/^sync: 0 unread/);
    expect(err.join('')).toContain(
      'error: The wake stream went silent: no event and no heartbeat for 120 ms, and the server sends one every 40 ms',
    );
  } finally {
    await silent.close();
  }
}, 5000);

test('watch: heartbeats keep a quiet stream alive (no reconnect while they come)', async () => {
  // 1 s of heartbeats only, longer than the 750 ms of silence allowed (at 40 ms apart, a 120 ms stall of this loop under a
  // loaded CI machine read as silence once).
  const quiet = await silentWakeServer(4, true, 250);
  try {
    await buildProgram()
      .exitOverride()
      .parseAsync(['node', 'mailbox', 'watch', '--count', '1', '--no-reconnect', '--url', quiet.url, '--token', 'mbx_any']);
    expect([process.exitCode ?? 0, err.join('')]).toEqual([0, '']);
    expect(out.join('')).toMatch(/^sync: 0 unread.*\nwake: @x -> @y {2}late/s);
  } finally {
    await quiet.close();
  }
});

// A retried send printed 'Sent <id> to ...' as the first had: it read as a second message sent.
test('send --idempotency-key again: says it was already sent and nothing new was sent, writing nothing', async () => {
  const t = await server.register(['@replaya', '@replayb']);
  const args = ['send', '@replayb', 's', 'b', '--idempotency-key', 'retry-7'];
  const first = await mailbox(t['@replaya'], ...args);
  const id = /^Sent (\S+) to @replayb/.exec(first.out)![1];
  const before = await server.eventCount();
  expect(await mailbox(t['@replaya'], ...args)).toEqual({
    out: expect.stringMatching(
      new RegExp(
        `^Already sent ${id} at \\S+ with this --idempotency-key: nothing new was sent \\(delivered to @replayb\\)\\.\\n$`,
      ),
    ),
    err: '',
    exitCode: 0,
  });
  expect(await server.eventCount()).toBe(before);
});

test("send --idempotency-key 'k✓' (not ASCII) is honored exactly, and a token holding such a character is said to be the token's fault: both were 'Cannot reach the mailbox'", async () => {
  const t = await server.register(['@ikey', '@ikey2']);
  const first = await mailbox(t['@ikey'], 'send', '@ikey2', 's', 'b', '--idempotency-key', 'déploiement-✓', '--json');
  expect([first.exitCode, first.err]).toEqual([0, '']);
  const again = await mailbox(t['@ikey'], 'send', '@ikey2', 's', 'b', '--idempotency-key', 'déploiement-✓', '--json');
  expect(again.out).toBe(first.out); // --json prints the body as the server answered: the original result
  // The same key over HTTP (JSON is UTF-8) is the same key: one message.
  const overHttp = await server.call('POST', '/v1/messages', {
    token: t['@ikey'],
    body: { to: '@ikey2', subject: 's', body: 'b', idempotencyKey: 'déploiement-✓' },
  });
  expect(overHttp.body.messageId).toBe(JSON.parse(first.out).messageId);
  const before = await server.eventCount();
  const badToken = await mailbox('mbx_✓', 'inbox');
  expect(badToken.exitCode).toBe(1);
  expect(badToken.err).toContain('The token (--token or MAILBOX_TOKEN) holds U+2713 at index 4');
  expect(badToken.err).not.toContain('Cannot reach');
  expect(await server.eventCount()).toBe(before);
});

test('inbox with a filter says its unread count is the whole inbox\'s (it read "2 unread" above "(no messages match)")', async () => {
  const t = await server.register(['@fa', '@fb', '@fc']);
  for (const from of ['@fa', '@fb']) {
    await server.call('POST', '/v1/messages', { token: t[from], body: { to: '@fc', subject: `from ${from}`, body: 'x' } });
  }
  expect((await mailbox(t['@fc'], 'inbox')).out).toMatch(/^2 unread\n/);
  const filtered = await mailbox(t['@fc'], 'inbox', '--from', '@fa');
  expect(filtered.out).toMatch(/^2 unread in your whole inbox \(the list below is filtered\)\n\* .* from @fa/);
  const none = await mailbox(t['@fc'], 'inbox', '--status', 'archived');
  expect(none.out).toBe('2 unread in your whole inbox (the list below is filtered)\n(no messages match)\n');
});

test('watch --help says what counts and what line each wake prints', () => {
  const help = buildProgram()
    .commands.find((command) => command.name() === 'watch')!
    .helpInformation()
    .replace(/\s+/g, ' ');
  expect(help).toContain(
    '"wake:" a message delivered to you, "task:" a change to a task you sent or hold, "reply overdue:" a reply you expect is late',
  );
  expect(help).toContain('exit after n wakes, of any of the three kinds (sync lines and reconnects do not count)');
  expect(help).not.toContain('wait for the next message');
});

async function waitFor(condition: () => boolean, timeoutMs = 5000) {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

test('send to an unregistered identity says it was accepted, not delivered, and who would see it', async () => {
  const { '@ursula': ursula } = await server.register(['@ursula', '@victor', '@wendy']);
  const sent = await mailbox(ursula, 'send', '@nobody', 'hello?', 'anyone there');
  expect(sent.exitCode).toBe(0);
  expect(sent.out).toMatch(
    /^Sent [0-9a-f-]{36}: accepted for @nobody, who is not registered: it will see it only if registered under that name\.\n$/,
  );
  expect(sent.out).not.toContain('delivered');
  const nearMiss = await mailbox(ursula, 'send', '@victr', 'hi', 'typo');
  expect(nearMiss.out).toMatch(/accepted for @victr, who is not registered[\s\S]*did you mean: @victor/);
  expect((await mailbox(ursula, 'send', '@wendy', 'hi', 'real')).out).toMatch(/\(delivered to @wendy\)\.$/m);
});

test('task list, claim, move and show: the first claim wins, a refusal teaches and writes nothing', async () => {
  const tokens = await server.register(['@tia', '@tom', '@tess']);
  const sent = await server.call('POST', '/v1/messages', {
    token: tokens['@tia'],
    body: { to: 'AGENT:*', subject: 'review the diff', body: 'x', task: {} },
  });
  const taskId = sent.body.messageId as string;
  expect((await mailbox(tokens['@tom'], 'task', 'list', '--view', 'claimable')).out).toMatch(
    new RegExp(`^${taskId}  Submitted +\\(unclaimed\\) +from @tia  "review the diff"`),
  );
  expect((await mailbox(tokens['@tom'], 'task', 'claim', taskId, '--lease', '600')).out).toMatch(
    new RegExp(`^${taskId}: Submitted, held by @tom \\(lease to \\S+\\)`),
  );

  const before = await server.eventCount();
  const late = await mailbox(tokens['@tess'], 'task', 'claim', taskId);
  expect(late.exitCode).toBe(1);
  expect(late.err).toMatch(/was claimed by @tom at \S+; the first claim wins/);
  const skip = await mailbox(tokens['@tom'], 'task', 'move', taskId, 'completed');
  expect(skip.exitCode).toBe(1);
  expect(skip.err).toMatch(/Submitted/);
  expect(await server.eventCount()).toBe(before);

  expect((await mailbox(tokens['@tom'], 'task', 'move', taskId, 'working')).out).toMatch(/: Working, held by @tom/);
  expect((await mailbox(tokens['@tom'], 'task', 'move', taskId, 'completed', '--artifact', 'LGTM')).out).toMatch(
    /: Completed, held by @tom/,
  );
  // Text by default, as every client command (it printed the JSON with or without --json); --json is the A2A object.
  const shown = (await mailbox(tokens['@tia'], 'task', 'show', taskId)).out;
  expect(shown).toMatch(new RegExp(`^task +${taskId}\nfrom +@tia\nto +AGENT:\\* \\(audience of \\d+\\)\n`));
  expect(shown).toMatch(/\nsubject +review the diff\nstate +Completed, held by @tom since \S+ \S+Z\n/);
  expect(shown).toMatch(/\nartifacts \(1\)\n {2}\(unnamed\)\n {4}LGTM\n/);
  expect(shown).toMatch(
    /\nhistory\n {2}\S+ \S+Z {2}@tia {2}x\n {2}\S+ \S+Z {2}@tom {2}claimed by @tom, lease to \S+Z\n {2}\S+ \S+Z {2}@tom {2}Submitted -> Working\n/,
  );
  expect(() => JSON.parse(shown)).toThrow();
  expect(JSON.parse((await mailbox(tokens['@tia'], 'task', 'show', taskId, '--json')).out)).toMatchObject({
    id: taskId,
    status: { state: 'TASK_STATE_COMPLETED' },
    artifacts: [{ parts: [{ kind: 'text', text: 'LGTM' }] }],
    mailbox: { assignee: '@tom', sender: '@tia' },
  });
  expect((await json(tokens['@tia'], 'task', 'list', '--view', 'sent', '--state', 'Completed')).tasks).toMatchObject([
    { taskId, state: 'Completed', assignee: '@tom' },
  ]);
});

test('task move refused: the states it may move to under that label (none on a final task), the flag to add, nothing written', async () => {
  const tokens = await server.register(['@tmsender', '@tmworker']);
  const sent = await server.call('POST', '/v1/messages', {
    token: tokens['@tmsender'],
    body: { to: '@tmworker', subject: 'fix the build', body: 'x', task: {} },
  });
  const taskId = sent.body.messageId as string;
  const move = (...args: string[]) => mailbox(tokens['@tmworker'], 'task', 'move', taskId, ...args);
  expect((await move('working')).out).toMatch(/: Working, held by @tmworker/);

  const before = await server.eventCount();
  const allowed = 'InputRequired, AuthRequired, Completed, Failed';
  expect(await move('working')).toEqual({
    out: '',
    err:
      `error: Task ${taskId} is Working; @tmworker (assignee) cannot move it to Working. From Working you may move it ` +
      `to: ${allowed}. It is Working already, and a task keeps no progress notes: to tell @tmsender something about it, ` +
      `send a message in its thread: add_message {"to": "@tmsender", "inReplyTo": "${taskId}", "subject": "...", ` +
      `"body": "..."}. (INVALID_TRANSITION)\n  states you may move it to: ${allowed}\n`,
    exitCode: 1,
  });
  expect((await move('input-required')).err).toBe(
    'error: Moving a task to InputRequired needs a note (what you need from the sender); add --note <text>. ' +
      '(VALIDATION_FAILED)\n',
  );
  expect((await move('failed')).err).toBe(
    'error: Moving a task to Failed needs a reason (a sentence for the sender saying why); add --reason <text>. ' +
      '(VALIDATION_FAILED)\n',
  );
  // A note for a reason is said to be no stand-in, in the CLI's flags too.
  expect((await move('failed', '--note', 'flaky')).err).toBe(
    'error: Moving a task to Failed needs a reason (a sentence for the sender saying why); add --reason <text> (the ' +
      'note given goes beside the reason, never in its place). (VALIDATION_FAILED)\n',
  );
  expect((await move('failed', '--reason', 'flaky', '--artifact', 'log')).err).toBe(
    'error: Artifacts are the output of a finished task: give --artifact when moving it to completed, not with Failed. ' +
      '(VALIDATION_FAILED)\n',
  );
  const asJson = await mailbox(tokens['@tmworker'], 'task', 'move', taskId, 'input-required', '--json');
  expect(JSON.parse(asJson.err)).toMatchObject({ code: 'VALIDATION_FAILED', field: 'note', to: 'InputRequired' });
  expect(await server.eventCount()).toBe(before);

  expect((await move('completed')).out).toMatch(/: Completed, held by @tmworker/);
  const final = await server.eventCount();
  expect(await move('working')).toEqual({
    out: '',
    err: expect.stringMatching(
      new RegExp(
        `^error: Task ${taskId} is Completed, which is final: its holder @tmworker moved it to Completed at \\S+\\. ` +
          'No claim or move is possible from Completed .* so @tmworker \\(assignee\\) cannot move it to Working, and nothing ' +
          'was changed\\..* \\(INVALID_TRANSITION\\)\\n$',
      ),
    ) as string,
    exitCode: 1,
  });
  expect(await server.eventCount()).toBe(final);
});

test('send @b @c "subject" body: one message to both; each reads its own copy; a third agent sees nothing', async () => {
  const {
    '@xena': xena,
    '@yuri': yuri,
    '@zack': zack,
    '@quinn': quinn,
  } = await server.register(['@xena', '@yuri', '@zack', '@quinn']);
  const sent = await mailbox(xena, 'send', '@yuri', '@zack', 'standup', 'at ten', '--json');
  expect(sent.exitCode).toBe(0);
  const result = JSON.parse(sent.out);
  expect(result).toMatchObject({ to: ['@yuri', '@zack'], recipients: ['@yuri', '@zack'] });
  for (const agent of [yuri, zack]) {
    const inbox = JSON.parse((await mailbox(agent, 'inbox', '--json')).out);
    expect(inbox.messages.map((m: { messageId: string }) => m.messageId)).toEqual([result.messageId]);
  }
  expect(JSON.parse((await mailbox(quinn, 'inbox', '--json')).out).messages).toEqual([]);
  const plain = await mailbox(xena, 'send', '@yuri', '@zack', 'again', 'body');
  expect(plain.out).toMatch(/^Sent [0-9a-f-]{36} to @yuri, @zack \(delivered to @yuri, @zack\)\.$/m);
  const wrong = await mailbox(xena, 'send', '@yuri', '@zack', 'subject', 'body', 'extra');
  expect(wrong.exitCode).not.toBe(0);
  expect(wrong.err).toContain('quote a subject or body');
});

test('send --expects-reply-by 2h: each recipient owes a reply by then (the CLI could not ask for one); a bad form is refused', async () => {
  const { '@uma': uma, '@vic': vic } = await server.register(['@uma', '@vic']);
  const sent = JSON.parse((await mailbox(uma, 'send', '@vic', 'answer me', 'x', '--expects-reply-by', '2h', '--json')).out);
  const ledger = await json(uma, 'delivery', sent.messageId);
  expect(ledger.replyDueBy).toBe(new Date(Date.parse(sent.sentAt) + 2 * 3_600_000).toISOString());
  const owed = await server.call('GET', '/v1/heartbeat', { token: server.adminToken });
  expect((owed.body.agents as Array<{ identity: string; repliesOwed: number }>).find((a) => a.identity === '@vic')).toMatchObject(
    {
      repliesOwed: 1,
    },
  );
  // Without --json the due time as kept is said too (an offset time in UTC), and a send without one says none.
  const human = await mailbox(uma, 'send', '@vic', 'by noon', 'x', '--expects-reply-by', '2030-01-02T12:00:00.0005+02:00');
  expect(human.exitCode).toBe(0);
  expect(human.out).toMatch(
    /^Sent \S+ to @vic \(delivered to @vic\)\.\nEach recipient owes a reply by 2030-01-02T10:00:00\.001Z\.\n$/,
  );
  expect((await mailbox(uma, 'send', '@vic', 'no reply owed', 'x')).out).not.toContain('owes a reply');
  const bad = await mailbox(uma, 'send', '@vic', 'again', 'x', '--expects-reply-by', 'soon');
  expect(bad.exitCode).toBe(1);
  expect(bad.err).toMatch(/'--expects-reply-by'.*\(VALIDATION_FAILED\)/s);
  expect(JSON.parse((await mailbox(vic, 'inbox', '--json')).out).messages).toHaveLength(3); // nothing sent by the bad one
});

test.each(['notaurl', '127.0.0.1:7420', 'ftp://127.0.0.1:7420'])(
  '--url %s: refused as not an http(s) URL, with an example, not reported as an unreachable server',
  async (url) => {
    out = [];
    err = [];
    await buildProgram().exitOverride().parseAsync(['node', 'mailbox', 'inbox', '--url', url, '--token', 'mbx_x']);
    expect(process.exitCode).toBe(1);
    expect(err.join('')).toBe(
      `error: The mailbox URL '${url}' is not an http:// or https:// URL; give the server's address, e.g. ` +
        'http://127.0.0.1:7420 (--url or MAILBOX_URL). (VALIDATION_FAILED)\n',
    );
    expect(out.join('')).toBe('');
  },
);

// MAILBOX_URL=http://host:port/v1 (copied from a curl line) was answered "no route GET /v1/v1/messages".
test.each(['/v1', '/v1/', '/v1/messages', '/mailbox/v1'])(
  '--url <server>%s: refused at once as naming an API path, with the root to give instead, nothing sent',
  async (suffix) => {
    const url = `${server.url}${suffix}`;
    const before = await server.eventCount();
    out = [];
    err = [];
    await buildProgram()
      .exitOverride()
      .parseAsync(['node', 'mailbox', 'send', '@nobody', 's', 'b', '--url', url, '--token', 'mbx_x']);
    expect(process.exitCode).toBe(1);
    expect(err.join('')).toBe(
      `error: The mailbox URL '${url}' names an API path (${new URL(url).pathname}); give the server's root, e.g. ` +
        `${server.url}${suffix.startsWith('/mailbox') ? '/mailbox' : ''} (--url or MAILBOX_URL): the client adds ` +
        '/v1/... itself. (VALIDATION_FAILED)\n',
    );
    expect(out.join('')).toBe('');
    expect(await server.eventCount()).toBe(before);
  },
);

test("send with no arguments says what a send takes (the send's own message, not commander's) and writes nothing", async () => {
  const bob = (await json(server.adminToken, 'agent', 'add', '@noargs')).token as string;
  const before = await server.eventCount();
  const sent = await mailbox(bob, 'send');
  expect(sent).toEqual({
    out: '',
    err: 'error: Give one or more recipients, then the subject (and the body): mailbox send @b @c "subject" "body". (VALIDATION_FAILED)\n',
    exitCode: 1,
  });
  expect(await server.eventCount()).toBe(before);
});

describe('send --body-file with a file that cannot be read: one line naming the flag and the path, exit 1, nothing sent', () => {
  let sender: string;
  beforeAll(async () => {
    sender = (await server.register(['@bodyfile-a', '@bodyfile-b']))['@bodyfile-a'];
  });

  test.each([
    ['a missing file', () => path.join(tempDir('mailbox-body-'), 'nonexistent.md'), 'there is no such file'],
    ['a directory', () => tempDir('mailbox-body-'), 'it is a directory, not a file'],
  ])('%s', async (_what, fileOf, reason) => {
    const file = fileOf();
    const before = await server.eventCount();
    const message =
      `--body-file '${file}' cannot be read: ${reason}; give the path of a readable file, or '-' to read the body ` +
      'from stdin. Nothing was sent.';
    expect(await mailbox(sender, 'send', '@bodyfile-b', 'notes', '--body-file', file)).toEqual({
      out: '',
      err: `error: ${message} (VALIDATION_FAILED)\n`,
      exitCode: 1,
    });
    const asJson = await mailbox(sender, 'send', '@bodyfile-b', 'notes', '--body-file', file, '--json');
    expect([asJson.out, asJson.exitCode, asJson.err.split('\n')]).toEqual(['', 1, [expect.any(String), '']]);
    expect(JSON.parse(asJson.err)).toEqual({
      error: 'Validation failed',
      code: 'VALIDATION_FAILED',
      message,
      field: '--body-file',
      path: file,
    });
    expect(await server.eventCount()).toBe(before);
  });
});

test("send --body-file with an empty file: refused (an empty pipe or file is a mistake more often than not), '' sends an empty body", async () => {
  const sender = (await server.register(['@empty-a', '@empty-b']))['@empty-a'];
  const file = path.join(tempDir('mailbox-body-'), 'empty.md');
  fs.writeFileSync(file, '');
  const before = await server.eventCount();
  expect(await mailbox(sender, 'send', '@empty-b', 'notes', '--body-file', file)).toEqual({
    out: '',
    err:
      `error: --body-file '${file}' is empty (0 bytes): nothing was sent. To send an empty body on purpose, give '' as ` +
      'the body argument. (VALIDATION_FAILED)\n',
    exitCode: 1,
  });
  expect(await server.eventCount()).toBe(before);
  const sent = await json(sender, 'send', '@empty-b', 'on purpose', '');
  expect(sent).toMatchObject({ status: 'sent', to: '@empty-b' });
  expect(await server.eventCount()).toBeGreaterThan(before);
});

test('send without a body: the error says how the arguments were read (recipients, subject) and where the body goes', async () => {
  const sender = (await server.register(['@nobody-a', '@nobody-b', '@nobody-c']))['@nobody-a'];
  const before = await server.eventCount();
  expect(await mailbox(sender, 'send', '@nobody-b', '@nobody-c', 'hello')).toEqual({
    out: '',
    err:
      'error: A message needs a body: after the recipients (@nobody-b @nobody-c) and the subject ("hello"), give the body ' +
      "as the next argument, '-' to read stdin, or --body-file <file>. Nothing was sent. (VALIDATION_FAILED)\n",
    exitCode: 1,
  });
  expect((await mailbox(sender, 'send', '@nobody-b', 'hello')).err).toContain(
    'after the recipients (@nobody-b) and the subject ("hello"), give the body as the next argument',
  );
  expect(await server.eventCount()).toBe(before);
});

test('read a b c: every id checked, and every message fetched, before any is shown or marked read', async () => {
  const a = (await json(server.adminToken, 'agent', 'add', '@reada')).token as string;
  const b = (await json(server.adminToken, 'agent', 'add', '@readb')).token as string;
  const sent = (await json(a, 'send', '@readb', 'one', 'body one')).messageId as string;
  const unread = async () =>
    (await json(b, 'inbox')).messages.map((m: { messageId: string; readAt: string | null }) => [m.messageId, m.readAt]);

  const before = await server.eventCount();
  const malformed = await mailbox(b, 'read', sent, 'not-a-uuid');
  expect(malformed).toEqual({
    out: '',
    err: expect.stringMatching(/^error: mailbox read 'not-a-uuid': 'messageId' must be a message id: a UUID/),
    exitCode: 1,
  });
  expect(await server.eventCount()).toBe(before); // refused before any request

  const missing = await mailbox(b, 'read', sent, '0b9f3e2a-1c4d-4e5f-8a6b-7c8d9e0f1a2b');
  expect(missing.exitCode).toBe(1);
  expect(missing.out).toBe(''); // the first message was not shown
  expect(missing.err).toMatch(/MESSAGE_NOT_FOUND/);
  expect(await unread()).toEqual([[sent, null]]); // nor marked read (fetching it may mark it seen: it was returned)

  const read = await mailbox(b, 'read', sent);
  expect(read.out).toContain('body one');
  expect((await unread())[0][1]).toEqual(expect.any(String));
});

// `mailbox read --all` was "unknown option": marking everything read was HTTP-only (POST /v1/messages/read {all: true}).
test('read --all marks your seen unread messages read, with the HTTP filters; --json prints the answer', async () => {
  const a = (await json(server.adminToken, 'agent', 'add', '@allfroma')).token as string;
  const c = (await json(server.adminToken, 'agent', 'add', '@allfromc')).token as string;
  const b = (await json(server.adminToken, 'agent', 'add', '@allreader')).token as string;
  for (const subject of ['one', 'two']) await json(a, 'send', '@allreader', subject, 'b');
  const fromC = (await json(c, 'send', '@allreader', 'three', 'b')).messageId as string;
  await json(b, 'inbox'); // seen: listed to @allreader
  const unseen = (await json(a, 'send', '@allreader', 'four', 'b')).messageId as string;
  const unread = async () =>
    (await json(b, 'inbox', '--status', 'unread')).messages.map((m: { messageId: string }) => m.messageId).sort();

  const before = await server.eventCount();
  for (const args of [['read', '--all', fromC], ['read'], ['read', fromC, '--from', '@allfroma']]) {
    const refused = await mailbox(b, ...args);
    expect(refused).toEqual({ out: '', err: expect.stringMatching(/^error: .*\(VALIDATION_FAILED\)\n$/), exitCode: 1 });
  }
  expect(await server.eventCount()).toBe(before);
  process.exitCode = undefined;

  expect(await mailbox(b, 'read', '--all', '--from', '@allfroma')).toEqual({
    out:
      'Marked 2 messages read. 1 unread was left unread: never listed or shown to you (mailbox inbox --status unread ' +
      'lists them; --include-unseen marks them too).\n',
    err: '',
    exitCode: 0,
  });
  expect(await unread()).toEqual([fromC, unseen].sort());
  const all = await json(b, 'read', '--all', '--include-unseen');
  expect(all).toMatchObject({ all: true, status: 'read', changed: 2, withheldUnseenCount: 0 });
  expect([...all.messageIds].sort()).toEqual([fromC, unseen].sort());
  expect(await unread()).toEqual([]);
  expect((await mailbox(b, 'read', '--all')).out).toBe('Marked 0 messages read.\n');
});

// `mailbox archive a b` was "too many arguments" while `read a b` worked.
test('archive a b and unarchive a b: one call each, each reported; a failed one is reported too and exits 1', async () => {
  const a = (await json(server.adminToken, 'agent', 'add', '@archa')).token as string;
  const b = (await json(server.adminToken, 'agent', 'add', '@archb')).token as string;
  const one = (await json(a, 'send', '@archb', 'one', 'b')).messageId as string;
  const two = (await json(a, 'send', '@archb', 'two', 'b')).messageId as string;
  const missing = '0b9f3e2a-1c4d-4e5f-8a6b-7c8d9e0f1a2b';
  const archived = async () =>
    (await json(b, 'inbox', '--status', 'archived')).messages.map((m: { messageId: string }) => m.messageId).sort();

  const before = await server.eventCount();
  const malformed = await mailbox(b, 'archive', one, 'not-a-uuid');
  expect(malformed).toEqual({
    out: '',
    err: expect.stringMatching(/^error: mailbox archive 'not-a-uuid': 'messageId' must be a message id/),
    exitCode: 1,
  });
  expect(await server.eventCount()).toBe(before); // checked before any request
  process.exitCode = undefined;

  const some = await mailbox(b, 'archive', one, missing, two);
  expect(some.out).toMatch(new RegExp(`^Archived ${one} at \\S+\\.\\nArchived ${two} at \\S+\\.\\n$`));
  expect(some.err).toBe(
    `error: No message ${missing} exists among those you sent or received; check the id in your inbox or outbox. ` +
      '(MESSAGE_NOT_FOUND)\n',
  );
  expect(some.exitCode).toBe(1);
  expect(await archived()).toEqual([one, two].sort());
  process.exitCode = undefined;
  // Archiving them again said "Archived" again: it now says nothing changed (exit 0), and nothing is written.
  const archivedEvents = await server.eventCount();
  expect(await mailbox(b, 'archive', one)).toEqual({
    out: expect.stringMatching(new RegExp(`^${one} was already archived \\(at \\S+\\): nothing changed\\.\\n$`)),
    err: '',
    exitCode: 0,
  });
  expect(await server.eventCount()).toBe(archivedEvents);

  expect(await mailbox(b, 'unarchive', one, two)).toEqual({
    out: `${one} is back in your inbox (unread).\n${two} is back in your inbox (unread).\n`,
    err: '',
    exitCode: 0,
  });
  expect(await archived()).toEqual([]);
  const again = (await mailbox(b, 'unarchive', one, two, '--json')).out
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line));
  expect(again).toEqual([
    expect.objectContaining({ messageId: one, changed: false }),
    expect.objectContaining({ messageId: two, changed: false }),
  ]);
});

// `--idempotency-key "$KEY"` with KEY unset sent a message without any key (the empty key was dropped), so the
// retry the flag was for sent it twice. Refused as the HTTP header and the MCP argument refuse it.
test("send --idempotency-key '': refused, nothing sent (never a send without the key it was given)", async () => {
  const bob = (await json(server.adminToken, 'agent', 'add', '@emptykey')).token as string;
  const before = await server.eventCount();
  const sent = await mailbox(bob, 'send', '@emptykey', 's', 'b', '--idempotency-key', '');
  expect(sent).toEqual({
    out: '',
    err:
      "error: mailbox send: '--idempotency-key' must not be empty: a key is 1-200 characters of printable text, e.g. " +
      '"review-12" (no control characters, line breaks, invisible or bidi formatting characters, nor whitespace at ' +
      'either end) (VALIDATION_FAILED)\n',
    exitCode: 1,
  });
  expect(await server.eventCount()).toBe(before);
});

test('delivery in text says when the replies are due, when the heartbeat found them overdue and when it was escalated, as --json does', async () => {
  // Its own server on an injected clock: the heartbeat finds the message unwoken, then its reply overdue.
  const T0 = Date.parse('2030-01-01T12:00:00.000Z');
  const MIN = 60_000;
  let now = T0;
  const clock = { now: () => new Date(now) };
  const own = await startTestServer({}, { clock });
  const heartbeat = await startHeartbeat(own.mailbox, {
    targets: [new RecordingNudgeTarget('webhook')],
    logger: silentLogger,
    clock,
    schedule: false,
    settings: { idleMs: 24 * 60 * MIN, wakeSlaMs: MIN, metricsPort: null },
  });
  const settle = async () => {
    await heartbeat.settled();
    await own.mailbox.wakeRecorder.flush();
    expect(await own.mailbox.runner.waitFor((await own.mailbox.eventStore.headPosition())!, 5000)).toBe(true);
  };
  const delivery = async (token: string, ...args: string[]) => {
    out = [];
    await buildProgram()
      .exitOverride()
      .parseAsync(['node', 'mailbox', 'delivery', ...args, '--url', own.url, '--token', token]);
    return out.join('');
  };
  try {
    const { '@ray': ray } = await own.register(['@ray', '@sam']);
    const sent = await own.call('POST', '/v1/messages', {
      token: ray,
      body: { to: '@sam', subject: 'answer me', body: '.', expectsReplyBy: '10m' },
    });
    const id = sent.body.messageId as string;
    // Due, and nothing else yet (the due time has not come: the text says no more than the ledger knows).
    expect(await delivery(ray, id)).toMatch(/^replies {2}due 2030-01-01 12:10:00Z$/m);

    now = T0 + 2 * MIN; // woke nobody within the wake SLA: escalated
    await heartbeat.tick();
    await settle();
    now = T0 + 11 * MIN; // past the due time, @sam has not answered: overdue
    await heartbeat.tick();
    await settle();
    const ledger = JSON.parse(await delivery(ray, id, '--json'));
    expect(ledger).toMatchObject({
      escalatedAt: new Date(T0 + 2 * MIN).toISOString(),
      replyDueBy: new Date(T0 + 10 * MIN).toISOString(),
      replyOverdueAt: new Date(T0 + 11 * MIN).toISOString(),
    });
    const text = await delivery(ray, id);
    // Overdue since its due time: 12:11 is when the heartbeat found it so (it read "overdue since 12:11").
    expect(text).toMatch(/^replies {2}due 2030-01-01 12:10:00Z, found overdue by the heartbeat 2030-01-01 12:11:00Z$/m);
    expect(text).toMatch(/^escalated by the heartbeat 2030-01-01 12:02:00Z \(woke nobody in time\)$/m);
  } finally {
    await heartbeat.stop();
    await own.close();
  }
});

// The --help quick start exports an agent's MAILBOX_TOKEN; an admin command after it was refused as "needs the admin
// role; your token is agent @a" without a word on where that token came from (the README says admin commands find
// ./data/admin.token by themselves), and MAILBOX_TOKEN= (empty) was "No token" rather than unset.
test('agent add with an agent token from MAILBOX_TOKEN: the refusal names the variable and the way out; an empty MAILBOX_TOKEN is unset', async () => {
  const agentToken = (await json(server.adminToken, 'agent', 'add', '@exported')).token as string;
  const saved = { token: process.env.MAILBOX_TOKEN, admin: process.env.MAILBOX_ADMIN_TOKEN };
  const run = async (...args: string[]) => {
    out = [];
    err = [];
    process.exitCode = undefined;
    await buildProgram()
      .exitOverride()
      .parseAsync(['node', 'mailbox', ...args, '--url', server.url]);
    return { out: out.join(''), err: err.join(''), exitCode: process.exitCode ?? 0 };
  };
  try {
    process.env.MAILBOX_TOKEN = agentToken;
    process.env.MAILBOX_ADMIN_TOKEN = server.adminToken;
    const refused = await run('agent', 'add', '@exported-2');
    expect(refused.exitCode).toBe(1);
    expect(refused.err).toMatch(
      /^error: Registering an agent needs the admin role; your token is agent @exported\. No agent's token does this: .* Ask them to do it\. That token came from MAILBOX_TOKEN, which admin commands take before MAILBOX_ADMIN_TOKEN, .*\(env -u MAILBOX_TOKEN mailbox agent add \.\.\.\), or pass --token <admin token>\. \(FORBIDDEN\)$/m,
    );
    expect((await json(server.adminToken, 'agent', 'list')).agents.map((a: { identity: string }) => a.identity)).not.toContain(
      '@exported-2',
    );
    expect((await run('agent', 'token', '@exported')).err).toContain('env -u MAILBOX_TOKEN mailbox agent token ...');

    process.env.MAILBOX_TOKEN = '';
    expect((await run('agent', 'add', '@exported-3')).out).toMatch(/^Registered @exported-3 \(agent\)/);
    // --token given on the command line is the user's own choice: refused as before, without the MAILBOX_TOKEN advice.
    expect((await mailbox(agentToken, 'agent', 'retire', '@exported-3')).err).not.toContain('MAILBOX_TOKEN');
  } finally {
    for (const [name, value] of [
      ['MAILBOX_TOKEN', saved.token],
      ['MAILBOX_ADMIN_TOKEN', saved.admin],
    ] as const)
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
  }
});

// An empty MAILBOX_ADMIN_TOKEN (MAILBOX_ADMIN_TOKEN=${ADMIN} with ADMIN unset) was read as unset: the admin command went
// on to ./data/admin.token, the token of whatever server once ran here, and registered the agent with it (serve refuses
// the same variable empty). An empty MAILBOX_DATA_DIR was ./data, and MAILBOX_ADMIN_TOKEN_FILE= no file, likewise.
test.each([
  [
    'MAILBOX_ADMIN_TOKEN',
    'the admin token, or unset it to look in MAILBOX_ADMIN_TOKEN_FILE, then <MAILBOX_DATA_DIR>/admin.token',
  ],
  [
    'MAILBOX_ADMIN_TOKEN_FILE',
    'the path of a file holding the admin token, or unset it to look in <MAILBOX_DATA_DIR>/admin.token',
  ],
  ['MAILBOX_DATA_DIR', "the server's data directory (its admin.token is read there), or unset it for ./data"],
])(
  'an admin command with %s set but empty: one line naming it, exit 2, nothing registered',
  async (variable, form) => {
    ensureBuilt(); // the real CLI: the line and the exit code are bin/mailbox.js's
    const beside = tempDir('mailbox-cli-empty-admin-');
    fs.mkdirSync(path.join(beside, 'data'));
    fs.writeFileSync(path.join(beside, 'data', 'admin.token'), server.adminToken); // what it fell back on
    const identity = `@empty-${variable.toLowerCase().replace(/_/g, '-')}`;
    const run = await runCli(['agent', 'add', identity, '--url', server.url], { [variable]: '' }, { cwd: beside });
    expect(run.stderr.trimEnd()).toBe(
      `mailbox: ${variable} is set but empty (a \${VARIABLE} substituted while VARIABLE was unset?): set it to ${form}.`,
    );
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    const listed = (await json(server.adminToken, 'agent', 'list')).agents.map((a: { identity: string }) => a.identity);
    expect(listed).not.toContain(identity);
  },
  120_000, // a first build of dist (ensureBuilt) takes its time on a loaded machine
);

// MAILBOX_TOKEN=${AGENT_TOKEN} with AGENT_TOKEN unset: a client command said "No token: pass --token <token> or set
// MAILBOX_TOKEN", while it was set. Refused by the rule of every MAILBOX_* variable, in one line, exit 2, nothing sent.
// (An admin command takes an empty MAILBOX_TOKEN as unset: 'agent add with an agent token from MAILBOX_TOKEN' above.)
test.each([
  ['send', '', 'is set but empty (a ${VARIABLE} substituted while VARIABLE was unset?)'],
  ['send', '  ', 'is blank (only spaces)'],
  ['inbox', '', 'is set but empty (a ${VARIABLE} substituted while VARIABLE was unset?)'],
])(
  '%s with MAILBOX_TOKEN=%j: one line naming it and --token, exit 2, nothing written',
  async (command, value, what) => {
    ensureBuilt(); // the real CLI: the line and the exit code are bin/mailbox.js's
    const [a, b, c] = ['a', 'b', 'c'].map((name) => `@empty-token-${command}-${value.length}-${name}`);
    const tokens = await server.register([a, b, c]);
    const args = command === 'send' ? ['send', b, c, 'hello', 'body'] : ['inbox'];
    const before = await server.eventCount();
    const run = await runCli([...args, '--url', server.url], { MAILBOX_TOKEN: value });
    expect(run.stderr.trimEnd()).toBe(
      `mailbox: MAILBOX_TOKEN ${what}: set it to your agent's token (mailbox agent add prints it), or unset it and pass --token <token>.`,
    );
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(await server.eventCount()).toBe(before);
    // The same command with the token set works (and a send writes): the refusal was the empty variable's.
    const done = await runCli([...args, '--url', server.url], { MAILBOX_TOKEN: tokens[a] });
    expect(done.code).toBe(0);
    expect(await server.eventCount()).toBe(command === 'send' ? before + 1 : before);
  },
  120_000,
);

// MAILBOX_URL=${SERVER} with SERVER unset: said "The mailbox URL '' is not an http:// or https:// URL", exit 1, not as
// the empty variable it is. Client and admin commands alike: one line naming it, exit 2, nothing sent.
test.each([
  ['send', ''],
  ['send', '  '],
  ['agent add', ''],
])(
  '%s with MAILBOX_URL=%j: one line naming it, exit 2, nothing written',
  async (command, value) => {
    ensureBuilt(); // the real CLI: the line and the exit code are bin/mailbox.js's
    const [a, b, c] = ['a', 'b', 'c'].map((name) => `@empty-url-${command.replace(' ', '-')}-${value.length}-${name}`);
    const tokens = await server.register([a, b, c]);
    const [args, env] =
      command === 'send'
        ? [['send', b, c, 'hello', 'body'], { MAILBOX_TOKEN: tokens[a] }]
        : [['agent', 'add', `${a}-new`], { MAILBOX_ADMIN_TOKEN: server.adminToken }];
    const before = await server.eventCount();
    const run = await runCli(args, { ...env, MAILBOX_URL: value });
    const what =
      value === '' ? 'is set but empty (a ${VARIABLE} substituted while VARIABLE was unset?)' : 'is blank (only spaces)';
    expect(run.stderr.trimEnd()).toBe(
      `mailbox: MAILBOX_URL ${what}: set it to the server's address, or unset it for http://127.0.0.1:7420.`,
    );
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(await server.eventCount()).toBe(before);
    // The same command with the variable set works: the refusal was the empty variable's.
    expect((await runCli(args, { ...env, MAILBOX_URL: server.url })).code).toBe(0);
    expect(await server.eventCount()).toBe(before + 1);
  },
  120_000,
);

// A misspelled variable is read by nothing: MAILBOX_TOKN=<token> failed as "No token: ... set MAILBOX_TOKEN", and
// MAILBOX_ULR=<another server> as "Cannot reach the mailbox at http://127.0.0.1:7420", neither naming the typo (serve
// warns of one at start; the client commands said nothing).
test('a failing client command names a misspelled MAILBOX_* variable and the one meant; a working one says nothing', async () => {
  const token = (await json(server.adminToken, 'agent', 'add', '@typo')).token as string;
  const run = async (...args: string[]) => {
    out = [];
    err = [];
    process.exitCode = undefined;
    await buildProgram()
      .exitOverride()
      .parseAsync(['node', 'mailbox', ...args]);
    return { out: out.join(''), err: err.join(''), exitCode: process.exitCode ?? 0 };
  };
  const saved = process.env.MAILBOX_TOKEN;
  delete process.env.MAILBOX_TOKEN;
  process.env.MAILBOX_TOKN = token;
  process.env.MAILBOX_ULR = server.url;
  try {
    const refused = await run('inbox', '--url', 'http://127.0.0.1:1');
    expect(refused.exitCode).toBe(1);
    expect(refused.out).toBe('');
    expect(refused.err).toMatch(/^error: No token: pass --token <token> or set MAILBOX_TOKEN .*\(UNAUTHENTICATED\)\n/);
    expect(refused.err).toContain('  MAILBOX_TOKN is not a mailbox variable and is ignored: did you mean MAILBOX_TOKEN?\n');
    expect(refused.err).toContain('  MAILBOX_ULR is not a mailbox variable and is ignored: did you mean MAILBOX_URL?\n');
    // The command that works is not told about them (its output is what a script reads).
    const listed = await run('inbox', '--url', server.url, '--token', token);
    expect([listed.exitCode, listed.err]).toEqual([0, '']);
    // --json prints the envelope alone, as before.
    const asJson = await run('inbox', '--url', 'http://127.0.0.1:1', '--json');
    expect(JSON.parse(asJson.err)).toMatchObject({ code: 'UNAUTHENTICATED' });
  } finally {
    delete process.env.MAILBOX_TOKN;
    delete process.env.MAILBOX_ULR;
    if (saved !== undefined) process.env.MAILBOX_TOKEN = saved;
  }
});

// The server's refusals named the API's fields (threadId, tags, box=outbox), which the user never typed: `inbox --outbox
// --status unread` was told "Filter 'status' does not apply to box=outbox; applicable filters for box=outbox: to,
// threadId, tags, ...". Each command names its own flags; --json keeps the server's field names.
test("refusals of inbox, send and read --all name the command's flags, not the API's fields; nothing is written", async () => {
  const t = await server.register(['@fl-a', '@fl-b', '@fl-c']);
  const before = await server.eventCount();
  const outbox = await mailbox(t['@fl-a'], 'inbox', '--outbox', '--status', 'unread');
  expect([outbox.exitCode, outbox.err]).toEqual([
    1,
    "error: '--status' does not apply with --outbox; the options that do: --to, --thread, --tag, --priority, --limit, " +
      '--cursor. (FILTER_NOT_APPLICABLE)\n',
  ]);
  const inbox = await mailbox(t['@fl-a'], 'inbox', '--to', '@fl-b');
  expect(inbox.err).toBe(
    "error: '--to' does not apply without --outbox; the options that do: --status, --from, --thread, --tag, " +
      '--priority, --limit, --cursor. (FILTER_NOT_APPLICABLE)\n',
  );
  const asJson = await mailbox(t['@fl-a'], 'inbox', '--outbox', '--status', 'unread', '--json');
  expect(JSON.parse(asJson.err)).toMatchObject({ code: 'FILTER_NOT_APPLICABLE', filter: 'status', box: 'outbox' });

  const thread = await mailbox(t['@fl-a'], 'inbox', '--thread', ' deploy');
  expect(thread.exitCode).toBe(1);
  expect(thread.err).toMatch(/^error: mailbox inbox: '--thread' begins with whitespace \(U\+0020\)/);
  const tag = await mailbox(t['@fl-a'], 'send', '@fl-b', '@fl-c', 'hi', 'hello', '--tag', 'ok', '--tag', 'a,b');
  expect(tag.exitCode).toBe(1);
  expect(tag.err).toMatch(/^error: mailbox send: '--tag #2' holds a comma at index 1/);
  const from = await mailbox(t['@fl-a'], 'read', '--all', '--from', 'fl-b');
  expect(from.err).toMatch(/^error: mailbox read: '--from' must be an identity: .*did you mean "@fl-b"\?/);
  const quiet = await mailbox(t['@fl-a'], 'send', '@fl-b', 'hi', 'hello', '--priority', 'high', '--wake-suppressed');
  expect(quiet.exitCode).toBe(1);
  expect(quiet.err).toMatch(
    /^error: '--wake-suppressed' is refused for a high-priority message .* Drop '--wake-suppressed' to send it woken, /,
  );
  for (const { err } of [outbox, inbox, thread, tag, from, quiet])
    expect(err).not.toMatch(/'threadId'|'tags|box=|list_messages|add_message|mark_read/);
  expect(await server.eventCount()).toBe(before);
});

// A filter by a case variant of a registered agent (`inbox --from @Bob` with @bob registered) was refused in the HTTP
// API's words: "list_messages: 'from' is @Bob ... Did you mean from=@bob?", a form no CLI command takes. Each command
// says it in its own flags; --json's details keep the API's field. The same for the other commands' one-field refusals
// (delivery --after, task list --state, task move --note), which named get_delivery, list_tasks and update_task.
test('a refusal of one filter names the command and its flag, and suggests the flag form; nothing is written', async () => {
  const t = await server.register(['@cv-alice', '@cv-bob', '@cv-carol']);
  const sent = await json(t['@cv-alice'], 'send', '@cv-bob', '@cv-carol', 'hi', 'hello');
  const before = await server.eventCount();
  const inbox = await mailbox(t['@cv-bob'], 'inbox', '--from', '@CV-alice');
  expect([inbox.exitCode, inbox.out]).toEqual([1, '']);
  expect(inbox.err).toMatch(/^error: mailbox inbox: '--from' is @CV-alice, which is no agent: @cv-alice is registered/);
  expect(inbox.err).toContain('Did you mean --from @cv-alice? (VALIDATION_FAILED)\n');
  const outbox = await mailbox(t['@cv-alice'], 'inbox', '--outbox', '--to', '@CV-Bob');
  expect(outbox.err).toMatch(/^error: mailbox inbox: '--to' is @CV-Bob, .* Did you mean --to @cv-bob\? \(VALIDATION_FAILED\)\n/);
  const readAll = await mailbox(t['@cv-carol'], 'read', '--all', '--from', '@Cv-Alice');
  expect(readAll.err).toMatch(/^error: mailbox read: '--from' is @Cv-Alice, .* Did you mean --from @cv-alice\?/);
  const delivery = await mailbox(t['@cv-alice'], 'delivery', sent.messageId, '--after', 'cv-bob');
  expect(delivery.err).toMatch(/^error: mailbox delivery: '--after' must be an identity: .*did you mean "@cv-bob"\?/);
  const tasks = await mailbox(t['@cv-bob'], 'task', 'list', '--state', 'bogus');
  expect(tasks.err).toMatch(/^error: mailbox task list: '--state' takes one task state/);
  for (const { err } of [inbox, outbox, readAll, delivery, tasks]) {
    expect(err).not.toMatch(/from=|to=|list_messages|mark_read|get_delivery|list_tasks|'from'|'to'|'after'|'state'/);
  }
  const asJson = await mailbox(t['@cv-bob'], 'inbox', '--from', '@CV-alice', '--json');
  expect(JSON.parse(asJson.err)).toMatchObject({ code: 'VALIDATION_FAILED', field: 'from', suggestions: ['@cv-alice'] });
  expect(await server.eventCount()).toBe(before);
});

// A field inside --task was named as the MCP tool and the API name it ("add_message does not accept 'task.x'; allowed
// fields in 'task': ..."), a refused --cursor as the route and tool ("(GET /v1/messages, list_messages) ... pass each
// nextCursor back unchanged with the same box and filters"): a CLI user typed neither. They now speak the command.
test('refusals inside --task and of a --cursor speak the command and its flags; nothing is written', async () => {
  const t = await server.register(['@tk-a', '@tk-b', '@tk-c']);
  for (const subject of ['one', 'two', 'three']) await json(t['@tk-a'], 'send', '@tk-b', '@tk-c', subject, 'x');
  const page = await json(t['@tk-b'], 'inbox', '--limit', '1');
  expect(page.nextCursor).toEqual(expect.any(String));
  const before = await server.eventCount();

  const unknown = await mailbox(t['@tk-a'], 'send', '@tk-b', 's', 'b', '--task', '{"x":1}');
  expect(unknown).toEqual({
    out: '',
    err:
      "error: mailbox send --task: does not accept 'x'; allowed fields: state, input, metadata, expectedOutput, budget, " +
      'expiresAt. (UNKNOWN_FIELD)\n  allowed fields: state, input, metadata, expectedOutput, budget, expiresAt\n',
    exitCode: 1,
  });
  const nested = await mailbox(
    t['@tk-a'],
    'send',
    '@tk-c',
    's',
    'b',
    '--task',
    '{"input":{"parts":[{"kind":"text","txt":"a"}]}}',
  );
  expect(nested.err).toMatch(
    /^error: mailbox send --task: does not accept 'input\.parts\.0\.txt'; allowed fields in 'input\.parts\.0': kind, text\. /,
  );
  const value = await mailbox(t['@tk-a'], 'send', '@tk-b', 's', 'b', '--task', '{"expiresAt":"soon"}');
  expect([value.exitCode, value.err]).toEqual([
    1,
    expect.stringMatching(
      /^error: mailbox send --task: 'expiresAt' must be an ISO 8601 date and time .*, not "soon" \(VALIDATION_FAILED\)\n$/,
    ),
  ]);

  const otherFilters = await mailbox(t['@tk-b'], 'inbox', '--cursor', page.nextCursor, '--from', '@tk-c');
  const sameWords = 'a cursor pages only the listing that printed it. Run';
  expect(otherFilters).toEqual({
    out: '',
    err:
      "error: mailbox inbox: this --cursor came from another listing (other flags, or another agent's) or was altered: " +
      `${sameWords} \`mailbox inbox\` again without --cursor, then give each "more: --cursor ..." it prints to the same ` +
      'command with the same flags. (CURSOR_MISMATCH)\n',
    exitCode: 1,
  });
  const otherListing = await mailbox(t['@tk-b'], 'task', 'list', '--cursor', page.nextCursor);
  expect([otherListing.exitCode, otherListing.err]).toEqual([
    1,
    `error: mailbox task list: this --cursor came from \`mailbox inbox\`: ${sameWords} \`mailbox task list\` again ` +
      'without --cursor, then give each "more: --cursor ..." it prints to the same command with the same flags. (CURSOR_MISMATCH)\n',
  ]);
  // An empty --cursor came from no listing: it is told to leave --cursor out, in the CLI's words too.
  const empty = await mailbox(t['@tk-b'], 'inbox', '--cursor', '');
  expect(empty).toEqual({
    out: '',
    err:
      "error: mailbox inbox: '--cursor' must not be empty: leave it out for the first page, then give each " +
      '"more: --cursor ..." a page prints, unchanged (VALIDATION_FAILED)\n',
    exitCode: 1,
  });
  for (const { err } of [unknown, nested, value, otherFilters, otherListing, empty]) {
    expect(err).not.toMatch(/add_message|list_messages|list_tasks|\/v1\/|nextCursor|'task\.|in 'task'/);
  }
  // --json keeps the API's fields for a script.
  const asJson = await mailbox(t['@tk-a'], 'send', '@tk-b', 's', 'b', '--task', '{"x":1}', '--json');
  expect(JSON.parse(asJson.err)).toMatchObject({ code: 'UNKNOWN_FIELD', field: 'task.x', fields: ['task.x'] });
  expect(await server.eventCount()).toBe(before);
});

// The CLI printed the server's pointers to HTTP routes: "No agent @x is registered; GET /v1/agents lists the registered
// ones", "An agent gets its token when an admin registers it (POST /v1/agents)". In text they name the commands that
// call them; --json prints the envelope as the server wrote it.
test('refusals that point to the agent routes name the mailbox agent commands instead; nothing is written', async () => {
  const t = await server.register(['@rc-a', '@rc-b', '@rc-c']);
  const rotated = (await json(server.adminToken, 'agent', 'token', '@rc-c')).token as string;
  expect(rotated).toMatch(/^mbx_/);
  const before = await server.eventCount();
  const retire = await mailbox(server.adminToken, 'agent', 'retire', '@rc-nobody');
  expect([retire.exitCode, retire.err]).toEqual([
    1,
    'error: No agent @rc-nobody is registered; `mailbox agent list` lists the registered ones. (AGENT_NOT_FOUND)\n',
  ]);
  const unknown = await mailbox('mbx_not-a-token', 'inbox');
  expect(unknown.err).toContain('An agent gets its token when an admin registers it (`mailbox agent add`);');
  const replaced = await mailbox(t['@rc-c'], 'inbox');
  expect(replaced.err).toMatch(/no longer works; use the new one \(an admin rotated it with `mailbox agent token @rc-c`\)\./);
  const admin = await mailbox(server.adminToken, 'send', '@rc-a', 'hi', 'hello');
  expect(admin.err).toContain('`mailbox agent token <identity>` issues a new one');
  for (const { err } of [retire, unknown, replaced, admin]) expect(err).not.toMatch(/\/v1\/agents/);
  const asJson = await mailbox(server.adminToken, 'agent', 'retire', '@rc-nobody', '--json');
  expect(JSON.parse(asJson.err)).toMatchObject({ code: 'AGENT_NOT_FOUND', message: expect.stringContaining('GET /v1/agents') });
  expect(await server.eventCount()).toBe(before);
  // A delivery ledger asked by one who did not send the message points to the outbox as the command that lists it.
  const id = (await json(t['@rc-a'], 'send', '@rc-b', 'ledger', 'x')).messageId as string;
  const beforeLedger = await server.eventCount();
  const ledger = await mailbox(t['@rc-b'], 'delivery', id);
  expect([ledger.exitCode, ledger.err]).toEqual([
    1,
    `error: Message ${id} is not among the messages you sent, and a delivery ledger is shown only to its sender, ` +
      'auditors and admins: check the id in your outbox (`mailbox inbox --outbox`). (FORBIDDEN)\n',
  ]);
  expect(await server.eventCount()).toBe(beforeLedger);
});

// A server started with MAILBOX_ADMIN_TOKEN beside the admin.token an earlier start generated: an admin command run
// there reads the file's token, and was told "The bearer token is not valid for this mailbox (mistyped, or another
// mailbox's)", while the operator had typed no token. The refusal now names the file and how to give the server's.
test('an admin command whose admin.token the server does not take: the refusal names the file and the way out', async () => {
  ensureBuilt(); // the real CLI: the line and the exit code are bin/mailbox.js's
  await server.register(['@stale-a', '@stale-b', '@stale-c']);
  const beside = tempDir('mailbox-cli-stale-admin-');
  fs.mkdirSync(path.join(beside, 'data'));
  fs.writeFileSync(path.join(beside, 'data', 'admin.token'), `mbx_admin_${'x'.repeat(43)}\n`, { mode: 0o600 });
  const before = await server.eventCount();
  const run = await runCli(['agent', 'add', '@stale-d', '--url', server.url], {}, { cwd: beside });
  expect(run.code).toBe(1);
  expect(run.stdout).toBe('');
  expect(run.stderr).toMatch(/^error: The bearer token is not valid for this mailbox/);
  expect(run.stderr).toContain(
    `That token was read from ${fs.realpathSync(beside)}/data/admin.token, where a server stores the admin token it ` +
      'generated: the server at this URL takes another (its MAILBOX_ADMIN_TOKEN, or the admin.token of its own data ' +
      'dir). Set MAILBOX_ADMIN_TOKEN to that token, or pass --token <admin token>. (UNAUTHENTICATED)\n',
  );
  // The operator's own token (MAILBOX_ADMIN_TOKEN) refused: no word about a file.
  const own = await runCli(
    ['agent', 'add', '@stale-d', '--url', server.url],
    { MAILBOX_ADMIN_TOKEN: 'mbx_nope' },
    { cwd: beside },
  );
  expect([own.code, own.stderr]).toEqual([1, expect.not.stringContaining('admin.token, where')]);
  expect(await server.eventCount()).toBe(before);
}, 120_000);

// https:// to the server, which speaks plain HTTP: "Cannot reach the mailbox at https://... (ERR_SSL_WRONG_VERSION_NUMBER);
// is `mailbox serve` running?" sent the user looking for a server that was running. The error says what answered and
// the URL to give instead; nothing is sent.
test('--url https:// to the plain-HTTP server: the error gives the http:// URL, nothing sent', async () => {
  const t = await server.register(['@tls-a', '@tls-b', '@tls-c']);
  const before = await server.eventCount();
  const https = server.url.replace(/^http:/, 'https:');
  out = [];
  err = [];
  process.exitCode = undefined;
  await buildProgram()
    .exitOverride()
    .parseAsync(['node', 'mailbox', 'send', '@tls-b', '@tls-c', 'hi', 'hello', '--url', https, '--token', t['@tls-a']]);
  expect([process.exitCode, out.join('')]).toEqual([1, '']);
  expect(err.join('')).toBe(
    `error: Cannot reach the mailbox at ${https} (ERR_SSL_WRONG_VERSION_NUMBER); something answered there in plain ` +
      `HTTP, not TLS (mailbox serve speaks http://): give ${server.url}. Set --url or MAILBOX_URL. (UNAVAILABLE)\n`,
  );
  expect(await server.eventCount()).toBe(before);
});

// Refusals of an id or an identity named the MCP tools and routes: "get_task: 'taskId' must be a message id ...
// (list_messages' messageId, list_tasks' taskId)", "register_agent: 'identity' ...", "list_tasks (GET /v1/tasks) lists
// yours. The message itself is read with get_message". In text they name the command, its argument and the commands.
test('refusals of an id or identity name the command, its argument and the commands to use; nothing is written', async () => {
  const t = await server.register(['@ids-a', '@ids-b', '@ids-c']);
  const sent = await json(t['@ids-a'], 'send', '@ids-b', '@ids-c', 'plain', 'no task');
  const before = await server.eventCount();
  const show = await mailbox(t['@ids-b'], 'task', 'show', 'nope');
  expect(show.err).toMatch(
    /^error: mailbox task show: '<taskId>' must be a message id: .* \(`mailbox inbox`, `mailbox task list`\); 'nope' is not one/,
  );
  const delivery = await mailbox(t['@ids-a'], 'delivery', 'nope');
  expect(delivery.err).toMatch(/^error: mailbox delivery: '<messageId>' must be a message id: /);
  const add = await mailbox(server.adminToken, 'agent', 'add', 'ids-d');
  expect(add.err).toMatch(/^error: mailbox agent add: '<identity>' must be an identity: .*did you mean "@ids-d"\?/);
  const claim = await mailbox(t['@ids-b'], 'task', 'claim', sent.messageId);
  expect(claim.err).toContain(
    "A task is a message sent with 'task' (`mailbox send --task '{}'`), and its id is that message's id; `mailbox task " +
      'list` lists yours. The message itself is read with `mailbox read <messageId>`. (TASK_NOT_FOUND)\n',
  );
  const read = await mailbox(
    t['@ids-b'],
    'read',
    sent.messageId.replace(/.$/, (c: string) => (c === '0' ? '1' : '0')),
  );
  expect(read.err).toContain('(`mailbox task show` lists them) names an entry of that task, not a message: read it with ');
  expect(read.err).toContain("`mailbox task show <the entry's taskId>`. (MESSAGE_NOT_FOUND)\n");
  for (const { err, exitCode } of [show, delivery, add, claim, read]) {
    expect(exitCode).toBe(1);
    expect(err).not.toMatch(/list_messages|list_tasks|get_task|get_message|get_delivery|add_message|register_agent|\/v1\//);
  }
  expect(await server.eventCount()).toBe(before);
});
