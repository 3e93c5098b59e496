/**
 * A CLI option that takes one value, given twice with different values, is refused: commander kept the last and
 * dropped the other without a word, so `send ... --priority high --priority low` sent a low-priority message.
 * Now it is a usage error naming the option and both values (exit code 1), and nothing is written; three agents,
 * so that neither recipient receives anything. Options meant to repeat (`--tag`) still collect every value.
 */
import { CommanderError, type Command } from 'commander';
import { buildProgram } from '../../src/cli/main';
import { startTestServer, type TestServer } from '../support/httpServer';

let server: TestServer;
let t: Record<string, string>;
let out: string[];
let err: string[];

beforeAll(async () => {
  server = await startTestServer();
  t = await server.register(['@ann', '@ben', '@cy']);
});
afterAll(() => server.close());
beforeEach(() => {
  jest.spyOn(process.stdout, 'write').mockImplementation((chunk) => (out.push(String(chunk)), true));
  jest.spyOn(process.stderr, 'write').mockImplementation((chunk) => (err.push(String(chunk)), true));
  process.exitCode = undefined;
});
afterEach(() => {
  jest.restoreAllMocks();
  process.exitCode = undefined;
});

/** Usage errors throw instead of exiting the process: each subcommand needs its own exitOverride (it is not inherited afterwards). */
const throwingUsageErrors = (command: Command): Command => {
  command.exitOverride();
  command.commands.forEach(throwingUsageErrors);
  return command;
};

/** Runs the CLI as `token`; a usage error (commander's, thrown under exitOverride) is returned as its exit code. */
async function mailbox(token: string, ...args: string[]) {
  out = [];
  err = [];
  let exitCode: number;
  try {
    await throwingUsageErrors(buildProgram()).parseAsync(['node', 'mailbox', ...args, '--url', server.url, '--token', token]);
    exitCode = Number(process.exitCode ?? 0);
  } catch (error) {
    if (!(error instanceof CommanderError)) throw error;
    exitCode = error.exitCode;
  }
  return { out: out.join(''), err: err.join(''), exitCode };
}

const inboxOf = async (identity: string) =>
  (await server.call('GET', '/v1/messages', { token: t[identity] })).body.messages as Array<Record<string, unknown>>;

test('send --priority high --priority low: refused naming both values, nothing sent to either recipient', async () => {
  const before = await server.eventCount();
  const sent = await mailbox(t['@ann'], 'send', '@ben', '@cy', 'deploy', 'at 14:00', '--priority', 'high', '--priority', 'low');
  expect(sent.exitCode).toBe(1);
  expect(sent.out).toBe('');
  expect(sent.err).toContain(
    "error: option '--priority <priority>' was given twice ('high', then 'low'); it takes one value: give it once.",
  );
  expect(await server.eventCount()).toBe(before);
  expect(await inboxOf('@ben')).toEqual([]);
  expect(await inboxOf('@cy')).toEqual([]);
});

test('every single-valued option is held to it: --idempotency-key, inbox --limit and --status, --url', async () => {
  const before = await server.eventCount();
  const key = await mailbox(t['@ann'], 'send', '@ben', 's', 'b', '--idempotency-key', 'k1', '--idempotency-key', 'k2');
  expect(key.err).toContain("option '--idempotency-key <key>' was given twice ('k1', then 'k2')");
  const limit = await mailbox(t['@ben'], 'inbox', '--limit', '5', '--limit', '10');
  expect(limit.err).toContain("option '--limit <n>' was given twice ('5', then '10')");
  const status = await mailbox(t['@ben'], 'inbox', '--status', 'unread', '--status', 'read');
  expect(status.err).toContain("option '--status <status>' was given twice ('unread', then 'read')");
  // The helper adds --url server.url last: a different --url before it is the repeat.
  const url = await mailbox(t['@ben'], 'inbox', '--url', 'http://127.0.0.1:1');
  expect(url.err).toContain(`option '--url <url>' was given twice ('http://127.0.0.1:1', then '${server.url}')`);
  for (const result of [key, limit, status, url]) expect([result.exitCode, result.out]).toEqual([1, '']);
  expect(await server.eventCount()).toBe(before);
});

test('the same value twice is that value, and --tag still collects each occurrence', async () => {
  const sent = await mailbox(
    t['@ann'],
    'send',
    '@ben',
    '@cy',
    'review',
    'the diff',
    '--priority',
    'high',
    '--priority',
    'high',
    '--tag',
    'a',
    '--tag',
    'b',
  );
  expect(sent.exitCode).toBe(0);
  for (const recipient of ['@ben', '@cy']) {
    expect(await inboxOf(recipient)).toEqual([
      expect.objectContaining({ subject: 'review', priority: 'high', tags: ['a', 'b'] }),
    ]);
  }
  expect(await inboxOf('@ann')).toEqual([]);
});
