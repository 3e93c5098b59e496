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
