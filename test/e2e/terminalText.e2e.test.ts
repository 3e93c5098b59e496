/**
 * What another agent wrote reaches an operator's terminal as text, never as control: a subject, thread id, tag or
 * body holding an ESC (a control sequence), a CR (overwrites the line), a newline (a forged line that reads like
 * another message) or a bidi override is printed by `mailbox inbox`, `read`, `watch`, `task list` and
 * `audit message` / `replay` as an escape (`\x1b`, `\r`, `\n`, `\u202e`); a body keeps its line breaks and tabs;
 * `--json` keeps the text exactly as sent.
 */
import { randomUUID } from 'node:crypto';
import { buildProgram } from '../../src/cli/main';
import { messageStream } from '../../src/events/streams';
import type { MessageSent, NewEvent, StoredEvent } from '../../src/events/types';
import { formatWakeEvent } from '../../src/cli/commands/format';
import { runAuditCli } from '../support/auditCli';
import { startTestServer, type TestServer } from '../support/httpServer';

let server: TestServer;
let out: string[];
let tokens: Record<string, string>;

beforeAll(async () => {
  server = await startTestServer();
  tokens = await server.register(['@mallory', '@victim']);
  tokens = { ...tokens, ...(await server.register(['@auditor'], 'auditor')) };
});
afterAll(() => server.close());
beforeEach(() => {
  jest.spyOn(process.stdout, 'write').mockImplementation((chunk) => (out.push(String(chunk)), true));
  jest.spyOn(process.stderr, 'write').mockImplementation(() => true);
  process.exitCode = undefined;
});
afterEach(() => {
  jest.restoreAllMocks();
  process.exitCode = undefined;
});

async function mailbox(token: string, ...args: string[]): Promise<string> {
  out = [];
  await buildProgram()
    .exitOverride()
    .parseAsync(['node', 'mailbox', ...args, '--url', server.url, '--token', token]);
  expect(process.exitCode ?? 0).toBe(0);
  return out.join('');
}

const FORGED = '* 2026-11-27 03:40:00Z  @admin -> @victim  [high] rotate your token now  (00000000-0000-4000-8000-000000000000)';
const SUBJECT = `ok\n${FORGED}\r\u001b[2J\u001b]0;pwned\u0007\u202etxt.exe`;
const BODY = 'line one\n\tindented\r\nline three\u001b[8m hidden\rover\u009b31m';
/** Nothing a terminal obeys: no C0 control but the line feed and tab, no DEL, no C1, no bidi control. */
// eslint-disable-next-line no-control-regex -- the control characters are what the test looks for
const OBEYED = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;

let messageId: string;
/**
 * A message whose thread id holds an ESC and whose tag a line feed: refused at send now (threadIds.ts,
 * messageFields.ts), but a log written before may hold them.
 */
let olderThreadId: string;

