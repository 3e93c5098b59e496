/**
 * A stored event this build cannot read (a MessageSent without metadata.commandId, appended straight into the log by
 * something other than the mailbox, here with @eventstore/db-client into the EventStoreDB double). Found: the projector
 * failed on it at every retry with an error line and stack each time, while /readyz said lastError null (the log
 * "answered again" each second and cleared it) and /metrics had nothing: a silent stall. Now: lastError names the
 * position, stream, type and field, /readyz is not 'ready', /metrics names the position, one error line, the retries at
 * debug. Nothing after it is applied (nothing is skipped). Three identities.
 */
import { EventStoreDBClient, jsonEvent } from '@eventstore/db-client';
import pino from 'pino';
import { randomUUID } from 'node:crypto';
import { EsdbDouble } from '../support/esdbDouble/esdbDouble';
import { startTestServer, type TestServer } from '../support/httpServer';
import { spawnServe } from '../support/serveRefused';
import { waitFor } from '../support/waitFor';

interface Line {
  level: number;
  msg: string;
  [field: string]: unknown;
}

let double: EsdbDouble;
/** The event appended by appendMalformed (the first test). */
let malformed: { position: bigint; stream: string; messageId: string };
let server: TestServer;
const lines: Line[] = [];
beforeAll(async () => {
  double = await EsdbDouble.start();
  server = await startTestServer(
    { eventStoreUrl: double.url },
    { logger: pino({ level: 'debug' }, { write: (l: string) => void lines.push(JSON.parse(l) as Line) }) },
  );
});
afterAll(async () => {
  await server?.close();
  await double?.close();
});

/** Appends a MessageSent from @a to @b without metadata.commandId, as another program would; returns its position. */
async function appendMalformed(): Promise<{ position: bigint; stream: string; messageId: string }> {
  const client = EventStoreDBClient.connectionString(double.url);
  const id = randomUUID();
  const stream = `mailbox-message-${id}`;
  try {
    const result = await client.appendToStream(
      stream,
      jsonEvent({
        type: 'MessageSent',
        data: { messageId: id, from: '@a', to: ['@b'] },
        metadata: { schemaVersion: 1, actor: '@a', at: new Date().toISOString(), correlationId: 'x', causationId: 'x' },
      }),
    );
    return { position: result.position!.commit, stream, messageId: id };
  } finally {
    await client.dispose();
  }
}

test('the projector stopped at an event it cannot read: /readyz and /metrics say where and what, one error line', async () => {
  const tokens = await server.register(['@a', '@b', '@c']);
  const sent = await server.call('POST', '/v1/messages', {
    token: tokens['@a'],
    body: { to: ['@b', '@c'], subject: 's', body: '1' },
  });
  expect(sent.status).toBe(201);
  malformed = await appendMalformed();
  const { position, stream } = malformed;

  const retried = () => lines.filter((l) => l.msg === 'projections: still stopped at the stored event it cannot read').length;
  await waitFor(() => retried() >= 2, { timeoutMs: 20_000, what: 'two retries on the event' });
  const ready = await server.call('GET', '/readyz');
  expect(ready.status).toBe(200);
  expect(ready.body).toMatchObject({ status: 'degraded', projections: { lag: 1 } });
  expect(ready.body.projections.lastError).toBe(
    `Stored event MessageSent at position ${position} of stream ${stream} does not match its stored shape: ` +
      'metadata.commandId: Invalid input: expected string, received undefined. The log holds an event this build ' +
      'cannot read; restore it from a backup or add an upcaster.',
  );
  // The next look at the views (each second) does not clear it: the log answers, the event is still unreadable.
  const retries = retried();
  await waitFor(() => retried() > retries, { timeoutMs: 30_000, what: 'one more retry' });
  expect((await server.call('GET', '/readyz')).body.projections.lastError).toMatch(`at position ${position} `);

  const metrics = await server.call('GET', '/metrics');
  expect(metrics.status).toBe(200);
  expect(String(metrics.body)).toContain(`mailbox_projector_stopped_at_unreadable_event ${position}`);

  const errors = lines.filter((l) => l.level >= 50);
  expect(errors).toEqual([
    expect.objectContaining({
      msg:
        `projections: stopped at log position ${position}: the stored event there cannot be read; nothing after it is ` +
        'applied until the log is mended (restore it from a backup, or add an upcaster)',
      position: position.toString(),
      stream,
      type: 'MessageSent',
      field: 'metadata.commandId',
    }),
  ]);
});

