/**
 * An EventStoreDB user that may read and write the mailbox's streams but not read $all (EventStoreDB lets only $admins
 * read $all by default): the views, /readyz and the audit are built from $all, so such a mailbox cannot work. At start
 * it was waited out for MAILBOX_STARTUP_RETRY_MS, then said to be "unreachable ... start it" (it had answered every
 * time); while running, /readyz said 503 "Not ready" with Retry-After, as for an outage. Now the start refuses at once
 * with one line naming the permission and the remedy, and /readyz is "Operator action needed" naming them, with no
 * Retry-After. The test double refuses $all reads only (faults.denyReadsOfAll), as the node's access list would.
 */
import { parseConfig } from '../../src/config';
import { startServer, type RunningServer } from '../../src/server';
import { isStartupError } from '../../src/startupError';
import { ADMIN_TOKEN, silentLogger } from '../support/fixtures';
import { EsdbDouble } from '../support/esdbDouble/esdbDouble';
import { recordingLogger } from '../support/recordingLogger';
import { waitFor } from '../support/waitFor';

let double: EsdbDouble;
let server: RunningServer | null = null;

beforeEach(async () => {
  double = await EsdbDouble.start();
});
afterEach(async () => {
  await server?.close();
  server = null;
  await double.close();
});

const configOf = (startupRetryMs: number) =>
  parseConfig({
    port: 0,
    adminToken: ADMIN_TOKEN,
    logLevel: 'silent',
    eventStoreUrl: `${double.url}&defaultDeadline=5000`,
    views: 'memory',
    startupRetryMs,
  });

