/**
 * docs/mcp.md's command blocks were checked by no test: its client configurations, its error envelope, the MCP
 * Inspector's calls and the curl and stdio lines could say what the server no longer does. Each is run here against a
 * real server (the page's 127.0.0.1:7420 is this test's server, `$TOKEN` / `mbx_...` an agent's token): the two client
 * configurations connect (the in-repo SDK client, over streamable HTTP and by launching `bin/mailbox.js mcp`) and list
 * the tools; the error envelope is what add_message answers; each Inspector line's method (and tool) is called with the
 * SDK client, as the Inspector calls it; the curl and stdio lines run through sh as a reader runs them, and answer
 * without error. A block the page adds needs its entry below.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ensureBuilt, MAILBOX_BIN, ROOT, runOf } from '../support/builtCli';
import { tempDir } from '../support/fixtures';
import { startTestServer, type TestServer } from '../support/httpServer';

const page = fs.readFileSync(path.join(ROOT, 'docs/mcp.md'), 'utf8');
const DOC_URL = 'http://127.0.0.1:7420';

/** The page's fenced blocks of `lang`, each as its text. */
const blocks = (lang: string): string[] =>
  [...page.matchAll(new RegExp(`^\`\`\`${lang}\\n([\\s\\S]*?)^\`\`\``, 'gm'))].map((block) => block[1]);

/** The commands of the page's sh blocks: continuation lines joined, comments left out. */
const shCommands = (): string[] =>
  blocks('sh')
    .flatMap((block) => block.replace(/\\\n\s*/g, '').split('\n'))
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));

let server: TestServer;
let token: string;
const clients: Client[] = [];
let shims: string;

beforeAll(async () => {
  ensureBuilt();
  server = await startTestServer();
  ({ '@a': token } = await server.register(['@a', '@b', '@c']));
  // `mailbox` as a reader has it on PATH: this checkout's bin/mailbox.js.
  shims = tempDir('mailbox-mcp-doc-bin-');
  fs.writeFileSync(path.join(shims, 'mailbox'), `#!/bin/sh\nexec "${process.execPath}" "${MAILBOX_BIN}" "$@"\n`, { mode: 0o755 });
}, 180_000); // a stale dist is built first (ensureBuilt), which may take longer than a test

afterAll(async () => {
  for (const client of clients) await client.close();
  await server.close();
});

const here = (text: string) => text.split(DOC_URL).join(server.url).split('mbx_...').join(token);
const connected = async (transport: StreamableHTTPClientTransport | StdioClientTransport): Promise<Client> => {
  const client = new Client({ name: 'mcp-doc-commands', version: '1.0.0' });
  await client.connect(transport);
  clients.push(client);
  return client;
};

test('the page has the blocks checked here (a block it adds needs its check)', () => {
  expect(blocks('json')).toHaveLength(3);
  expect(shCommands().map((command) => command.split(' ')[0])).toEqual(['npx', 'npx', 'curl', 'printf']);
});

test('the streamable HTTP client configuration connects and lists the thirteen tools', async () => {
  const config = JSON.parse(here(blocks('json')[0])).mcpServers.mailbox;
  expect(config.type).toBe('http');
  const client = await connected(
    new StreamableHTTPClientTransport(new URL(config.url), { requestInit: { headers: config.headers } }),
  );
  expect((await client.listTools()).tools).toHaveLength(13);
});

test('the stdio client configuration (node bin/mailbox.js mcp) connects and lists the thirteen tools', async () => {
  const config = JSON.parse(here(blocks('json')[1])).mcpServers.mailbox;
  expect([config.command, config.args[0].endsWith('/bin/mailbox.js'), config.args.slice(1)]).toEqual(['node', true, ['mcp']]);
  const client = await connected(
    new StdioClientTransport({
      command: process.execPath,
      args: [MAILBOX_BIN, ...config.args.slice(1)],
      env: { PATH: process.env.PATH ?? '', ...config.env },
      stderr: 'ignore',
    }),
  );
  expect((await client.listTools()).tools).toHaveLength(13);
});

test("the error envelope is add_message's to AGENT:gpt", async () => {
  const { message, ...envelope } = JSON.parse(blocks('json')[2]);
  const client = await connected(
    new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    }),
  );
  const answer = (await client.callTool({
    name: 'add_message',
    arguments: { to: envelope.to, subject: 'hi', body: 'x' },
  })) as { isError?: boolean; structuredContent?: any };
  expect(answer.isError).toBe(true);
  expect(answer.structuredContent).toMatchObject(envelope);
  expect(answer.structuredContent.message.startsWith(message.replace(/ \.\.\.$/, ''))).toBe(true);
});

test.each(shCommands().filter((command) => command.startsWith('npx @modelcontextprotocol/inspector')))(
  'the Inspector line %s: its call answers without error (made with the SDK client, as the Inspector makes it)',
  async (command) => {
    const url = /--cli (\S+)/.exec(command)![1];
    const header = /--header "Authorization: Bearer \$TOKEN"/.test(command);
    const method = /--method (\S+)/.exec(command)![1];
    expect([url, header, /--transport http/.test(command)]).toEqual([`${DOC_URL}/mcp`, true, true]);
    const client = await connected(
      new StreamableHTTPClientTransport(new URL(here(url)), { requestInit: { headers: { authorization: `Bearer ${token}` } } }),
    );
    if (method === 'tools/list') {
      expect((await client.listTools()).tools).toHaveLength(13);
      return;
    }
    expect(method).toBe('tools/call');
    const tool = /--tool-name (\S+)/.exec(command)![1];
    const answer = (await client.callTool({ name: tool, arguments: {} })) as { isError?: boolean; structuredContent?: any };
    expect([tool, answer.isError ?? false]).toEqual([tool, false]);
    expect(answer.structuredContent).toEqual(expect.any(Object));
  },
);

test.each(shCommands().filter((command) => !command.startsWith('npx ')))(
  'the line %s runs through sh and answers each request without error',
  async (command) => {
    const base = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('MAILBOX_')));
    const env = { ...base, PATH: `${shims}:${process.env.PATH}`, TOKEN: token };
    const run = await runOf(spawn('sh', ['-c', here(command)], { cwd: shims, env }));
    expect([run.code, run.stderr]).toEqual([0, expect.any(String)]);
    const answers = run.stdout
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => JSON.parse(line) as { id?: unknown; result?: any; error?: unknown });
    expect(answers.map((answer) => answer.error)).toEqual(answers.map(() => undefined));
    const listed = answers.find((answer) => answer.result?.tools !== undefined);
    expect(listed?.result.tools).toHaveLength(13);
  },
);
