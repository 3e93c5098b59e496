/**
 * An option that takes one of a few values, given another, was refused in commander's words: "error: option '--status
 * <status>' argument 'unreed' is invalid. Allowed choices are unread, read, all, archived." and "(run with --help for
 * usage)", with no word of the value meant, where the CLI's other value refusals name it ("not '10m': did you mean
 * 600?"). Now one line: the command, the option, the values it takes, what was given and, for a near miss (another
 * case, a typo, the start of one, a word used for one), the value meant (said, never taken). The exit code is the
 * command's usage-error code: 1 for a client command, 2 for the operator's. Nothing is sent, nothing written.
 */
import fs from 'node:fs';
import path from 'node:path';
import { ensureBuilt, runCli } from '../support/builtCli';
import { startTestServer, type TestServer } from '../support/httpServer';
import { ADMIN_TOKEN, tempDir } from '../support/fixtures';

let server: TestServer;
let tokens: Record<string, string>;
beforeAll(async () => {
  ensureBuilt();
  server = await startTestServer();
  tokens = await server.register(['@cv-a', '@cv-b', '@cv-c']);
});
afterAll(() => server.close());

const run = (args: string[], token = tokens['@cv-a']) =>
  runCli(args, { MAILBOX_URL: server.url, MAILBOX_TOKEN: token, MAILBOX_DATA_DIR: '/nonexistent/mailbox-data' });

test.each([
  [['inbox', '--status', 'unreed'], "mailbox inbox: '--status' takes unread, read, all or archived, not 'unreed'", 'unread'],
  [['inbox', '--status', 'Unread'], "mailbox inbox: '--status' takes unread, read, all or archived, not 'Unread'", 'unread'],
  [['inbox', '--status', 'new'], "mailbox inbox: '--status' takes unread, read, all or archived, not 'new'", 'unread'],
  [['inbox', '--status', 'arch'], "mailbox inbox: '--status' takes unread, read, all or archived, not 'arch'", 'archived'],
  [['inbox', '--priority', 'urgent'], "mailbox inbox: '--priority' takes low, normal or high, not 'urgent'", 'high'],
  [['read', '--all', '--priority', 'hgih'], "mailbox read: '--priority' takes low, normal or high, not 'hgih'", 'high'],
  [['task', 'list', '--view', 'mine'], "mailbox task list: '--view' takes assigned, claimable or sent, not 'mine'", 'assigned'],
  [
    ['task', 'list', '--view', 'claim'],
    "mailbox task list: '--view' takes assigned, claimable or sent, not 'claim'",
    'claimable',
  ],
])('mailbox %j: one line with the values and the one meant, exit code 1, nothing sent', async (args, said, meant) => {
  const before = await server.eventCount();
  const result = await run(args);
  const flag = said.split("'")[1];
  expect(result.stderr).toBe(`error: ${said}: did you mean ${flag} ${meant}?\n`);
  expect([result.code, result.stdout]).toEqual([1, '']);
  expect(await server.eventCount()).toBe(before);
});

test('a value like none of them: the values alone, no guess; given right, the same command runs', async () => {
  const before = await server.eventCount();
  const result = await run(['inbox', '--status', 'pending']);
  expect(result.stderr).toBe("error: mailbox inbox: '--status' takes unread, read, all or archived, not 'pending'\n");
  expect(result.code).toBe(1);
  expect(await server.eventCount()).toBe(before);
  const listed = await run(['inbox', '--status', 'unread']);
  expect([listed.code, listed.stderr]).toEqual([0, '']);
});

test('agent add --role: refused before anything is registered (the admin is a token, not a role: no guess)', async () => {
  const env = { MAILBOX_URL: server.url, MAILBOX_ADMIN_TOKEN: ADMIN_TOKEN, MAILBOX_DATA_DIR: '/nonexistent/mailbox-data' };
  const before = await server.eventCount();
  const near = await runCli(['agent', 'add', '@cv-d', '--role', 'auditr'], env);
  expect(near.stderr).toBe(
    "error: mailbox agent add: '--role' takes agent or auditor, not 'auditr': did you mean --role auditor?\n",
  );
  expect([near.code, near.stdout]).toEqual([1, '']);
  const admin = await runCli(['agent', 'add', '@cv-d', '--role', 'admin'], env);
  expect(admin.stderr).toBe("error: mailbox agent add: '--role' takes agent or auditor, not 'admin'\n");
  expect(admin.code).toBe(1);
  expect(await server.eventCount()).toBe(before);
  const agents = await server.call('GET', '/v1/agents', { token: tokens['@cv-b'] });
  expect(agents.body.agents.map((agent: { identity: string }) => agent.identity)).not.toContain('@cv-d');
});

test("heartbeat --projector (an operator's command): the same line, exit code 2, nothing created", async () => {
  const dataDir = path.join(tempDir('mailbox-choices-'), 'data');
  const result = await runCli(['heartbeat', '--once', '--projector', 'yes'], { MAILBOX_DATA_DIR: dataDir });
  expect(result.stderr).toBe(
    "error: mailbox heartbeat: '--projector' takes auto, on or off, not 'yes': did you mean --projector on?\n",
  );
  expect([result.code, result.stdout]).toEqual([2, '']);
  expect(fs.existsSync(dataDir)).toBe(false);
});
