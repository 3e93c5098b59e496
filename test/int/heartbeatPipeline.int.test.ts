/**
 * The daemon watching the pipeline: projector stopped -> stall alarm within two
 * intervals (log line, /metrics, /healthz), cleared when it catches up; and
 * the `mailbox heartbeat --once` command against a SQLite data directory.
 */
import { Command } from 'commander';
import pino from 'pino';
import { createMailbox, type Mailbox } from '../../src/mailbox';
import { startHeartbeat, type Heartbeat } from '../../src/heartbeat/startHeartbeat';
import { registerHeartbeatCommands } from '../../src/cli/commands/heartbeat';
import { ADMIN_TOKEN, registerAgents, tempDir } from '../support/fixtures';
import { unavailable } from '../../src/errors';
import { waitFor } from '../support/waitFor';

const INTERVAL = 1000;
const T0 = Date.parse('2030-01-01T12:00:00.000Z');

describe('heartbeat pipeline watch', () => {
  let mailbox: Mailbox;
  let heartbeat: Heartbeat;
  afterEach(async () => {
    await heartbeat?.stop();
    await mailbox?.close();
  });

  test('a store that does not answer for a few ticks (a Redis failover) is one warn line without a stack, and one when a tick runs again', async () => {
    const logLines: Array<{ level: number; msg: string; err?: unknown; failedTicks?: number }> = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => logLines.push(JSON.parse(line)) });
    mailbox = await createMailbox(
      { eventStoreUrl: 'memory:', adminToken: ADMIN_TOKEN, logLevel: 'silent' },
      { logger: pino({ level: 'silent' }) },
    );
    // The views refuse as the Redis adapter does while Redis fails over: UNAVAILABLE, three ticks, then answer.
    const projections = mailbox.projections;
    const allHeartbeats = projections.allHeartbeats.bind(projections);
    let refusals = 3;
    projections.allHeartbeats = async () => {
      if (refusals === 0) return allHeartbeats();
      refusals -= 1;
      throw unavailable('Redis projections', new Error('Command timed out'));
    };
    heartbeat = await startHeartbeat(mailbox, { logger, settings: { intervalMs: 10, metricsPort: 0 } });
    await waitFor(() => logLines.some((line) => line.msg.startsWith('heartbeat: the store answers again')), {
      what: 'a tick that ran again',
    });
    // A tick that outran its 10 ms interval on a loaded machine says so at warn: that line is about the machine, not the store.
    const told = logLines.filter(
      (line) =>
        (line.level >= 40 && line.msg !== 'heartbeat tick took longer than the interval') ||
        line.msg.startsWith('heartbeat: the store'),
    );
    expect(told).toEqual([
      // This daemon has no nudge target: said once, at its start (startHeartbeat.ts).
      expect.objectContaining({ level: 40, msg: expect.stringMatching(/^heartbeat: no nudge target is set/) }),
      expect.objectContaining({ level: 40, msg: expect.stringMatching(/^heartbeat: the store does not answer/) }),
      expect.objectContaining({ level: 30, msg: expect.stringMatching(/^heartbeat: the store answers again/), failedTicks: 3 }),
    ]);
    expect(told[0].err).toBeUndefined(); // no stack: an outage is no bug
  });

  test('while its ticks fail, /healthz names why in its alarms (the error, since when, how many), and clears it once a tick runs', async () => {
    mailbox = await createMailbox(
      { eventStoreUrl: 'memory:', adminToken: ADMIN_TOKEN, logLevel: 'silent' },
      { logger: pino({ level: 'silent' }) },
    );
    // The views refuse as the Redis adapter does while Redis is paused, until told to answer again.
    const projections = mailbox.projections;
    const allHeartbeats = projections.allHeartbeats.bind(projections);
    let refusing = true;
    projections.allHeartbeats = async () => {
      if (!refusing) return allHeartbeats();
      throw unavailable('Redis projections', new Error('Command timed out'));
    };
    heartbeat = await startHeartbeat(mailbox, {
      logger: pino({ level: 'silent' }),
      clock: { now: () => new Date(T0) },
      settings: { intervalMs: 10, metricsPort: 0 },
    });
    const failures = async () =>
      (await heartbeat.metrics.registry.getSingleMetric('mailbox_heartbeat_tick_failures_total')!.get()).values[0]?.value ?? 0;
    await waitFor(async () => (await failures()) >= 2, { what: 'two failed ticks' });
    const failing = await fetch(`${heartbeat.metricsUrl}/healthz`);
    const body = (await failing.json()) as { healthy: boolean; lastError: string; alarms: Array<Record<string, unknown>> };
    // It was 503 {"healthy":false,"alarms":[],...}: unhealthy, with no alarm saying why.
    expect(failing.status).toBe(503);
    expect(body.healthy).toBe(false);
    expect(body.alarms).toEqual([
      {
        alarm: 'ticks_failing',
        error: body.lastError,
        since: new Date(T0).toISOString(),
        failedTicks: expect.any(Number),
      },
    ]);
    expect(body.lastError).toMatch(/Redis projections is unavailable/);
    expect(body.alarms[0].failedTicks).toBeGreaterThanOrEqual(2);
    refusing = false;
    await waitFor(async () => (await fetch(`${heartbeat.metricsUrl}/healthz`)).status === 200, { what: 'a healthy answer' });
    const healthy = (await (await fetch(`${heartbeat.metricsUrl}/healthz`)).json()) as { alarms: unknown[]; lastError: unknown };
    expect(healthy).toMatchObject({ healthy: true, alarms: [], lastError: null });
  });

  test('views that went back (lost, being rebuilt) are not ticked on: one warn line, no escalation from part of the log, one line when they are back', async () => {
    const now = T0 + 10 * 60_000; // the message below is past the wake SLA
    const clock = { now: () => new Date(now) };
    const logLines: Array<{ level: number; msg: string; reason?: string; skippedTicks?: number }> = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => logLines.push(JSON.parse(line)) });
    mailbox = await createMailbox(
      { eventStoreUrl: 'memory:', adminToken: ADMIN_TOKEN, logLevel: 'silent' },
      { logger: pino({ level: 'silent' }), clock: { now: () => new Date(T0) } },
    );
    const { '@a': a, '@b': b } = await registerAgents(mailbox, ['@a', '@b']);
    const { messageId } = await a.send({ to: '@b', subject: 'read long ago', body: 'x' });
    await b.markRead({ messageId });
    const held = (await mailbox.projections.checkpoint())!;
    // Views that lost what they held and are rebuilt from the log (Redis restarted empty) stand at an early position,
    // where @b's read is not applied yet: they list the message as unwoken, as the rebuilt part of the log says.
    const projections = mailbox.projections;
    const realCheckpoint = projections.checkpoint.bind(projections);
    const realUnwoken = projections.unwoken.bind(projections);
    let rebuilding = false;
    let behindTicks = 0;
    projections.checkpoint = async () => (rebuilding ? (behindTicks++, held - 2n) : realCheckpoint());
    projections.unwoken = async (query) =>
      rebuilding
        ? {
            count: 1,
            messages: [{ messageId, sender: '@a', sentAt: new Date(T0).toISOString(), recipientCount: 1, escalatedAt: null }],
          }
        : realUnwoken(query);
    heartbeat = await startHeartbeat(mailbox, { logger, clock, settings: { intervalMs: 10, metricsPort: 0 } });
    const ticks = async () =>
      (await heartbeat.metrics.registry.getSingleMetric('mailbox_heartbeat_ticks_total')!.get()).values[0]?.value ?? 0;
    await waitFor(async () => (await ticks()) >= 1, { what: 'a tick on the whole views' });
    const events = (await mailbox.eventStore.headPosition())!;
    rebuilding = true;
    await waitFor(() => behindTicks >= 3, { what: 'three ticks on views behind' });
    const status = (await (await fetch(`${heartbeat.metricsUrl}/status`)).json()) as { healthy: boolean; lastError: string };
    // It escalated the message @b had read: 'ALARM message woke none of its recipients ...', a WakeEscalated for good.
    expect(logLines.filter((line) => /ALARM/.test(line.msg))).toEqual([]);
    expect(await mailbox.eventStore.headPosition()).toBe(events);
    rebuilding = false;
    await waitFor(() => logLines.some((line) => line.msg.startsWith('heartbeat: the views are back')), {
      what: 'the views back',
    });
    expect(status).toEqual(
      expect.objectContaining({ healthy: false, lastError: expect.stringMatching(/^The views went back from position/) }),
    );
    expect(logLines.filter((line) => /views/.test(line.msg))).toEqual([
      expect.objectContaining({
        level: 40,
        msg:
          'heartbeat: the views went back (they lost what they held); no agent is nudged and no message escalated from ' +
          'part of them until they are back where they were (checked each interval)',
        reason:
          `The views went back from position ${held} to ${held - 2n}: they lost what they held (e.g. Redis restarted ` +
          `empty) and hold only part of the log until the projector has rebuilt them to ${held}.`,
      }),
      expect.objectContaining({
        level: 30,
        msg: 'heartbeat: the views are back where they were; ticking',
        skippedTicks: expect.any(Number),
      }),
    ]);
  });

  /**
   * The daemon on a mailbox whose log, once `restored`, is a backup taken two events earlier (same log, same identity:
   * its head there), and whose views, once `rebuilt` from it (`mailbox projections rebuild --take-over`), stand at
   * that head; until then where they were. The daemon reads its own stores, as `mailbox heartbeat` does.
   */
  async function daemonOnARestoredLog() {
    const logLines: Array<{ level: number; msg: string; reason?: string }> = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => logLines.push(JSON.parse(line)) });
    mailbox = await createMailbox(
      { eventStoreUrl: 'memory:', adminToken: ADMIN_TOKEN, logLevel: 'silent' },
      { logger: pino({ level: 'silent' }), clock: { now: () => new Date(T0) } },
    );
    const { '@a': a } = await registerAgents(mailbox, ['@a', '@b', '@c']);
    await a.send({ to: '@b', subject: 'one', body: 'x' });
    await a.send({ to: '@c', subject: 'two', body: 'x' });
    const held = (await mailbox.projections.checkpoint())!;
    const state = { restored: false, rebuilt: false };
    const replaced = <T extends object>(target: T, methods: Record<string, () => Promise<unknown>>): T =>
      new Proxy(target, {
        get: (object, name) => {
          if (typeof name === 'string' && name in methods) return methods[name];
          const value = Reflect.get(object, name) as unknown;
          return typeof value === 'function' ? value.bind(object) : value;
        },
      });
    const eventStore = replaced(mailbox.eventStore, { headPosition: async () => (state.restored ? held - 2n : held) });
    const views = mailbox.projections;
    const projections = replaced(views, {
      checkpoint: async () => (state.rebuilt ? held - 2n : views.checkpoint()),
      binding: async () => ({ ...(await views.binding()), ...(state.rebuilt ? { checkpoint: held - 2n } : {}) }),
    });
    heartbeat = await startHeartbeat(
      { eventStore, projections, wakeBus: mailbox.wakeBus },
      { logger, clock: { now: () => new Date(T0) }, settings: { intervalMs: 10, metricsPort: 0 } },
    );
    const count = async (metric: 'ticks' | 'tick_failures') =>
      (await heartbeat.metrics.registry.getSingleMetric(`mailbox_heartbeat_${metric}_total`)!.get()).values[0]?.value ?? 0;
    await waitFor(async () => (await count('ticks')) >= 1, { what: 'a tick on the whole log' });
    const status = async () =>
      (await (await fetch(`${heartbeat.metricsUrl}/status`)).json()) as { healthy: boolean; lastError: string | null };
    return { held, state, count, status, logLines };
  }

  test('a log restored from an older backup (views ahead of its head): not ticked on, one line naming both positions and the remedy, ticking again once the views are rebuilt from it', async () => {
    const { held, state, count, status, logLines } = await daemonOnARestoredLog();
    state.restored = true;
    await waitFor(async () => (await count('tick_failures')) >= 3, { what: 'three refused ticks' });
    const ticked = await count('ticks');
    const refused = await status();
    const ahead =
      `The views in memory stand at log position ${held}, ahead of this event log's head (${held - 2n}; log ` +
      `${await mailbox.eventStore.logIdentity()}): the log was replaced or lost events; refusing to serve or overwrite them.`;
    expect(refused).toEqual(expect.objectContaining({ healthy: false, lastError: expect.stringContaining(ahead) }));
    expect(refused.lastError).toContain('mailbox projections rebuild --take-over');

    state.rebuilt = true;
    await waitFor(async () => (await count('ticks')) > ticked, { what: 'ticks again' });
    expect(logLines.filter((line) => /views/.test(line.msg))).toEqual([
      expect.objectContaining({
        level: 40,
        msg:
          "heartbeat: the views are not this event log's (ahead of its head, or another log's); no agent is nudged and " +
          'no message escalated from them until they are (checked each interval); an operator must act: ' +
          'mailbox projections rebuild --take-over (rebuilds the views from this log)',
        reason: expect.stringContaining(ahead),
        operatorAction: 'mailbox projections rebuild --take-over (rebuilds the views from this log)',
      }),
      expect.objectContaining({ level: 30, msg: "heartbeat: the views are this event log's again; ticking" }),
    ]);
    expect(await status()).toMatchObject({ healthy: true, lastError: null });
  });

  test('views rebuilt from a log restored from an older backup are ticked on: not waited for back at the position they held', async () => {
    const { held, state, count, status, logLines } = await daemonOnARestoredLog();
    const ticked = await count('ticks');
    state.restored = true;
    state.rebuilt = true;
    // It skipped every tick: 'The views went back from position N to N-2 ... until the projector has rebuilt them to
    // N', which this log (its head at N-2) never gets to.
    await waitFor(async () => (await count('ticks')) >= ticked + 3, { what: 'three ticks on the rebuilt views' });
    expect(logLines.filter((line) => /views/.test(line.msg))).toEqual([]);
    expect(await status()).toMatchObject({
      healthy: true,
      lastError: null,
      lastTick: { pipeline: { checkpoint: `${held - 2n}` } },
    });
  });

  test('projector stopped -> stall alarm within 2 intervals, on /metrics and /healthz, cleared on recovery', async () => {
    let now = T0;
    const clock = { now: () => new Date(now) };
    const logLines: Array<Record<string, unknown>> = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => logLines.push(JSON.parse(line)) });
    mailbox = await createMailbox(
      { eventStoreUrl: 'memory:', adminToken: ADMIN_TOKEN, logLevel: 'silent', awaitProjectionMs: 0 },
      { logger: pino({ level: 'silent' }), clock },
    );
    heartbeat = await startHeartbeat(mailbox, {
      logger,
      clock,
      schedule: false,
      settings: { intervalMs: INTERVAL, stallAfterMs: INTERVAL, metricsPort: 0 },
    });
    const { '@a': a } = await registerAgents(mailbox, ['@a', '@b', '@c']);
    const healthz = async () => {
      const response = await fetch(`${heartbeat.metricsUrl}/healthz`);
      expect(response.headers.get('x-content-type-options')).toBe('nosniff');
      return { status: response.status, body: await response.json() };
    };
    const metric = async (name: string) => {
      const text = await (await fetch(`${heartbeat.metricsUrl}/metrics`)).text();
      return Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1]);
    };

    expect((await heartbeat.tick()).pipeline).toMatchObject({ lag: '0', stalled: false, checkpoint: '3', head: '3' });
    expect((await healthz()).status).toBe(200);

    await mailbox.runner.stop(); // the projector dies
    await a.send({ to: '@b', subject: 'stuck', body: 'x' });
    await a.send({ to: 'AGENT:*', subject: 'stuck too', body: 'y' }); // MessageSent + 2 BroadcastDelivered

    now = T0 + INTERVAL;
    expect((await heartbeat.tick()).pipeline).toMatchObject({ lag: '4', stalled: false });
    now = T0 + 2 * INTERVAL;
    expect((await heartbeat.tick()).pipeline).toMatchObject({ lag: '4', stalled: true, stuckForMs: INTERVAL });

    const alarms = logLines.filter((line) => line.alarm === 'projection_stalled');
    expect(alarms).toEqual([
      expect.objectContaining({
        level: 50,
        lag: '4',
        checkpoint: '3',
        head: '7',
        msg: expect.stringContaining('ALARM projection stalled'),
      }),
    ]);
    expect(await metric('mailbox_heartbeat_projection_stalled')).toBe(1);
    expect(await metric('mailbox_heartbeat_projection_lag_positions')).toBe(4);
    const unhealthy = await healthz();
    expect(unhealthy.status).toBe(503);
    expect(unhealthy.body).toMatchObject({ healthy: false, alarms: [{ alarm: 'projection_stalled', lag: '4' }] });

    now = T0 + 3 * INTERVAL; // still stuck: the alarm is not logged again
    await heartbeat.tick();
    expect(logLines.filter((line) => line.alarm === 'projection_stalled')).toHaveLength(1);

    await mailbox.runner.start(); // catches up before resolving
    now = T0 + 4 * INTERVAL;
    expect((await heartbeat.tick()).pipeline).toMatchObject({ lag: '0', stalled: false, checkpoint: '7' });
    expect(logLines.filter((line) => line.alarm === 'projection_stalled').map((line) => line.level)).toEqual([50, 30]);
    expect(await metric('mailbox_heartbeat_projection_stalled')).toBe(0);
    expect((await healthz()).status).toBe(200);
  });

  test('before a lone tick (--once): a checkpoint that stays behind for stall-after is stalled; one that moves is not', async () => {
    let now = T0;
    const clock = { now: () => new Date(now) };
    const waits: number[] = [];
    let onWait: () => Promise<void> = async () => undefined;
    const sleep = async (ms: number) => {
      waits.push(ms);
      now += ms;
      await onWait();
    };
    mailbox = await createMailbox(
      { eventStoreUrl: 'memory:', adminToken: ADMIN_TOKEN, logLevel: 'silent', awaitProjectionMs: 0 },
      { logger: pino({ level: 'silent' }), clock },
    );
    heartbeat = await startHeartbeat(mailbox, {
      logger: pino({ level: 'silent' }),
      clock,
      sleep,
      schedule: false,
      settings: { stallAfterMs: 1000, metricsPort: null },
    });
    const { '@a': a } = await registerAgents(mailbox, ['@a', '@b', '@c']);

    await heartbeat.watchPipelineBeforeTick(); // no lag: nothing to watch
    expect(waits).toEqual([]);

    await mailbox.runner.stop(); // the projector dies
    await a.send({ to: '@b', subject: 'stuck', body: 'x' });
    await heartbeat.watchPipelineBeforeTick(); // watched for the whole stall-after, on the injected clock
    expect(waits.reduce((sum, ms) => sum + ms, 0)).toBe(1000);
    expect((await heartbeat.tick()).pipeline).toMatchObject({ lag: '1', stalled: true, stuckForMs: 1000 });

    // Behind again, and the projector is back: its checkpoint moves during the watch, which ends there.
    await a.send({ to: '@c', subject: 'stuck too', body: 'y' });
    waits.length = 0;
    onWait = async () => {
      onWait = async () => undefined;
      await mailbox.runner.start();
    };
    await heartbeat.watchPipelineBeforeTick();
    expect(waits).toHaveLength(1);
    expect((await heartbeat.tick()).pipeline).toMatchObject({ lag: '0', stalled: false });
  });

  // A POST (or HEAD, DELETE) was 405 with code VALIDATION_FAILED and no Allow header: the API server's 405 is
  // METHOD_NOT_ALLOWED naming the methods in Allow (RFC 9110 requires it), and so is the daemon's now.
  test.each(['POST', 'DELETE', 'PUT'])('%s on the metrics endpoint: 405 METHOD_NOT_ALLOWED with Allow: GET', async (method) => {
    mailbox = await createMailbox(
      { eventStoreUrl: 'memory:', adminToken: ADMIN_TOKEN, logLevel: 'silent' },
      { logger: pino({ level: 'silent' }) },
    );
    heartbeat = await startHeartbeat(mailbox, {
      logger: pino({ level: 'silent' }),
      schedule: false,
      settings: { metricsPort: 0 },
    });
    const response = await fetch(`${heartbeat.metricsUrl}/healthz`, { method });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('GET');
    expect(response.headers.get('x-content-type-options')).toBe('nosniff'); // as on every answer of the API server
    expect(await response.json()).toEqual({
      error: 'Method not allowed',
      code: 'METHOD_NOT_ALLOWED',
      message: `/healthz takes GET, not ${method}; the daemon serves GET /metrics, /healthz and /status.`,
      method,
      path: '/healthz',
      allow: ['GET'],
    });
  });

  test('wake events reach the daemon and feed the wake counters', async () => {
    mailbox = await createMailbox(
      { eventStoreUrl: 'memory:', adminToken: ADMIN_TOKEN, logLevel: 'silent' },
      { logger: pino({ level: 'silent' }) },
    );
    heartbeat = await startHeartbeat(mailbox, {
      logger: pino({ level: 'silent' }),
      schedule: false,
      settings: { metricsPort: null },
    });
    const { '@a': a } = await registerAgents(mailbox, ['@a', '@b', '@c']);
    await heartbeat.tick(); // subscribes to @a, @b, @c
    await a.send({ to: 'AGENT:*', subject: 'wake up', body: 'x' }); // wakes @b and @c, not the sender
    await heartbeat.tick();
    expect((await heartbeat.metrics.wakesReceived.get()).values[0].value).toBe(2);
    expect((await heartbeat.metrics.wakeLatency.get()).values.find((v) => v.metricName?.endsWith('_count'))?.value).toBe(2);
  });
});

