/**
 * `mailbox audit replay | message | agent` run through the real CLI module
 * against a SQLite data directory written by the real command path.
 */
import pino from 'pino';
import { PassThrough } from 'node:stream';
import { runAuditCli as audit } from '../support/auditCli';
import { createMailbox } from '../../src/mailbox';
import fs from 'node:fs';
import path from 'node:path';
import { MAILBOX_EVENT_TYPES, type StoredEvent } from '../../src/events/types';
import { SqliteEventStore } from '../../src/adapters/eventstore/sqliteEventStore';
import { runJsonTextReplay, runMessage, runReplay } from '../../src/audit/auditCommands';
import { eventStoreSource } from '../../src/audit/logSource';
import { SqliteJsonLog } from '../../src/adapters/eventstore/sqliteJsonLog';
import { ADMIN_TOKEN, allEvents, registerAgents, tempDir } from '../support/fixtures';

const T0 = Date.parse('2030-01-01T12:00:00.000Z');

describe('mailbox audit (SQLite, direct access)', () => {
  const dataDir = tempDir('mailbox-audit-');
  const env = { MAILBOX_DATA_DIR: dataDir, MAILBOX_LOG_LEVEL: 'silent' };
  let events: StoredEvent[];
  let broadcastId: string;
  let directId: string;

  beforeAll(async () => {
    let tick = 0;
    const clock = { now: () => new Date(T0 + 1000 * tick++) };
    const mailbox = await createMailbox(
      { dataDir, adminToken: ADMIN_TOKEN, logLevel: 'silent' },
      { logger: pino({ level: 'silent' }), clock },
    );
    const { '@a': a, '@b': b, '@c': c, '@d': d } = await registerAgents(mailbox, ['@a', '@b', '@c', '@d']);
    broadcastId = (await a.send({ to: 'AGENT:*', subject: 'deploy', body: 'at noon' })).messageId;
    await b.markRead({ messageId: broadcastId });
    await d.markRead({ messageId: broadcastId });
    await c.archive(broadcastId);
    directId = (await c.send({ to: '@a', subject: 'question', body: '?' })).messageId;
    events = await allEvents(mailbox);
    await mailbox.close();
  });

  test('replay --json streams every event in log order, exactly as stored', async () => {
    const { code, stdout } = await audit(['replay', '--json'], env);
    expect(code).toBe(0);
    const lines = stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(lines.map((l) => [l.position, l.type, l.eventId])).toEqual(
      events.map((e) => [e.position.toString(), e.type, e.eventId]),
    );
    expect(lines[4].data).toEqual(events[4].data);
  });

  test('replay filters by position (inclusive), type and stream', async () => {
    const byType = await audit(['replay', '--json', '--type', 'ReceiptRead,MessageArchived'], env);
    expect(
      byType.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).type),
    ).toEqual(['ReceiptRead', 'ReceiptRead', 'MessageArchived']);
    const from = await audit(['replay', '--json', '--from', String(events.length - 1)], env);
    expect(
      from.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).position),
    ).toEqual([String(events.length - 1), String(events.length)]);
    const stream = await audit(['replay', '--json', '--stream', `mailbox-message-${directId}`], env);
    expect(
      stream.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).type),
    ).toEqual(['MessageSent']);
    const text = await audit(['replay', '--type', 'MessageSent'], env);
    expect(text.stdout).toContain(`@a -> AGENT:* "deploy" [normal] message ${broadcastId} (3 recipients)`);
    expect(text.stderr).toContain(`2 of ${events.length} events shown`);
  });

  test('a stream the log does not hold is "not found" (exit 1, named), not "0 of 0 events shown" with exit 0', async () => {
    const missing = 'mailbox-message-00000000-0000-4000-8000-000000000000';
    for (const json of [[], ['--json']]) {
      const { code, stdout, stderr } = await audit(['replay', '--stream', missing, ...json], env);
      expect(code).toBe(1);
      expect(stdout).toBe('');
      if (json.length === 0) {
        // Text: one line, as serve's refusals; the envelope with --json.
        expect(stderr).toMatch(new RegExp(`^mailbox: The log holds no stream '${missing}'\\. [^\\n{]*\n$`));
        continue;
      }
      const envelope = JSON.parse(stderr);
      expect(envelope).toMatchObject({ code: 'NOT_FOUND', error: 'Stream not found', field: '--stream', stream: missing });
      expect(envelope.message).toContain(`no stream '${missing}'`);
    }
  });

  test('a stream that exists with nothing in range is an empty replay (exit 0), also when it lies before --from', async () => {
    const direct = `mailbox-message-${directId}`;
    const filtered = await audit(['replay', '--stream', direct, '--type', 'ReceiptRead'], env);
    expect(filtered).toMatchObject({ code: 0, stdout: '' });
    expect(filtered.stderr).toBe(`0 of 1 events shown (stream ${direct}, --type ReceiptRead)\n`);
    // The registrations (positions 1-4) all lie before the last event: the stream is there, the range is empty.
    for (const json of [[], ['--json']]) {
      const before = await audit(['replay', '--stream', 'mailbox-agents', '--from', String(events.length), ...json], env);
      expect(before).toMatchObject({ code: 0, stdout: '' });
    }
  });

  test('--from past the log head is "not found" naming the head (exit 1), not an empty replay; --from at the head shows it', async () => {
    const head = String(events.length);
    for (const json of [[], ['--json']]) {
      for (const from of [String(events.length + 1), '999999']) {
        const { code, stdout, stderr } = await audit(['replay', '--from', from, '--type', 'ReceiptRead', ...json], env);
        expect(code).toBe(1);
        expect(stdout).toBe('');
        if (json.length === 0) {
          // Text: the replay's count line, saying where the log ends (it printed the error envelope, as for a failure).
          expect(stderr).toBe(
            `0 events shown (from position ${from}, --type ReceiptRead): the log ends at position ${head}. ` +
              `Give --from ${head} or lower, or run it again once the log has grown.\n`,
          );
          continue;
        }
        const envelope = JSON.parse(stderr);
        expect(envelope).toMatchObject({ code: 'NOT_FOUND', error: 'Past the log head', field: '--from', from, head });
        expect(envelope.message).toBe(
          `Position ${from} is past the log head ${head}: no event is there yet. Give --from ${head} or lower, ` +
            'or run it again once the log has grown.',
        );
      }
      const atHead = await audit(['replay', '--from', head, ...json], env);
      expect(atHead.code).toBe(0);
      expect(atHead.stdout.trim().split('\n')).toHaveLength(1);
    }
  });

  test('an empty log: the replay is empty (exit 0); any --from is past its head (exit 1)', async () => {
    const dir = tempDir('mailbox-audit-empty-log-');
    await (
      await createMailbox({ dataDir: dir, adminToken: ADMIN_TOKEN, logLevel: 'silent' }, { logger: pino({ level: 'silent' }) })
    ).close();
    const emptyEnv = { MAILBOX_DATA_DIR: dir, MAILBOX_LOG_LEVEL: 'silent' };
    expect(await audit(['replay'], emptyEnv)).toEqual({ code: 0, stdout: '', stderr: '0 of 0 events shown\n' });
    // unwoken --json is JSON lines: none for no message (it printed one blank line, which JSON.parse refuses).
    expect(await audit(['unwoken', '--json'], emptyEnv)).toEqual({ code: 0, stdout: '', stderr: '' });
    expect(await audit(['unwoken'], emptyEnv)).toMatchObject({
      code: 0,
      stdout: expect.stringMatching(
        /^0 message\(s\) in the unwoken alarm: each expected a wake, woke none of its recipients within 60000 ms, /,
      ),
    });
    const text = await audit(['replay', '--from', '1'], emptyEnv);
    expect(text).toEqual({
      code: 1,
      stdout: '',
      stderr: '0 events shown (from position 1): the log is empty. Leave --from out, or run it again once the log has grown.\n',
    });
    for (const json of [['--json']]) {
      const { code, stdout, stderr } = await audit(['replay', '--from', '1', ...json], emptyEnv);
      expect({ code, stdout }).toEqual({ code: 1, stdout: '' });
      expect(JSON.parse(stderr)).toMatchObject({
        code: 'NOT_FOUND',
        head: null,
        message: expect.stringContaining('Position 1 is past the log head: the log is empty.'),
      });
    }
  });

  test('an unknown event type is rejected loudly (exit 2), naming --type as typed, the type likely meant and listing the event types', async () => {
    // Before: no word of the type meant; a read is a receipt (ReceiptRead), and a misspelling was left to be found in the list.
    for (const [types, wrong] of [
      ['MessageSent,MessageRead', "'MessageRead', which is not an event type (did you mean ReceiptRead?)"],
      ['MesageSent', "'MesageSent', which is not an event type (did you mean MessageSent?)"],
      [
        'message_sent,Foo,taskclaimd',
        "'message_sent', 'Foo', 'taskclaimd', which are not event types (did you mean MessageSent for 'message_sent', " +
          "TaskClaimed for 'taskclaimd'?)",
      ],
      ['Bogus', "'Bogus', which is not an event type"],
    ]) {
      const { code, stdout, stderr } = await audit(['replay', '--type', types, '--json'], env);
      expect({ types, code, stdout }).toEqual({ types, code: 2, stdout: '' }); // nothing replayed
      const envelope = JSON.parse(stderr);
      expect(envelope).toMatchObject({ code: 'VALIDATION_FAILED', field: '--type', issues: [{ field: '--type' }] });
      expect(envelope.message).toBe(
        `audit replay: '--type' has ${wrong}; give one or more of ` +
          `${MAILBOX_EVENT_TYPES.join(', ')} (repeat --type or comma-separate them)`,
      );
    }
  });

  test('a --type that names no type is refused (exit 2), not answered with an empty replay; --from is named as typed', async () => {
    for (const types of ['', ',', ' , ']) {
      const { code, stdout, stderr } = await audit(['replay', '--type', types, '--json'], env);
      expect({ code, stdout }).toEqual({ code: 2, stdout: '' });
      expect(JSON.parse(stderr)).toMatchObject({
        code: 'VALIDATION_FAILED',
        field: '--type',
        message: expect.stringContaining("'--type' names no event type; give one or more of AgentRegistered, "),
      });
    }
    const from = await audit(['replay', '--from', '12a', '--json'], env);
    expect(from.code).toBe(2);
    expect(JSON.parse(from.stderr)).toMatchObject({
      code: 'VALIDATION_FAILED',
      field: '--from',
      message: "audit replay: '--from' takes a log position (digits), e.g. --from 1200",
    });
  });

  test('message <id>: sender, the full broadcast audience and per-recipient read times matching the events', async () => {
    const { code, stdout } = await audit(['message', broadcastId, '--json'], env);
    expect(code).toBe(0);
    const story = JSON.parse(stdout);
    const readAt = Object.fromEntries(
      events
        .filter((e) => e.type === 'ReceiptRead')
        .map((e) => [(e.data as { reader: string }).reader, (e.data as { readAt: string }).readAt]),
    );
    const archivedAt = events.find((e) => e.type === 'MessageArchived')!.metadata.at;
    expect(story.sent).toMatchObject({ from: '@a', to: 'AGENT:*', isBroadcast: true });
    expect(story.audience).toEqual(['@b', '@c', '@d']);
    expect(
      story.recipients.map((r: { identity: string; readAt: string | null; archivedAt: string | null }) => [
        r.identity,
        r.readAt,
        r.archivedAt,
      ]),
    ).toEqual([
      ['@b', readAt['@b'], null],
      ['@c', null, archivedAt],
      ['@d', readAt['@d'], null],
    ]);

    const text = await audit(['message', broadcastId], env);
    expect(text.stdout).toContain('sent      2030-01-01T12:00:');
    expect(text.stdout).toMatch(new RegExp(`@b +\\S+ \\(#\\d+\\) +${readAt['@b'].replace(/[.]/g, '\\.')} \\(#\\d+\\) +-`));
    expect(text.stdout).toMatch(/@c +\S+ \(#\d+\) +unread +\S+ \(#\d+\)/);
    // The recipient table's columns line up (they were joined by tabs: 'recipient\t' and '@b\t' end at different stops).
    const table = text.stdout.split('\n').filter((line) => /^(recipient|@[bcd]) /.test(line));
    expect(table).toHaveLength(4);
    for (const column of ['delivered', 'read', 'archived']) {
      const at = table[0].indexOf(` ${column}`) + 1;
      for (const row of table.slice(1))
        expect([row[at - 1], row[at - 2], row[at]]).toEqual([' ', ' ', expect.stringMatching(/\S/)]);
    }
  });

  test('message <id> on a terminal draws a bar while it replays the delivery ledger from the whole log', async () => {
    const store = SqliteEventStore.open(path.join(dataDir, 'events.sqlite'));
    const terminal = new PassThrough();
    let drawn = '';
    terminal.on('data', (chunk: Buffer) => (drawn += chunk.toString()));
    Object.assign(terminal, { isTTY: true, columns: 120 }); // only a terminal gets bars
    try {
      const code = await runMessage(
        eventStoreSource(store),
        broadcastId,
        { json: true, progress: true },
        {
          stdout: new PassThrough(),
          stderr: terminal,
          env: {},
        },
      );
      expect(code).toBe(0);
    } finally {
      await store.close();
    }
    // It was silent: as long a scan as `audit unwoken`'s (which draws one), on a 1,000,000-event log many seconds.
    expect(drawn).toMatch(new RegExp(`ledger \\[.*\\] 100% \\| position ${events.length}/${events.length}`));
  });

  test("unwoken: a bad --sla is named as typed, a bad MAILBOX_WAKE_SLA_MS in serve's words (both were \"'sla'\")", async () => {
    const typed = await audit(['unwoken', '--sla', 'abc', '--json'], env);
    expect(typed.code).toBe(2);
    expect(JSON.parse(typed.stderr)).toMatchObject({
      field: '--sla',
      message: "audit unwoken: '--sla' must be a duration such as 250ms, 90s, 10m, 1h, 1d or a number of milliseconds",
    });
    const long = await audit(['unwoken', '--sla', '99999999999999999999', '--json'], env);
    expect(JSON.parse(long.stderr)).toMatchObject({
      field: '--sla',
      message: "audit unwoken: '--sla' takes at most 9007199254740991 ms",
    });
    const variable = await audit(['unwoken', '--json'], { ...env, MAILBOX_WAKE_SLA_MS: 'abc' });
    expect(variable.code).toBe(2);
    expect(JSON.parse(variable.stderr)).toMatchObject({
      error: 'Invalid configuration',
      field: 'MAILBOX_WAKE_SLA_MS',
      message: expect.stringMatching(
        /^MAILBOX_WAKE_SLA_MS='abc' is not valid: set MAILBOX_WAKE_SLA_MS to a duration such as 90s, 2m or 1h, or an integer number of milliseconds/,
      ),
    });
    // A good one is taken (no error).
    const taken = await audit(['unwoken', '--json'], { ...env, MAILBOX_WAKE_SLA_MS: '3600000' });
    expect(taken.stderr).toBe('');
  });

  test('unwoken: the SLA is a duration, from --sla or MAILBOX_WAKE_SLA_MS, as serve and the heartbeat read it (2m was refused here)', async () => {
    for (const [args, more] of [
      [['--sla', '2m'], {}],
      [[], { MAILBOX_WAKE_SLA_MS: '2m' }],
      [['--sla', '120000'], { MAILBOX_WAKE_SLA_MS: '1h' }], // the flag wins
    ] as const) {
      const { stdout, stderr } = await audit(['unwoken', ...args], { ...env, ...more });
      expect(stderr).toBe('');
      expect(stdout).toMatch(/woke none of its recipients within 120000 ms, /);
    }
  });

  test('message: an unknown id is MESSAGE_NOT_FOUND (exit 1); a malformed id is rejected (exit 2)', async () => {
    const missing = await audit(['message', '00000000-0000-4000-8000-000000000000', '--json'], env);
    expect(missing.code).toBe(1);
    expect(JSON.parse(missing.stderr)).toMatchObject({ code: 'MESSAGE_NOT_FOUND' });
    const malformed = await audit(['message', 'not-an-id', '--json'], env);
    expect(malformed.code).toBe(2);
    expect(JSON.parse(malformed.stderr)).toMatchObject({ code: 'VALIDATION_FAILED', field: 'messageId' });
  });

  test('agent <identity>: what it sent, received and read, and who read what it sent', async () => {
    const { code, stdout } = await audit(['agent', '@a', '--json'], env);
    expect(code).toBe(0);
    const entries = stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(entries.map((e) => [e.kind, e.messageId, e.counterpart])).toEqual([
      ['registered', null, null],
      ['sent', broadcastId, 'AGENT:*'],
      ['read_by_recipient', broadcastId, '@b'],
      ['read_by_recipient', broadcastId, '@d'],
      ['received', directId, '@c'],
    ]);
    const nobody = await audit(['agent', '@nobody', '--json'], env);
    expect(nobody.code).toBe(1);
    expect(JSON.parse(nobody.stderr)).toMatchObject({ code: 'AGENT_NOT_FOUND', identity: '@nobody' });
    expect(JSON.parse(nobody.stderr)).not.toHaveProperty('suggestions');
    // A case variant of a registered identity: the one meant is named (never shown in its place).
    const recased = await audit(['agent', '@A', '--json'], env);
    expect(recased.code).toBe(1);
    expect(recased.stdout).toBe('');
    expect(JSON.parse(recased.stderr)).toMatchObject({
      code: 'AGENT_NOT_FOUND',
      identity: '@A',
      suggestions: ['@a'],
      message:
        'The log holds nothing about @A: @a is registered, which differs only in case (identities are case-sensitive). Did you mean @a?',
    });
    // Without --json, the same in one line (the suggestion is in it).
    expect(await audit(['agent', '@A'], env)).toEqual({
      code: 1,
      stdout: '',
      stderr:
        'mailbox: The log holds nothing about @A: @a is registered, which differs only in case (identities are ' +
        'case-sensitive). Did you mean @a?\n',
    });
  });

  test('replay --json read straight from the SQLite file prints byte for byte what the event store port path prints', async () => {
    const dir = tempDir('mailbox-audit-parity-');
    const mailbox = await createMailbox(
      { dataDir: dir, adminToken: ADMIN_TOKEN, logLevel: 'silent' },
      { logger: pino({ level: 'silent' }) },
    );
    const { '@a': a, '@b': b } = await registerAgents(mailbox, ['@a', '@b', '@c']);
    const sent = await a.send({ to: 'AGENT:*', subject: 'quote " and \\ and \u2028 and ünïcødé', body: 'x', tags: ['t'] });
    await b.markRead({ messageId: sent.messageId });
    await mailbox.close();
    const store = SqliteEventStore.open(path.join(dir, 'events.sqlite'));
    // An event written by an older schema version: both paths must show it upcast (schemaVersion 1).
    await store.append(
      'mailbox-legacy',
      [
        {
          eventId: '00000000-0000-4000-8000-00000000000a',
          type: 'AgentRetired',
          data: { identity: '@legacy', retiredAt: '2020-01-01T00:00:00.000Z' },
          metadata: {
            commandId: 'c',
            correlationId: 'c',
            causationId: 'c',
            actor: 'admin',
            at: '2020-01-01T00:00:00.000Z',
            schemaVersion: 0,
          },
        },
      ],
      'no_stream',
    );
    const lines = SqliteJsonLog.open(path.join(dir, 'events.sqlite'));
    const run = async (viaFile: boolean, filter: Parameters<typeof runReplay>[1]) => {
      const out = new PassThrough();
      const chunks: string[] = [];
      out.on('data', (chunk: Buffer) => chunks.push(chunk.toString()));
      const io = { stdout: out, stderr: new PassThrough(), env: {} };
      const options = { json: true, progress: false };
      if (viaFile) await runJsonTextReplay(lines, filter, options, io);
      else await runReplay(eventStoreSource(store), filter, options, io);
      return chunks.join('');
    };
    try {
      for (const filter of [
        { from: null, types: null, stream: null },
        { from: 3n, types: new Set(['BroadcastDelivered'] as const), stream: null },
        { from: null, types: null, stream: `mailbox-message-${sent.messageId}` },
      ] as const) {
        const viaFile = await run(true, filter);
        expect(viaFile.length).toBeGreaterThan(0);
        expect(viaFile).toBe(await run(false, filter));
      }
      const legacy = (await run(true, { from: null, types: null, stream: 'mailbox-legacy' })).trim();
      expect(JSON.parse(legacy).metadata.schemaVersion).toBe(1);
    } finally {
      lines.close();
      await store.close();
    }
  });

  test('replay --json never creates a log that is not there', async () => {
    const dataDir = tempDir('mailbox-audit-empty-');
    const { code, stderr } = await audit(['replay', '--json'], { MAILBOX_DATA_DIR: dataDir, MAILBOX_LOG_LEVEL: 'silent' });
    expect(code).toBe(1);
    expect(JSON.parse(stderr)).toMatchObject({ code: 'NOT_FOUND' });
    expect(fs.readdirSync(dataDir)).toEqual([]);
  });
});
