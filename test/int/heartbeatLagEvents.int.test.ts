/**
 * The heartbeat daemon's projection lag is counted in events, as /readyz counts it: on EventStoreDB positions are byte
 * offsets in the server's log, and one send behind read "lag 807" in its report, its log lines, /healthz and /metrics.
 * Beyond what is counted (LAG_COUNTED_UP_TO) it says "at least": in /metrics, by
 * mailbox_heartbeat_projection_lag_events_at_least 1 (0 while the count is exact), which only the help text said before.
 */
import fs from 'node:fs';
import pino from 'pino';
import { createMailbox, type Mailbox } from '../../src/mailbox';
import type { MailboxConfigInput } from '../../src/config';
import { startHeartbeat, type Heartbeat } from '../../src/heartbeat/startHeartbeat';
import { checkReadiness } from '../../src/adapters/http/readiness';
import { LAG_COUNTED_UP_TO } from '../../src/application/viewsLag';
import { ADMIN_TOKEN, registerAgents, tempDir } from '../support/fixtures';
import { EsdbDouble } from '../support/esdbDouble/esdbDouble';
import { waitFor } from '../support/waitFor';

const INTERVAL = 1000;
const T0 = Date.parse('2030-01-01T12:00:00.000Z');

let double: EsdbDouble | null = null;
let dir: string | null = null;
let mailbox: Mailbox | undefined;
let heartbeat: Heartbeat | undefined;

afterEach(async () => {
  await heartbeat?.stop();
  await mailbox?.close();
  await double?.close();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
  [double, dir, mailbox, heartbeat] = [null, null, undefined, undefined];
});

const stores: Array<[string, () => Promise<Partial<MailboxConfigInput>>]> = [
  [
    'EventStoreDB (the double)',
    async () => {
      double = await EsdbDouble.start();
      return { eventStoreUrl: `${double.url}&defaultDeadline=5000` };
    },
  ],
  ['SQLite (the default)', async () => ({ dataDir: (dir = tempDir('mailbox-heartbeat-lag-')) })],
];

const metricsText = async (hb: Heartbeat) => (await fetch(`${hb.metricsUrl}/metrics`)).text();
const metric = (text: string, name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1]);
/** The machine-readable "at least" beside the count: 1 when the count stopped at LAG_COUNTED_UP_TO. */
const AT_LEAST = 'mailbox_heartbeat_projection_lag_events_at_least';

type LogLine = Record<string, unknown> & { level: number; msg: string };

async function stalledDaemon(store: () => Promise<Partial<MailboxConfigInput>>) {
  let now = T0;
  const clock = { now: () => new Date(now) };
  const logLines: LogLine[] = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => logLines.push(JSON.parse(line) as LogLine) });
  mailbox = await createMailbox(
    { ...(await store()), adminToken: ADMIN_TOKEN, logLevel: 'silent', awaitProjectionMs: 0 },
    { logger: pino({ level: 'silent' }), clock },
  );
  const agents = await registerAgents(mailbox, ['@a', '@b', '@c']);
  const head = await mailbox.eventStore.headPosition();
  await waitFor(async () => (await mailbox!.projections.checkpoint()) === head, { what: 'the views at the log head' });
  heartbeat = await startHeartbeat(mailbox, {
    logger,
    clock,
    schedule: false,
    sleep: async (ms) => void (now += ms),
    settings: { intervalMs: INTERVAL, stallAfterMs: INTERVAL, metricsPort: 0 },
  });
  expect((await heartbeat.tick()).pipeline).toMatchObject({ lag: '0', stalled: false });
  const caughtUp = await metricsText(heartbeat);
  expect([metric(caughtUp, 'mailbox_heartbeat_projection_lag_events'), metric(caughtUp, AT_LEAST)]).toEqual([0, 0]);
  await mailbox.runner.stop(); // the projector dies: what follows reaches the log, never the views
  return { agents, logLines, advance: (ms: number) => void (now += ms) };
}