describe('mailbox heartbeat --once', () => {
  const saved = { ...process.env };
  afterEach(() => {
    process.env = { ...saved };
    process.exitCode = undefined;
  });

  test('reads the SQLite log, finds idle agents with mail (no target: logged only), prints the tick report', async () => {
    const dataDir = tempDir('mailbox-heartbeat-cli-');
    const mailbox = await createMailbox(
      { dataDir, adminToken: ADMIN_TOKEN, logLevel: 'silent' },
      { logger: pino({ level: 'silent' }) },
    );
    const { '@a': a } = await registerAgents(mailbox, ['@a', '@b', '@c']);
    await a.send({ to: '@b', subject: 'hello', body: 'x' });
    // Open while --once runs: a server's projector keeps the views (without one, exit code 1: projector_absent).

    Object.assign(process.env, { MAILBOX_DATA_DIR: dataDir, MAILBOX_LOG_LEVEL: 'silent' });
    const written: string[] = [];
    const spy = jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      written.push(String(chunk));
      return true;
    });
    try {
      const program = new Command().exitOverride();
      registerHeartbeatCommands(program);
      await program.parseAsync(['node', 'mailbox', 'heartbeat', '--once', '--metrics-port', 'off', '--wake-grace', '0']);
    } finally {
      spy.mockRestore();
      await mailbox.close();
    }
    const report = JSON.parse(written.join('').trim().split('\n').pop()!);
    expect(report).toMatchObject({
      agents: 3,
      withUnread: 1,
      nudged: [],
      loggedOnly: ['@b'],
      pipeline: { lag: '0', stalled: false, projectorLive: true },
    });
    expect(process.exitCode).toBeUndefined();
  });

  test('an invalid flag is rejected with the error envelope (--json) and exit code 2', async () => {
    const errors: string[] = [];
    const spy = jest.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
      errors.push(String(chunk));
      return true;
    });
    try {
      const program = new Command().exitOverride();
      registerHeartbeatCommands(program);
      await program.parseAsync(['node', 'mailbox', 'heartbeat', '--once', '--idle', 'forever', '--json']);
    } finally {
      spy.mockRestore();
    }
    expect(JSON.parse(errors.join(''))).toMatchObject({ code: 'VALIDATION_FAILED', option: '--idle' });
    expect(process.exitCode).toBe(2);
  });
});
