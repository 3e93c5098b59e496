/**
 * Text a reader must read (a subject; a task's reason and question) is refused when it is blank: spaces, tabs,
 * line breaks or invisible characters (a zero-width space, a bidi control) only say nothing, as empty text says
 * nothing. Over HTTP, MCP and the CLI: 400 VALIDATION_FAILED naming the field and the valid form, and no event
 * written. Text with something in it is kept as sent, never trimmed.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { buildProgram } from '../../src/cli/main';
import { startTestServer, type TestServer } from '../support/httpServer';

let server: TestServer;
let t: Record<string, string>;
let mcp: Client;

beforeAll(async () => {
  server = await startTestServer();
  t = await server.register(['@a', '@b']);
  mcp = new Client({ name: 'blank-text-e2e', version: '1.0.0' });
  await mcp.connect(
    new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${t['@a']}` } },
    }),
  );
});
afterAll(async () => {
  await mcp.close();
  await server.close();
});

const BLANKS = ['   ', '\t', '\n', ' \r\n\t '];
const SUBJECT_FORM = 'give a short summary of 1-200 characters, at least one of them visible (not whitespace)';
const BLANK = 'must not be blank (only spaces, tabs, line breaks or invisible characters such as U+200B zero-width space)';
// Text of invisible characters shows nothing, as whitespace shows nothing: a zero-width space, a word joiner, a byte
// order mark, bidi controls (a right-to-left mark, an isolate), zero-width joiners, alone or among spaces.
const INVISIBLES = ['\u200b', '\u2060', '\ufeff', '\u200f\u2067\u2069', '\u061c', ' \u200b\u200d\u200c ', '\u00ad'];

describe('a blank subject', () => {
  test.each(BLANKS)(
    'POST /v1/messages with subject %j: 400 VALIDATION_FAILED naming subject and its form, nothing written',
    async (subject) => {
      const before = await server.eventCount();
      const response = await server.call('POST', '/v1/messages', { token: t['@a'], body: { to: '@b', subject, body: 'x' } });
      expect(response.status).toBe(400);
      expect(response.body).toMatchObject({ code: 'VALIDATION_FAILED', field: 'subject' });
      expect(response.body.message).toBe(`add_message: 'subject' ${BLANK}: ${SUBJECT_FORM}`);
      expect(await server.eventCount()).toBe(before);
    },
  );

  test('MCP add_message: the same envelope as the tool error, nothing written', async () => {
    const before = await server.eventCount();
    const result = (await mcp.callTool({ name: 'add_message', arguments: { to: '@b', subject: ' \t ', body: 'x' } })) as {
      isError?: boolean;
      structuredContent?: Record<string, unknown>;
    };
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toMatchObject({ code: 'VALIDATION_FAILED', field: 'subject' });
    expect(result.structuredContent!.message).toContain(SUBJECT_FORM);
    expect(await server.eventCount()).toBe(before);
  });

  test('mailbox send: the error printed, exit code 1, nothing written', async () => {
    const err: string[] = [];
    jest.spyOn(process.stdout, 'write').mockImplementation(() => true);
    jest.spyOn(process.stderr, 'write').mockImplementation((chunk) => (err.push(String(chunk)), true));
    const before = await server.eventCount();
    try {
      process.exitCode = undefined;
      await buildProgram()
        .exitOverride()
        .parseAsync(['node', 'mailbox', 'send', '@b', '   ', 'x', '--url', server.url, '--token', t['@a']]);
      expect(process.exitCode).toBe(1);
    } finally {
      process.exitCode = undefined;
      jest.restoreAllMocks();
    }
    expect(err.join('')).toContain(`'subject' ${BLANK}: ${SUBJECT_FORM}`);
    expect(await server.eventCount()).toBe(before);
  });

  const codePoints = (text: string) => [...text].map((c) => `U+${c.codePointAt(0)!.toString(16).toUpperCase()}`).join(' ');
  test.each(INVISIBLES.map((subject) => [codePoints(subject), subject]))(
    'subject %s, only invisible characters: 400 over HTTP and the same tool error over MCP, nothing written',
    async (_, subject) => {
      const before = await server.eventCount();
      const response = await server.call('POST', '/v1/messages', { token: t['@a'], body: { to: '@b', subject, body: 'x' } });
      expect(response.status).toBe(400);
      expect(response.body).toMatchObject({ code: 'VALIDATION_FAILED', field: 'subject' });
      expect(response.body.message).toBe(`add_message: 'subject' ${BLANK}: ${SUBJECT_FORM}`);
      const result = (await mcp.callTool({ name: 'add_message', arguments: { to: '@b', subject, body: 'x' } })) as {
        isError?: boolean;
        structuredContent?: Record<string, unknown>;
      };
      expect(result.isError).toBe(true);
      expect(result.structuredContent).toMatchObject({
        code: 'VALIDATION_FAILED',
        field: 'subject',
        message: response.body.message,
      });
      expect(await server.eventCount()).toBe(before);
    },
  );

  test('a visible character among invisible ones is something to read: kept as sent', async () => {
    const subject = '\u200b\u2067ok\u2069';
    const sent = await server.call('POST', '/v1/messages', { token: t['@a'], body: { to: '@b', subject, body: 'x' } });
    expect(sent.status).toBe(201);
    const read = await server.call('GET', `/v1/messages/${sent.body.messageId}`, { token: t['@b'] });
    expect(read.body.subject).toBe(subject);
  });

  test('a subject with something in it is kept as sent: its spaces are not trimmed', async () => {
    const subject = '  padded\tsubject  ';
    const sent = await server.call('POST', '/v1/messages', { token: t['@a'], body: { to: '@b', subject, body: 'x' } });
    expect(sent.status).toBe(201);
    const read = await server.call('GET', `/v1/messages/${sent.body.messageId}`, { token: t['@b'] });
    expect(read.body.subject).toBe(subject);
  });

  test('an empty subject still says empty, once', async () => {
    const response = await server.call('POST', '/v1/messages', { token: t['@a'], body: { to: '@b', subject: '', body: 'x' } });
    expect(response.body.message).toBe("add_message: 'subject' must not be empty");
  });

  test('the documents advertise it: pattern \\S in openapi.json and the MCP tools, and the descriptions name invisible text', async () => {
    const openapi = await server.call('GET', '/openapi.json');
    const send = openapi.body.paths['/v1/messages'].post.requestBody.content['application/json'].schema;
    expect(send.properties.subject).toMatchObject({ minLength: 1, maxLength: 200, pattern: '\\S' });
    const { tools } = await mcp.listTools();
    const properties = (name: string) => tools.find((tool) => tool.name === name)!.inputSchema.properties as Record<string, any>;
    const described = [properties('add_message').subject, properties('update_task').reason, properties('update_task').note];
    for (const property of described) {
      expect(property).toMatchObject({ pattern: '\\S' });
      expect(property.description).toContain('not only whitespace or invisible characters');
    }
  });
});

describe("a task's required reason or question, blank", () => {
  let taskId: string;
  beforeAll(async () => {
    const sent = await server.call('POST', '/v1/messages', {
      token: t['@a'],
      body: { to: '@b', subject: 'review', body: 'x', task: { state: 'submitted' } },
    });
    taskId = sent.body.messageId;
  });

  test.each([
    ['rejected', 'reason', 'say why in words (1-2000 characters)'],
    ['failed', 'reason', 'say why in words (1-2000 characters)'],
    ['input-required', 'note', 'write the message in words (1-8000 characters)'],
  ])('to %s with a blank %s: 400 VALIDATION_FAILED naming it, nothing written', async (to, field, form) => {
    if (to === 'failed') await server.call('POST', `/v1/tasks/${taskId}/transition`, { token: t['@b'], body: { to: 'working' } });
    const before = await server.eventCount();
    for (const blank of [' \n ', '\u200b', '\u2060\ufeff\u202e']) {
      const response = await server.call('POST', `/v1/tasks/${taskId}/transition`, {
        token: t['@b'],
        body: { to, [field]: blank },
      });
      expect([blank, response.status]).toEqual([blank, 400]);
      expect(response.body).toMatchObject({ code: 'VALIDATION_FAILED', field });
      expect(response.body.message).toContain(`'${field}' ${BLANK}: ${form}`);
    }
    expect(await server.eventCount()).toBe(before);
  });
});
