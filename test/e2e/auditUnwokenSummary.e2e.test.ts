/**
 * `mailbox audit unwoken`'s closing line says what it counted: the messages in the unwoken alarm, not every message
 * that woke nobody. It read "0 message(s) woke nobody within 60000 ms." over a log where a message had woken nobody
 * (its recipients poll: they read it without a wake, so it needs none), and "1 message(s) woke nobody" where two had.
 * A real server on the embedded default (SQLite), an injected clock; the CLI reads the data dir and, with an
 * auditor's token, the API.
 */
import { runAuditCli as audit } from '../support/auditCli';
import { startClockedApiServer, type ClockedApiServer } from '../support/clockedApiServer';
import { apiCaller } from '../support/apiCalls';
import { ADMIN_TOKEN, tempDir } from '../support/fixtures';

const T0 = Date.parse('2020-01-01T12:00:00.000Z'); // in the past: the CLI reads the real clock
const SLA = 60_000;
let now = T0;

let server: ClockedApiServer;
const dataDir = tempDir('mailbox-unwoken-summary-');
beforeAll(async () => {
  server = await startClockedApiServer(() => new Date(now), { eventStoreUrl: undefined, dataDir, wakeSlaMs: SLA });
});
afterAll(() => server.close());

const call = apiCaller(() => server.url);

test('the summary counts the unwoken alarm and says so: mail its recipients saw or read woke nobody, and is not in it', async () => {
  const tokens: Record<string, string> = {};
  for (const identity of ['@a', '@b', '@c'])
    tokens[identity] = (await call('POST', '/v1/agents', ADMIN_TOKEN, { identity })).body.token;
  const auditor = (await call('POST', '/v1/agents', ADMIN_TOKEN, { identity: '@aud', role: 'auditor' })).body.token;
  const send = async (to: string | string[], subject: string) => {
    const sent = await call('POST', '/v1/messages', tokens['@a'], { to, subject, body: '.' });
    expect(sent.status).toBe(201);
    return sent.body.messageId as string;
  };
  // Nobody has a wake stream: no message wakes anyone. @b and @c read the first (polling); the second stays unread.
  const read = await send(['@b', '@c'], 'read by both');
  for (const identity of ['@b', '@c'])
    expect((await call('POST', `/v1/messages/${read}/read`, tokens[identity])).status).toBe(200);
  now = T0 + SLA + 1;
  expect(await server.mailbox.runner.waitFor((await server.mailbox.eventStore.headPosition())!, 5000)).toBe(true);

  const sources: Array<{ env: NodeJS.ProcessEnv; args: string[] }> = [
    { env: { MAILBOX_DATA_DIR: dataDir }, args: [] },
    { env: { MAILBOX_AUDIT_TOKEN: auditor }, args: ['--url', server.url] },
  ];
  const unwoken = async ({ env, args }: { env: NodeJS.ProcessEnv; args: string[] }) => {
    // The CLI's clock is the real one: an SLA of 1 ms puts every message of 2020 past it as well.
    const run = await audit(['unwoken', '--sla', '1', ...args], env);
    return { code: run.code, lines: run.stdout.trim().split('\n') };
  };
  const summary = (count: number) =>
    `${count} message(s) in the unwoken alarm: each expected a wake, woke none of its recipients within 1 ms, and has a ` +
    'recipient due a wake that neither saw nor read it (mail that every recipient due a wake saw or read needs no wake; ' +
    'mail sent with wakeSuppressed, or to no registered agent, expects none: neither is counted).';
  for (const source of sources) {
    const ledger = (await call('GET', `/v1/messages/${read}/delivery`, tokens['@a'])).body;
    expect(ledger.summary).toMatchObject({ recipients: 2, woken: 0, read: 2 }); // it woke nobody
    expect(await unwoken(source)).toEqual({ code: 0, lines: [summary(0)] });
  }

  const unread = await send(['@b', '@c'], 'read by nobody');
  for (const source of sources) {
    const { code, lines } = await unwoken(source);
    expect(code).toBe(1);
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(new RegExp(`^${unread}  sent .* by @a to 2 recipient\\(s\\): woke nobody; not escalated yet$`));
    expect(lines[1]).toBe(summary(1));
  }
});
