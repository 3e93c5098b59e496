/**
 * An unknown option that starts a real one or is another tool's word for one (`mailbox send --prio high`, `--recipient`
 * for send's recipients, `inbox --unread`) was "unknown option" and no more: commander suggests only near misses by edit
 * distance, and told `inbox --unread` to use --thread. The error names the option meant, or where send's argument goes;
 * the exit code is the command's usage-error code (1 for client commands, 2 for the operator's); nothing is sent.
 */
import { ensureBuilt, runCli } from '../support/builtCli';
import { startTestServer, type TestServer } from '../support/httpServer';
import { allEvents } from '../support/fixtures';

let server: TestServer;
let tokens: Record<string, string>;
beforeAll(async () => {
  ensureBuilt();
  server = await startTestServer();
  tokens = await server.register(['@uo-a', '@uo-b', '@uo-c']);
});
afterAll(() => server.close());

const run = (args: string[]) =>
  runCli(args, { MAILBOX_URL: server.url, MAILBOX_TOKEN: tokens['@uo-a'], MAILBOX_DATA_DIR: '/nonexistent/mailbox-data' });

test.each([
  [['send', '@uo-b', 'hi', 'hello', '--prio', 'high'], '--prio', '(Did you mean --priority?)'],
  [['send', '@uo-b', 'hi', 'hello', '--prio=high'], '--prio=high', '(Did you mean --priority?)'],
  [['send', '@uo-b', 'hi', 'hello', '--idem', 'k1'], '--idem', '(Did you mean --idempotency-key?)'],
  [['send', '@uo-b', 'hi', 'hello', '--thread-id', 't'], '--thread-id', '(Did you mean --thread?)'],
  [['send', '@uo-b', 'hi', 'hello', '--threadId', 't'], '--threadId', '(Did you mean --thread?)'],
  [['send', '@uo-b', 'hi', 'hello', '--in-reply-to', 'x'], '--in-reply-to', '(Did you mean --reply-to?)'],
  [['send', '@uo-b', 'hi', 'hello', '--deadline', '1h'], '--deadline', '(Did you mean --expects-reply-by?)'],
  [
    ['send', '--recipient', '@uo-b', 'hi', 'hello'],
    '--recipient',
    '(the recipients are the first arguments, not an option: mailbox send @b @c "subject" "body")',
  ],
  [
    ['send', '--to', '@uo-b', '@uo-c', 'hi', 'hello'],
    '--to',
    '(the recipients are the first arguments, not an option: mailbox send @b @c "subject" "body")',
  ],
  [
    ['send', '@uo-b', '--subject', 'hi', 'hello'],
    '--subject',
    '(the subject is the argument after the recipients: mailbox send @b "subject" "body")',
  ],
  [['inbox', '--unread'], '--unread', '(Did you mean --status unread?)'],
  [['inbox', '--sender', '@uo-b'], '--sender', '(Did you mean --from?)'],
  [['inbox', '--state', 'unread'], '--state', '(Did you mean --status?)'],
  [['inbox', '-n', '5'], '-n', '(Did you mean --limit?)'],
  [['task', 'list', '--status', 'Working'], '--status', '(Did you mean --state?)'],
  [['read', '--mark-all'], '--mark-all', '(Did you mean --all?)'],
])('mailbox %j: names the option meant, exit code 1, nothing sent', async (args, flag, meant) => {
  const before = await server.eventCount();
  const result = await run(args);
  expect(result.stderr.trimEnd().split('\n')).toEqual([`error: unknown option '${flag}'`, meant, '(run with --help for usage)']);
  expect([result.code, result.stdout]).toEqual([1, '']);
  expect(await server.eventCount()).toBe(before);
});

test.each([
  [['audit', 'replay', '--after', '3'], '--after', '(Did you mean --from?)'],
  [['serve', '--dir', '/tmp/x'], '--dir', '(Did you mean --data-dir?)'],
  [['heartbeat', '--once', '--metrics', '9464'], '--metrics', '(Did you mean --metrics-host or --metrics-port?)'],
])("mailbox %j (an operator's command): names the option meant, exit code 2", async (args, flag, meant) => {
  const result = await run(args);
  expect(result.stderr.trimEnd().split('\n')).toEqual([`error: unknown option '${flag}'`, meant, '(run with --help for usage)']);
  expect(result.code).toBe(2);
});

// Neither a start of a real option nor a known word: commander's own answer, its near-miss suggestion kept.
test('an unknown option with nothing like it is refused as before; a near miss keeps commander suggestion', async () => {
  const unlike = await run(['inbox', '--total']);
  expect(unlike.stderr.trimEnd().split('\n')).toEqual(["error: unknown option '--total'", '(run with --help for usage)']);
  expect(unlike.code).toBe(1);
  const near = await run(['send', '@uo-b', 'hi', 'hello', '--priorty', 'high']);
  expect(near.stderr).toContain("error: unknown option '--priorty'\n(Did you mean --priority?)\n");
  const before = await server.eventCount();
  expect((await run(['send', '@uo-b', 'hi', 'hello', '--priority', 'high'])).code).toBe(0);
  expect(await server.eventCount()).toBeGreaterThan(before);
});

// `mailbox agent rotate @b` (the event is AgentTokenRotated, the library's call rotateToken) was told "Did you mean
// retire?" by commander's edit distance: a retirement is for good. It names `token` now, and says what retire does.
test.each([
  ['rotate', '(Did you mean token? mailbox agent token <identity> gives the agent a new token; retire ends the agent for good)'],
  [
    'reset-token',
    '(Did you mean token? mailbox agent token <identity> gives the agent a new token; retire ends the agent for good)',
  ],
  ['register', '(Did you mean add?)'],
  ['ls', '(Did you mean list?)'],
])('mailbox agent %s names the subcommand meant; nothing is written', async (word, meant) => {
  const before = (await allEvents(server.mailbox)).length;
  const result = await runCli(['agent', word, '@uo-b'], {
    MAILBOX_URL: server.url,
    MAILBOX_DATA_DIR: '/nonexistent/mailbox-data',
  });
  expect(result.stderr.trimEnd().split('\n')).toEqual([`error: unknown command '${word}'`, meant, '(run with --help for usage)']);
  expect(result.stdout).toBe('');
  expect(result.code).toBe(1);
  expect((await allEvents(server.mailbox)).length).toBe(before);
  const b = await server.mailbox.as(tokens['@uo-b']); // its token still works: neither retired nor given a new one
  await expect(b.unreadCount()).resolves.toMatchObject({ unread: expect.any(Number) });
});