test('the heartbeat beside it: its ticks run and raise the stall alarm, naming the checkpoint the views stopped at', async () => {
  const { startHeartbeat } = await import('../../src/heartbeat/startHeartbeat');
  let now = Date.parse('2030-01-01T12:00:00.000Z');
  const heartbeatLines: Line[] = [];
  const heartbeat = await startHeartbeat(server.mailbox, {
    logger: pino({ level: 'info' }, { write: (l: string) => void heartbeatLines.push(JSON.parse(l) as Line) }),
    clock: { now: () => new Date(now) },
    schedule: false,
    sleep: async (ms) => void (now += ms),
    settings: { intervalMs: 1000, stallAfterMs: 1000, metricsPort: 0 },
  });
  try {
    const checkpoint = (await server.mailbox.projections.checkpoint())!;
    expect(checkpoint).toBeLessThan(malformed.position);
    await heartbeat.tick();
    now += 2000;
    const report = await heartbeat.tick();
    expect(report.pipeline).toMatchObject({ checkpoint: checkpoint.toString(), lag: '1', stalled: true });
    // (The message sent before it woke nobody by this clock: its own alarm, beside.)
    expect(heartbeatLines.filter((l) => l.alarm === 'projection_stalled')).toEqual([
      expect.objectContaining({
        level: 50,
        checkpoint: checkpoint.toString(),
        head: malformed.position.toString(),
      }),
    ]);
    expect(heartbeat.health()).toMatchObject({ healthy: false });
    expect(JSON.stringify(heartbeat.health())).not.toContain('ticks_failing');
  } finally {
    await heartbeat.stop();
  }
});

describe('readers of the log refuse it as the log unreadable there, naming the position and the remedy (not INTERNAL)', () => {
  const env = () => ({ MAILBOX_EVENTSTORE_URL: double.url, MAILBOX_DATA_DIR: '/nonexistent-hc2' });
  const refusal = () => ({
    error: 'Event log unreadable',
    code: 'UNAVAILABLE',
    position: malformed.position.toString(),
    stream: malformed.stream,
    eventType: 'MessageSent',
    eventField: 'metadata.commandId',
    operatorAction:
      'Restore the log from a backup (mailbox backup writes one), or run a build that reads this event (an upcaster). ' +
      `Nothing was skipped: to read the log past it, mailbox audit replay --from ${malformed.position + 1n} ` +
      `(GET /v1/audit/events?after=${malformed.position}).`,
  });
  test('GET /v1/audit/events: 503 Event log unreadable, no Retry-After; after= its position reads past it', async () => {
    const records = double.log.records.length;
    const answer = await server.call('GET', '/v1/audit/events', { token: server.adminToken });
    expect(answer.status).toBe(503);
    expect(answer.headers.get('retry-after')).toBeNull();
    expect(answer.body).toMatchObject(refusal());
    expect(answer.body.message).toMatch(
      `Stored event MessageSent at position ${malformed.position} of stream ${malformed.stream}`,
    );
    const past = await server.call('GET', `/v1/audit/events?after=${malformed.position}`, { token: server.adminToken });
    expect(past.status).toBe(200);
    expect(double.log.records.length).toBe(records); // nothing written
  });

  test.each([['replay'], ['replay', '--type', 'AgentRegistered'], ['verify'], ['message']])(
    'mailbox audit %s: one line naming the position and the remedy, exit 2; --json the envelope; nothing written',
    async (...command) => {
      const { runAuditCli } = await import('../support/auditCli');
      const args = command[0] === 'message' ? [...command, malformed.messageId] : command;
      const records = double.log.records.length;
      const text = await runAuditCli([...args], env());
      expect(text.code).toBe(2);
      expect(text.stderr).toMatch(new RegExp(`^mailbox: Stored event MessageSent at position ${malformed.position} `));
      expect(text.stderr).toContain(`mailbox audit replay --from ${malformed.position + 1n}`);
      expect(text.stderr).not.toContain('INTERNAL');
      const json = await runAuditCli([...args, '--json'], env());
      expect(json.code).toBe(2);
      expect(JSON.parse(json.stderr)).toMatchObject(refusal());
      expect(double.log.records.length).toBe(records);
    },
  );

  test('mailbox audit replay --from <its position + 1> reads the log past it', async () => {
    const { runAuditCli } = await import('../support/auditCli');
    const past = await runAuditCli(['replay', '--from', String(malformed.position + 1n), '--no-progress'], env());
    expect(past.stderr).not.toContain('INTERNAL');
    expect(past.code).toBe(1); // nothing after it yet: past the head, said so
  });
});

