/**
 * `mailbox mcp` starts with one line on stderr (an MCP client's log: its user sees nothing else) saying whom the server
 * takes the token for, or why the tool calls will fail; it serves MCP in every case (stdin ends it here).
 */
import { ensureBuilt, runCli } from '../support/builtCli';
import { freePort } from '../support/redisServer';
import { startTestServer, type TestServer } from '../support/httpServer';

let server: TestServer;
let tokens: Record<string, string>;
beforeAll(async () => {
  ensureBuilt();
  server = await startTestServer();
  tokens = { ...(await server.register(['@a', '@b', '@c'])), ...(await server.register(['@ops'], 'auditor')) };
}, 120_000);
afterAll(async () => {
  await server?.close();
});

const startLineOf = async (env: Record<string, string>) => {
  const run = await runCli(['mcp'], env);
  expect(run.stdout).toBe(''); // stdout is the protocol's
  return { code: run.code, line: run.stderr.trim() };
};

test('an agent token: the line names the agent the server takes it for', async () => {
  for (const identity of ['@a', '@b', '@c'])
    expect(await startLineOf({ MAILBOX_URL: server.url, MAILBOX_TOKEN: tokens[identity] })).toEqual({
      code: 0,
      line: `mailbox mcp: serving MCP on stdio for ${server.url} as ${identity}`,
    });
});

test('a token the server refuses: said at start, with the code every tool call will answer', async () => {
  const { code, line } = await startLineOf({ MAILBOX_URL: server.url, MAILBOX_TOKEN: `${tokens['@a']}x` });
  expect(code).toBe(0);
  expect(line).toMatch(/^mailbox mcp: .+ Serving MCP anyway: tool calls answer UNAUTHENTICATED until this is fixed\.$/);
  expect(line).not.toContain('\n');
});

test("an auditor's or the admin's token: said to be no agent's, with the variable to set", async () => {
  expect((await startLineOf({ MAILBOX_URL: server.url, MAILBOX_TOKEN: tokens['@ops'] })).line).toBe(
    `mailbox mcp: serving MCP on stdio for ${server.url} with the token of auditor @ops, not an agent's: the tools send ` +
      "and read an agent's mail, so they answer FORBIDDEN; set MAILBOX_TOKEN to the agent's token (an admin gets one " +
      'with `mailbox agent add @<identity>`).',
  );
  expect((await startLineOf({ MAILBOX_URL: server.url, MAILBOX_TOKEN: server.adminToken })).line).toMatch(
    /^mailbox mcp: serving MCP on stdio for \S+ with the admin token, not an agent's: /,
  );
});

test('no server at the URL: said at start, UNAVAILABLE until it answers', async () => {
  const url = `http://127.0.0.1:${await freePort()}`;
  const { code, line } = await startLineOf({ MAILBOX_URL: url, MAILBOX_TOKEN: tokens['@a'] });
  expect(code).toBe(0);
  expect(line).toMatch(
    new RegExp(
      `^mailbox mcp: Cannot reach the mailbox at ${url} \\(ECONNREFUSED\\); .+ Serving MCP anyway: tool calls answer UNAVAILABLE until it answers\\.$`,
    ),
  );
});

test('no token: refused as before, before any request', async () => {
  const { line } = await startLineOf({ MAILBOX_URL: server.url });
  expect(line).toMatch(
    /^mailbox mcp: mailbox mcp has no agent token: .+ Serving MCP anyway: every tool call answers UNAUTHENTICATED\.$/,
  );
});

// "MAILBOX_TOKEN": "${AGENT_TOKEN}" in an MCP client's env with AGENT_TOKEN unset: told "has no agent token: set
// MAILBOX_TOKEN" while it was set; a blank one was sent to the server as a token.
test.each([
  ['', 'set but empty \\(a \\$\\{VARIABLE\\} substituted while VARIABLE was unset\\?\\)'],
  ['  ', 'blank \\(only spaces\\)'],
])('MAILBOX_TOKEN=%j: said as the empty variable it is, before any request', async (value, what) => {
  const { line } = await startLineOf({ MAILBOX_URL: server.url, MAILBOX_TOKEN: value });
  expect(line).toMatch(
    new RegExp(
      `^mailbox mcp: mailbox mcp's token \\(MAILBOX_TOKEN or --token\\) is ${what}: set MAILBOX_TOKEN .+ Serving MCP anyway: every tool call answers UNAUTHENTICATED\\.$`,
    ),
  );
});