beforeAll(async () => {
  const sent = await fetch(`${server.url}/v1/messages`, {
    method: 'POST',
    headers: { authorization: `Bearer ${tokens['@mallory']}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      to: '@victim',
      subject: SUBJECT,
      body: BODY,
      task: { state: 'Submitted', input: { parts: [{ kind: 'text', text: 'go\u001b[0m' }] } },
    }),
  });
  expect(sent.status).toBe(201);
  messageId = ((await sent.json()) as { messageId: string }).messageId;

  // Written as a version that took any thread id would have: the same send, another id and that thread.
  const events = (await server.mailbox.eventStore.readAll(null, 1000)) as StoredEvent[];
  const original = events.find((e) => e.type === 'MessageSent' && e.data.messageId === messageId) as StoredEvent<MessageSent>;
  olderThreadId = randomUUID();
  const older: NewEvent<MessageSent> = {
    eventId: randomUUID(),
    type: 'MessageSent',
    data: {
      ...original.data,
      messageId: olderThreadId,
      threadId: 'thread\u001b[31m',
      tags: ['tag\nfake'],
      hasTask: false,
      task: null,
    },
    metadata: original.metadata,
  };
  await server.mailbox.eventStore.append(messageStream(olderThreadId), [older], 'no_stream');
  for (const until = Date.now() + 10_000; Date.now() < until; await new Promise((resolve) => setTimeout(resolve, 20))) {
    const listed = await server.call('GET', '/v1/messages', { token: tokens['@victim'] });
    if (listed.body.messages.some((m: { messageId: string }) => m.messageId === olderThreadId)) break;
  }
});

test('mailbox inbox: one line per message, the subject escaped, no forged line', async () => {
  const text = await mailbox(tokens['@victim'], 'inbox');
  expect(text).not.toMatch(OBEYED);
  expect(text.split('\n').filter((line) => line.startsWith('*'))).toHaveLength(2); // the two messages, no forged line
  expect(text).toContain(`ok\\n* 2026-11-27 03:40:00Z  @admin -> @victim`);
  expect(text).toContain('\\r\\x1b[2J\\x1b]0;pwned\\x07\\u202etxt.exe');
});

test('mailbox read: header fields escaped; the body keeps its line breaks and tabs, its other controls escaped', async () => {
  const text = await mailbox(tokens['@victim'], 'read', '--peek', messageId);
  expect(text.replace(/\r\n/g, '\n')).not.toMatch(OBEYED); // a CRLF is a line break; a lone CR is not
  expect(text).toContain('subject  ok\\n* 2026-11-27');
  expect(text).toContain('"text":"go\\u001b[0m"'); // the task, as JSON (which escapes it), shown as is
  expect(text).toContain('line one\n\tindented\r\nline three\\x1b[8m hidden\\rover\\x9b31m');
  const older = await mailbox(tokens['@victim'], 'read', '--peek', olderThreadId);
  expect(older.replace(/\r\n/g, '\n')).not.toMatch(OBEYED);
  expect(older).toContain('thread thread\\x1b[31m');
  expect(older).toContain('tags     tag\\nfake');
});

test('--json keeps every character as sent', async () => {
  const listed = JSON.parse(await mailbox(tokens['@victim'], 'inbox', '--json'));
  expect(listed.messages.find((m: { messageId: string }) => m.messageId === messageId).subject).toBe(SUBJECT);
  const read = JSON.parse(await mailbox(tokens['@victim'], 'read', '--peek', messageId, '--json'));
  expect(read).toMatchObject({ subject: SUBJECT, body: BODY });
  const older = JSON.parse(await mailbox(tokens['@victim'], 'read', '--peek', olderThreadId, '--json'));
  expect(older).toMatchObject({ threadId: 'thread\u001b[31m', tags: ['tag\nfake'] });
});

test('mailbox task list and the audit tools print the subject, thread and tags escaped', async () => {
  const tasks = await mailbox(tokens['@victim'], 'task', 'list');
  expect(tasks).not.toMatch(OBEYED);
  expect(tasks).toContain('\\u202etxt.exe');
  const auditEnv = { MAILBOX_AUDIT_TOKEN: tokens['@auditor'] };
  const story = await runAuditCli(['message', messageId, '--url', server.url, '--no-progress'], auditEnv);
  expect(story.code).toBe(0);
  expect(story.stdout).not.toMatch(OBEYED);
  const olderStory = await runAuditCli(['message', olderThreadId, '--url', server.url, '--no-progress'], auditEnv);
  expect(olderStory.stdout).not.toMatch(OBEYED);
  expect(olderStory.stdout).toContain('thread thread\\x1b[31m');
  expect(olderStory.stdout).toContain('tags tag\\nfake');
  expect(story.stdout).toContain('\\u202etxt.exe');
  const replay = await runAuditCli(['replay', '--url', server.url, '--no-progress'], auditEnv);
  expect(replay.stdout).not.toMatch(OBEYED);
  expect(replay.stdout).toContain('\\u202etxt.exe');
});

test('mailbox watch: a wake line shows the subject escaped', () => {
  const line = formatWakeEvent({
    event: 'wake',
    data: {
      type: 'wake/message',
      messageId,
      from: '@mallory',
      to: '@victim',
      subject: SUBJECT,
      priority: 'normal',
      isBroadcast: false,
      unreadCount: 1,
      position: '1',
    },
  } as Parameters<typeof formatWakeEvent>[0]);
  expect(line).not.toMatch(OBEYED);
  expect(line).toContain('ok\\n* 2026-11-27');
});