test('a SQLite log with a row that is no valid event: mailbox audit verify and message say Event log unreadable at its position, exit 2; nothing written', async () => {
  const [{ default: Database }, path, { createMailbox }, { registerAgents, tempDir, ADMIN_TOKEN }, { runAuditCli }] =
    await Promise.all([
      import('better-sqlite3'),
      import('node:path'),
      import('../../src/mailbox'),
      import('../support/fixtures'),
      import('../support/auditCli'),
    ]);
  const dataDir = tempDir('mailbox-unreadable-event-');
  const mailbox = await createMailbox(
    { dataDir, adminToken: ADMIN_TOKEN, logLevel: 'silent' },
    { logger: pino({ level: 'silent' }) },
  );
  await registerAgents(mailbox, ['@a', '@b', '@c']);
  await mailbox.close();
  const db = new Database(path.join(dataDir, 'events.sqlite'));
  const id = randomUUID();
  const { position } = db
    .prepare('INSERT INTO events (event_id, stream, revision, type, data, metadata) VALUES (?, ?, 0, ?, ?, ?) RETURNING position')
    .get(
      randomUUID(),
      `mailbox-message-${id}`,
      'MessageSent',
      JSON.stringify({ messageId: id, from: '@a', to: ['@b'] }),
      JSON.stringify({ schemaVersion: 1, actor: '@a', at: new Date().toISOString(), correlationId: 'x', causationId: 'x' }),
    ) as { position: number };
  const rows = () => (db.prepare('SELECT count(*) AS n FROM events').get() as { n: number }).n;
  const before = rows();
  try {
    // (`audit replay` reads a SQLite log's rows as their JSON text, unchecked: it shows the row as it is.)
    for (const args of [
      ['verify', '--json'],
      ['message', id, '--json'],
    ]) {
      const answer = await runAuditCli(args, { MAILBOX_DATA_DIR: dataDir });
      expect({ args, code: answer.code }).toEqual({ args, code: 2 });
      expect(JSON.parse(answer.stderr)).toMatchObject({
        error: 'Event log unreadable',
        code: 'UNAVAILABLE',
        position: String(position),
        stream: `mailbox-message-${id}`,
        eventType: 'MessageSent',
        eventField: 'metadata.commandId',
      });
    }
    // A start on that log, whose views' catch-up meets the event: serve printed a stack trace (exit 1), createMailbox
    // rejected with the raw InvalidStoredEvent. Now one line, exit 2, and the library's Event log unreadable.
    const served = await spawnServe({ MAILBOX_DATA_DIR: dataDir });
    expect({ code: served.code, lines: served.stderr.trim().split('\n') }).toEqual({
      code: 2,
      lines: [
        `mailbox: Stored event MessageSent at position ${position} of stream mailbox-message-${id} does not match its ` +
          'stored shape: metadata.commandId: Invalid input: expected string, received undefined. The log holds an event ' +
          'this build cannot read; restore it from a backup or add an upcaster.',
      ],
    });
    const opened = createMailbox({ dataDir, adminToken: ADMIN_TOKEN, logLevel: 'silent' }, { logger: pino({ level: 'silent' }) });
    await expect(opened).rejects.toMatchObject({
      code: 'UNAVAILABLE',
      envelope: { error: 'Event log unreadable', position: String(position) },
    });
    expect(rows()).toBe(before);
  } finally {
    db.close();
  }
});