async function call(method: string, path: string, token?: string, body?: unknown) {
  const response = await fetch(server!.url + path, {
    method,
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, retryAfter: response.headers.get('retry-after'), body: JSON.parse(await response.text()) };
}

test('refused reading $all at start: one line at once naming the permission and its remedy, nothing written', async () => {
  double.faults.denyReadsOfAll();
  // Two minutes of retries allowed: a refusal waited out would outlast the test's own deadline.
  const refused = await startServer(configOf(120_000), { logger: silentLogger, print: () => undefined }).then(
    () => null,
    (error: unknown) => error,
  );
  expect(isStartupError(refused)).toBe(true);
  const message = (refused as Error).message;
  expect(message).not.toContain('\n');
  expect(message).toMatch(/^Operator action needed: EventStoreDB at 127\.0\.0\.1:\d+ answered, and refused: /);
  expect(message).toContain("refused the mailbox's user the right to read $all");
  expect(message).toContain('Give the user in MAILBOX_EVENTSTORE_URL read access to $all');
  expect(message).not.toMatch(/unreachable|start it|request was not applied/);
  expect(double.log.appendRequests).toBe(0);
}, 30_000);

test('credentials refused at start (every call): one line at once naming the user and password, not "unreachable"', async () => {
  double.faults.denyAccess();
  const refused = await startServer(configOf(120_000), { logger: silentLogger, print: () => undefined }).then(
    () => null,
    (error: unknown) => error,
  );
  expect(isStartupError(refused)).toBe(true);
  const message = (refused as Error).message;
  expect(message).not.toContain('\n');
  expect(message).toMatch(/^Operator action needed: EventStoreDB at 127\.0\.0\.1:\d+ answered, and refused: /);
  expect(message).toContain('refused the mailbox access');
  expect(message).toContain('Check the user and password in MAILBOX_EVENTSTORE_URL');
  expect(message).not.toMatch(/unreachable|start it/);
  expect(double.log.appendRequests).toBe(0);
}, 30_000);

test('refused reading $all while running: /readyz is Operator action needed naming it, no Retry-After; the mailbox streams still take writes', async () => {
  server = await startServer(configOf(1000), { logger: silentLogger, print: () => undefined });
  const tokens: Record<string, string> = {};
  for (const identity of ['@a', '@b', '@c']) {
    const registered = await call('POST', '/v1/agents', ADMIN_TOKEN, { identity });
    expect(registered.status).toBe(201);
    tokens[identity] = registered.body.token;
  }
  expect((await call('GET', '/readyz')).status).toBe(200);

  double.faults.denyReadsOfAll();
  const readiness = await call('GET', '/readyz');
  expect(readiness.status).toBe(503);
  expect(readiness.retryAfter).toBeNull();
  expect(readiness.body).toMatchObject({
    code: 'UNAVAILABLE',
    error: 'Operator action needed',
    message: expect.stringContaining("refused the mailbox's user the right to read $all"),
    operatorAction: expect.stringContaining('read access to $all'),
    checks: { eventStore: { ok: false, operatorAction: expect.stringContaining('$$$all') } },
  });
  expect(readiness.body).not.toHaveProperty('retryAfterSeconds');

  // What the user may do it still does: a send is appended to its own stream (the refusal is $all's alone).
  const appendsBefore = double.log.appendRequests;
  const sent = await call('POST', '/v1/messages', tokens['@a'], { to: ['@b', '@c'], subject: 's', body: 'b' });
  expect(sent.status).toBe(201);
  expect(double.log.appendRequests).toBeGreaterThan(appendsBefore);

  double.faults.allowAccess();
  expect((await call('GET', '/readyz')).status).toBe(200);
}, 30_000);

test("the right to read $all taken away under a running mailbox: the live subscription ends, the log says at once an operator must act (not 'resubscribing'), /readyz names it; given back, the views catch up", async () => {
  const log = recordingLogger('debug');
  server = await startServer(configOf(1000), { logger: log.logger, print: () => undefined });
  const tokens: Record<string, string> = {};
  for (const identity of ['@a', '@b', '@c']) {
    const registered = await call('POST', '/v1/agents', ADMIN_TOKEN, { identity });
    expect(registered.status).toBe(201);
    tokens[identity] = registered.body.token;
  }
  const first = await call('POST', '/v1/messages', tokens['@a'], { to: ['@b', '@c'], subject: 'one', body: '1' });
  expect(first.status).toBe(201);
  const linesBefore = log.lines.length;

  double.faults.denyReadsOfAll(); // the node ends the live $all subscription with access denied
  await waitFor(() => log.lines.slice(linesBefore).some((line) => line.msg.includes('an operator must act')), {
    timeoutMs: 10_000,
    what: "the projector's line saying an operator must act",
  });
  const said = log.lines.slice(linesBefore);
  expect(said.find((line) => line.msg.includes('an operator must act'))).toMatchObject({
    level: 40,
    // The log answered, refusing: not said as a log that does not answer (it said so, "... once it does").
    msg: expect.stringMatching(
      /^projections: the event log answers and refuses its reads; applying from the checkpoint again once it takes them; an operator must act: .*read access to \$all/,
    ),
    reason: expect.stringContaining("refused the mailbox's user the right to read $all"),
  });
  // Not taken for a dropped connection and resubscribed from the checkpoint, five times over, before it was said.
  expect(said.filter((line) => /subscription (dropped|: resubscribing)/.test(line.msg))).toEqual([]);

  const readiness = await call('GET', '/readyz');
  expect(readiness.status).toBe(503);
  expect(readiness.retryAfter).toBeNull();
  expect(readiness.body).toMatchObject({
    error: 'Operator action needed',
    operatorAction: expect.stringContaining('read access to $all'),
    checks: { projections: { lastError: expect.stringContaining("refused the mailbox's user the right to read $all") } },
  });

  // Given back: the projector's next try subscribes again, and the views catch up with what was written meanwhile.
  const during = await call('POST', '/v1/messages', tokens['@b'], { to: ['@a', '@c'], subject: 'two', body: '2' });
  expect(during.status).toBe(201);
  double.faults.allowAccess();
  await waitFor(
    async () => {
      const unread = await call('GET', '/v1/messages?status=unread', tokens['@c']);
      return unread.body.messages?.length === 2;
    },
    { timeoutMs: 15_000, what: "@c's unread: both messages" },
  );
  expect(
    (await call('GET', '/v1/messages?status=unread', tokens['@a'])).body.messages.map((m: { subject: string }) => m.subject),
  ).toEqual(['two']);
  await waitFor(async () => (await call('GET', '/readyz')).status === 200, { timeoutMs: 10_000, what: '/readyz 200' });
  await waitFor(
    () => log.lines.some((line) => line.msg === 'projections: the event log takes its reads again; applying from the checkpoint'),
    {
      what: "the projector's line saying the log takes its reads again",
    },
  );
  expect(log.lines.slice(linesBefore).filter((line) => /does not answer|answers again/.test(line.msg))).toEqual([]);
}, 60_000);