describe.each(stores)('the heartbeat on %s', (_store, store) => {
  test('one send behind the views: lag 1 event in the report, the log lines, /healthz and /metrics (as /readyz says)', async () => {
    const { agents, logLines, advance } = await stalledDaemon(store);
    await agents['@a'].send({ to: '@b', subject: 'stuck', body: 'x' });

    // --once's wait: it says how far behind before it watches the checkpoint.
    await heartbeat!.watchPipelineBeforeTick();
    expect(logLines.filter((line) => line.msg.startsWith('the views are behind the log'))).toEqual([
      expect.objectContaining({ lag: '1', msg: expect.stringMatching(/^the views are behind the log \(lag 1 event\): /) }),
    ]);
    const first = (await heartbeat!.tick()).pipeline;
    advance(INTERVAL);
    const second = (await heartbeat!.tick()).pipeline;
    // It was lag '807' on EventStoreDB: the head's position less the checkpoint's, in bytes of the server's log.
    expect([first.lag, second.lag, second.stalled]).toEqual(['1', '1', true]);
    expect(second).not.toHaveProperty('lagAtLeast');
    expect((await checkReadiness(mailbox!)).checks.projections.lag).toBe(1);

    expect(logLines.filter((line) => line.alarm === 'projection_stalled')).toEqual([
      expect.objectContaining({
        level: 50,
        lag: '1',
        head: second.head,
        checkpoint: second.checkpoint,
        msg: 'ALARM projection stalled: the views are 1 event behind the log head and their checkpoint is not advancing',
      }),
    ]);
    const healthz = await fetch(`${heartbeat!.metricsUrl}/healthz`);
    expect(healthz.status).toBe(503);
    expect(((await healthz.json()) as { alarms: unknown[] }).alarms).toEqual([
      { alarm: 'projection_stalled', lag: '1', checkpoint: second.checkpoint, head: second.head, stuckForMs: second.stuckForMs },
    ]);
    const text = await metricsText(heartbeat!);
    expect(metric(text, 'mailbox_heartbeat_projection_lag_events')).toBe(1);
    expect(metric(text, AT_LEAST)).toBe(0); // an exact count
    // The positions' difference stays under its own name, saying what it is.
    expect(metric(text, 'mailbox_heartbeat_projection_lag_positions')).toBe(
      Number(BigInt(second.head!) - BigInt(second.checkpoint!)),
    );
  });

  test(`a log more than ${LAG_COUNTED_UP_TO} events past the views: "at least", never a smaller number alone`, async () => {
    const { agents, logLines, advance } = await stalledDaemon(store);
    await agents['@a'].send({ to: '@b', subject: 'stuck', body: 'x' });
    // The count stops at LAG_COUNTED_UP_TO (EventStoreDB reads the events to count them): bounded like /readyz's.
    const counts = mailbox!.eventStore.countEvents.bind(mailbox!.eventStore);
    mailbox!.eventStore.countEvents = async (after, through, atMost) => ((await counts(after, through, atMost)) > 0 ? atMost : 0);

    await heartbeat!.watchPipelineBeforeTick();
    advance(INTERVAL);
    const report = (await heartbeat!.tick()).pipeline;
    expect(report).toMatchObject({ lag: `${LAG_COUNTED_UP_TO}`, lagAtLeast: true, stalled: true });
    expect(logLines.filter((line) => line.lag !== undefined).map((line) => [line.msg.split(':')[0], line.lagAtLeast])).toEqual([
      ['the views are behind the log (lag at least 10001 events)', true],
      ['ALARM projection stalled', true],
    ]);
    expect(logLines.find((line) => line.alarm)?.msg).toBe(
      'ALARM projection stalled: the views are at least 10001 events behind the log head and their checkpoint is not advancing',
    );
    const body = (await (await fetch(`${heartbeat!.metricsUrl}/status`)).json()) as {
      alarms: unknown[];
      lastTick: { pipeline: unknown };
    };
    expect(body.alarms).toEqual([expect.objectContaining({ alarm: 'projection_stalled', lag: '10001', lagAtLeast: true })]);
    expect(body.lastTick.pipeline).toMatchObject({ lag: '10001', lagAtLeast: true });
    const text = await metricsText(heartbeat!);
    expect(metric(text, 'mailbox_heartbeat_projection_lag_events')).toBe(LAG_COUNTED_UP_TO);
    expect(metric(text, AT_LEAST)).toBe(1); // the count stopped there: a scraper reads "at least" without the help text
  });
});
