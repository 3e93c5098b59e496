/**
 * `mailbox audit ... --url`: the log read over the real HTTP API
 * (GET /v1/audit/events, paged) with an auditor token; agents are refused.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { capture, runAuditCli as audit } from '../support/auditCli';
import { openAuditLog } from '../../src/compositionRoot';
import { parseConfig } from '../../src/config';
import { runMessage } from '../../src/audit/auditCommands';
import { startTestServer, type TestServer } from '../support/httpServer';
import { freePort } from '../support/redisServer';
import { allEvents, silentLogger, tempDir } from '../support/fixtures';

/**
 * In front of the server: /readyz and the log's first page pass; from the second page on the connection drops, as when
 * the server stops between two pages.
 */
async function frontThatStops(): Promise<{ url: string; close: () => Promise<void> }> {
  let pages = 0;
  const front = http.createServer((request, response) => {
    if (request.url!.startsWith('/v1/audit/events') && ++pages > 1) return void request.socket.destroy();
    void fetch(`${server.url}${request.url}`, { headers: { authorization: request.headers.authorization ?? '' } }).then(
      async (answer) => {
        response.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' });
        response.end(await answer.text());
      },
    );
  });
  await new Promise<void>((resolve) => front.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(front.address() as AddressInfo).port}`,
    close: () => new Promise((resolve) => front.close(() => resolve())),
  };
}

let server: TestServer;

describe('mailbox audit over HTTP', () => {
  let tokens: Record<string, string>;
  let messageId: string;

  beforeAll(async () => {
    server = await startTestServer();
    tokens = { ...(await server.register(['@a', '@b', '@c'])), ...(await server.register(['@auditor'], 'auditor')) };
    // More than one page of the API (1000 events): 700 direct messages and 700 reads, written through the library.
    const as = (identity: string) => server.mailbox.asActor({ identity, role: 'agent' });
    for (let i = 0; i < 700; i++) {
      const sent = await as('@a').send({ to: i % 2 ? '@b' : '@c', subject: `m${i}`, body: 'x' });
      await as(i % 2 ? '@b' : '@c').markRead({ messageId: sent.messageId });
    }
    messageId = (
      await server.call('POST', '/v1/messages', { token: tokens['@b'], body: { to: 'AGENT:*', subject: 'all', body: 'x' } })
    ).body.messageId;
  });
  afterAll(() => server.close());

  test('replay pages through the whole log in order with an auditor token', async () => {
    const { code, stdout } = await audit(['replay', '--json', '--url', server.url], { MAILBOX_AUDIT_TOKEN: tokens['@auditor'] });
    expect(code).toBe(0);
    const events = await allEvents(server.mailbox);
    expect(events.length).toBeGreaterThan(1000);
    expect(
      stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line).eventId),
    ).toEqual(events.map((e) => e.eventId));
  });

  test('message and agent stories work over HTTP too (by scanning the log)', async () => {
    const story = await audit(['message', messageId, '--json', '--url', server.url, '--token', tokens['@auditor']]);
    expect(story.code).toBe(0);
    expect(JSON.parse(story.stdout)).toMatchObject({ sent: { from: '@b', to: 'AGENT:*' }, audience: ['@a', '@c'] }); // auditors get no broadcasts
    const timeline = await audit(['agent', '@c', '--json', '--url', server.url], { MAILBOX_AUDIT_TOKEN: tokens['@auditor'] });
    const kinds = timeline.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line).kind);
    expect(kinds.filter((k) => k === 'received')).toHaveLength(351); // 350 direct + the broadcast
    expect(kinds.filter((k) => k === 'read')).toHaveLength(350);
  });

  test("message over HTTP reads the log once, under its bar: the story comes from the ledger's scan", async () => {
    // The story's events were read in a scan of their own first, with no bar, then the ledger's scan drew one: on a long
    // log the first half of the run was silent, and every page was asked for twice.
    const { source } = await openAuditLog(parseConfig({}), silentLogger, { url: server.url, token: tokens['@auditor'] });
    const scans = jest.spyOn(server.mailbox.eventStore, 'readAll');
    const terminal = capture();
    Object.assign(terminal.stream, { isTTY: true, columns: 120 });
    const out = capture();
    try {
      const code = await runMessage(
        source,
        messageId,
        { json: true, progress: true },
        { stdout: out.stream, stderr: terminal.stream, env: {} },
      );
      expect(code).toBe(0);
      expect(scans.mock.calls.filter(([after]) => after === null)).toHaveLength(1);
    } finally {
      scans.mockRestore();
    }
    const head = String(await server.mailbox.eventStore.headPosition());
    expect(terminal.text()).toMatch(new RegExp(`ledger \\[.*\\] 100% \\| position ${head}/${head}`));
    const told = JSON.parse(out.text());
    expect(told).toMatchObject({ sent: { from: '@b', to: 'AGENT:*' }, audience: ['@a', '@c'] });
    expect(told.delivery.counts).toMatchObject({ inView: 2 });
    // Nothing of the sort: refused after the one scan, as before.
    await expect(
      runMessage(
        source,
        '00000000-0000-4000-8000-000000000000',
        { json: true, progress: false },
        { stdout: out.stream, stderr: terminal.stream, env: {} },
      ),
    ).rejects.toMatchObject({ code: 'MESSAGE_NOT_FOUND' });
  });

  test('--stream over HTTP (a scan): a stream the log does not hold is "not found" (exit 1); one before --from is an empty range', async () => {
    const env = { MAILBOX_AUDIT_TOKEN: tokens['@auditor'] };
    const missing = await audit(['replay', '--stream', 'mailbox-agent', '--url', server.url, '--json'], env);
    expect(missing.code).toBe(1);
    expect(missing.stdout).toBe('');
    expect(JSON.parse(missing.stderr)).toMatchObject({ code: 'NOT_FOUND', field: '--stream', stream: 'mailbox-agent' });
    // The registrations come first; from the broadcast on, the scan reads none of them, yet the stream is there.
    const events = await allEvents(server.mailbox);
    const broadcast = events.find((e) => e.type === 'MessageSent' && (e.data as { to: string }).to === 'AGENT:*')!;
    const before = await audit(
      ['replay', '--stream', 'mailbox-agents', '--from', String(broadcast.position), '--url', server.url],
      env,
    );
    expect(before.code).toBe(0);
    expect(before.stdout).toBe('');
  });

  test('--from past the end of the log over HTTP is "not found" (exit 1), naming the log head the server tells', async () => {
    // It said only "the log ends before it (over --url the head is not known: the API does not tell it)", though the
    // server's /readyz tells the head (and the progress bar had no end over --url for the same reason).
    const env = { MAILBOX_AUDIT_TOKEN: tokens['@auditor'] };
    const head = String((await server.mailbox.eventStore.headPosition())!);
    for (const stream of [[], ['--stream', 'mailbox-agents']]) {
      const text = await audit(['replay', '--from', '99999999', ...stream, '--url', server.url], env);
      expect(text).toEqual({
        code: 1,
        stdout: '',
        stderr:
          `0 events shown (${stream.length === 0 ? '' : 'stream mailbox-agents, '}from position 99999999): the log ends at ` +
          `position ${head}. Give --from ${head} or lower, or run it again once the log has grown.\n`,
      });
      const { code, stdout, stderr } = await audit(
        ['replay', '--from', '99999999', ...stream, '--url', server.url, '--json'],
        env,
      );
      expect({ code, stdout }).toEqual({ code: 1, stdout: '' });
      expect(JSON.parse(stderr)).toEqual({
        error: 'Past the log head',
        code: 'NOT_FOUND',
        field: '--from',
        from: '99999999',
        head,
        message:
          `Position 99999999 is past the log head ${head}: no event is there yet. Give --from ${head} or lower, ` +
          'or run it again once the log has grown.',
      });
    }
  });

  test('GET /v1/audit/messages/{id} names the recipients that were retired, as `audit message --json` does', async () => {
    // The API's story had no retiredRecipients: a retired recipient read as one that had yet to read the message, while
    // `mailbox audit message <id> --json` (and its text: "retired <time> (#<position>)") said it never would.
    const { '@r': r } = await server.register(['@r']);
    expect(r).toBeDefined();
    const sent = await server.call('POST', '/v1/messages', {
      token: tokens['@b'],
      body: { to: ['@a', '@r'], subject: 'before the retirement', body: 'x' },
    });
    expect((await server.call('DELETE', '/v1/agents/@r', { token: server.adminToken })).status).toBe(200);
    const retired = (await allEvents(server.mailbox)).find(
      (event) => event.type === 'AgentRetired' && (event.data as { identity: string }).identity === '@r',
    )!;
    const expected = { '@r': { at: (retired.data as { retiredAt: string }).retiredAt, position: String(retired.position) } };
    const story = await server.call('GET', `/v1/audit/messages/${sent.body.messageId}`, { token: tokens['@auditor'] });
    expect(story.status).toBe(200);
    expect(story.body.retiredRecipients).toEqual(expected);
    const cli = await audit(['message', sent.body.messageId, '--json', '--url', server.url], {
      MAILBOX_AUDIT_TOKEN: tokens['@auditor'],
    });
    const { delivery, ...told } = JSON.parse(cli.stdout);
    expect(delivery.rows.map((row: { recipient: string }) => row.recipient).sort()).toEqual(['@a', '@r']);
    expect(story.body).toEqual(told);
    // A recipient never retired is not named.
    const other = await server.call('GET', `/v1/audit/messages/${messageId}`, { token: tokens['@auditor'] });
    expect(other.body.retiredRecipients).toEqual({});
  });

  test('a story tells an archive its recipient undid (it showed "-", as if never archived), over the API and in the text', async () => {
    // @a archives and unarchives, @c archives and keeps it archived, @b (the sender) does neither.
    const sent = await server.call('POST', '/v1/messages', {
      token: tokens['@b'],
      body: { to: ['@a', '@c'], subject: 'archived, then back', body: 'x' },
    });
    const id = sent.body.messageId as string;
    for (const [who, route] of [
      ['@a', 'archive'],
      ['@c', 'archive'],
      ['@a', 'unarchive'],
    ])
      expect((await server.call('POST', `/v1/messages/${id}/${route}`, { token: tokens[who] })).status).toBe(200);
    const events = (await allEvents(server.mailbox)).filter((event) => (event.data as { messageId?: string }).messageId === id);
    const at = (type: string, who: string) => {
      const event = events.find((e) => e.type === type && (e.data as { recipient: string }).recipient === who)! as unknown as {
        position: bigint;
        data: { archivedAt?: string; unarchivedAt?: string };
      };
      return { at: event.data.archivedAt ?? event.data.unarchivedAt!, position: String(event.position) };
    };
    const archivedA = at('MessageArchived', '@a');
    const unarchivedA = at('MessageUnarchived', '@a');
    const archivedC = at('MessageArchived', '@c');

    const story = await server.call('GET', `/v1/audit/messages/${id}`, { token: tokens['@auditor'] });
    expect(story.status).toBe(200);
    const row = (who: string) => story.body.recipients.find((r: { identity: string }) => r.identity === who);
    expect(row('@a')).toMatchObject({
      archivedAt: null,
      unarchived: [
        {
          archivedAt: archivedA.at,
          archivedPosition: archivedA.position,
          unarchivedAt: unarchivedA.at,
          unarchivedPosition: unarchivedA.position,
        },
      ],
    });
    expect(row('@c')).toMatchObject({ archivedAt: archivedC.at, archivedPosition: archivedC.position, unarchived: [] });
    expect(story.body.anomalies).toEqual([]);

    const cli = await audit(['message', id, '--url', server.url], { MAILBOX_AUDIT_TOKEN: tokens['@auditor'] });
    expect(cli.code).toBe(0);
    expect(cli.stdout).toContain(
      `@a archived it ${archivedA.at} (#${archivedA.position}), unarchived ${unarchivedA.at} (#${unarchivedA.position})`,
    );
    expect(cli.stdout).not.toContain('@c archived it');
  });

  test('a replay the server stops answering part way says where its output stops and the --from that reads the rest (exit 2)', async () => {
    // It said only "Cannot reach the mailbox at ...; is `mailbox serve` running? Check --url.", under 1000 lines that
    // read like the whole log, with no word of how far they went or how to read the rest.
    const env = { MAILBOX_AUDIT_TOKEN: tokens['@auditor'] };
    const { url, close } = await frontThatStops();
    try {
      const { code, stdout, stderr } = await audit(['replay', '--json', '--url', url], env);
      const shown = stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line).position);
      expect({ code, shown: shown.length, last: shown.at(-1) }).toEqual({ code: 2, shown: 1000, last: '1000' });
      const refusal = JSON.parse(stderr);
      expect(refusal).toMatchObject({
        error: 'Mailbox unreachable',
        code: 'UNAVAILABLE',
        url,
        shownThrough: '1000',
        resumeFrom: '1001',
      });
      expect(refusal.message).toMatch(/^Cannot reach the mailbox at .*; is `mailbox serve` running\? Check --url\./);
      expect(refusal.message).toContain(
        ' The replay stopped after log position 1000 (1000 events shown above): the output is the log up to #1000 only. ' +
          'Once the log can be read again, run the same command with --from 1001 for the rest.',
      );
      // The --from it names reads exactly the rest.
      const rest = await audit(['replay', '--json', '--from', refusal.resumeFrom, '--url', server.url], env);
      const all = (await allEvents(server.mailbox)).map((event) => String(event.position));
      expect([
        ...shown,
        ...rest.stdout
          .trim()
          .split('\n')
          .map((line) => JSON.parse(line).position),
      ]).toEqual(all);
    } finally {
      await close();
    }
    // Text: the events above, then one line ending with where the output stops and the --from that reads the rest.
    const again = await frontThatStops();
    try {
      const text = await audit(['replay', '--url', again.url], env);
      expect({ code: text.code, shown: text.stdout.trim().split('\n').length }).toEqual({ code: 2, shown: 1000 });
      expect(text.stderr).toMatch(
        new RegExp(
          '^mailbox: Cannot reach the mailbox at [^\\n{]*; is `mailbox serve` running\\? Check --url\\. The replay stopped ' +
            'after log position 1000 \\(1000 events shown above\\): the output is the log up to #1000 only\\. Once the log ' +
            'can be read again, run the same command with --from 1001 for the rest\\.\n$',
        ),
      );
    } finally {
      await again.close();
    }
  });

  test('an agent timeline the server stops answering part way says where its entries stop (exit 2)', async () => {
    const env = { MAILBOX_AUDIT_TOKEN: tokens['@auditor'] };
    const whole = await audit(['agent', '@c', '--json', '--url', server.url], env);
    const entries = whole.stdout.trim().split('\n');
    const { url, close } = await frontThatStops();
    try {
      const { code, stdout, stderr } = await audit(['agent', '@c', '--json', '--url', url], env);
      const shown = stdout.trim().split('\n');
      const upTo = shown.filter((line) => BigInt(JSON.parse(line).position) <= 1000n);
      expect({ code, shown: shown.length }).toEqual({ code: 2, shown: upTo.length });
      expect(shown).toEqual(entries.slice(0, shown.length)); // the timeline's first entries, up to #1000
      expect(shown.length).toBeLessThan(entries.length);
      const refusal = JSON.parse(stderr);
      expect(refusal).toMatchObject({ error: 'Mailbox unreachable', code: 'UNAVAILABLE', url, shownThrough: '1000' });
      expect(refusal).not.toHaveProperty('resumeFrom'); // audit agent takes no --from
      expect(refusal.message).toContain(
        ` The timeline stopped after log position 1000 (${shown.length} entries shown above): the output is @c's ` +
          'timeline in the log up to #1000 only. Once the log can be read again, run the same command for the whole of it.',
      );
    } finally {
      await close();
    }
  });

  test("an agent token is refused with the server's envelope (exit 2); no token is refused before any request", async () => {
    const refused = await audit(['replay', '--url', server.url, '--json'], { MAILBOX_AUDIT_TOKEN: tokens['@a'] });
    expect(refused.code).toBe(2);
    expect(refused.stdout).toBe('');
    expect(JSON.parse(refused.stderr)).toMatchObject({ code: 'FORBIDDEN' });
    const anonymous = await audit(['replay', '--url', server.url, '--json']);
    expect(anonymous.code).toBe(2);
    expect(JSON.parse(anonymous.stderr)).toMatchObject({
      code: 'UNAUTHENTICATED',
      message: expect.stringContaining('MAILBOX_AUDIT_TOKEN'),
    });
  });

  test('a token the server does not know is refused naming where it came from and the token audit wants (exit 2)', async () => {
    // It said only the server's "The bearer token is not valid for this mailbox (mistyped, or another mailbox's). An
    // agent gets its token when an admin registers it ...": not which setting held it, nor that audit wants an auditor's.
    const retiredToken = (await server.register(['@gone']))['@gone'];
    expect((await server.call('DELETE', '/v1/agents/@gone', { token: server.adminToken })).status).toBe(200);
    for (const [args, env, from, said] of [
      [[], { MAILBOX_AUDIT_TOKEN: 'mbx_mistyped' }, 'MAILBOX_AUDIT_TOKEN', 'The bearer token is not valid for this mailbox'],
      [['--token', 'mbx_mistyped'], {}, '--token', 'The bearer token is not valid for this mailbox'],
      [[], { MAILBOX_AUDIT_TOKEN: retiredToken }, 'MAILBOX_AUDIT_TOKEN', 'Agent @gone was retired; its token no longer works.'],
    ] as const) {
      for (const command of [['replay'], ['agent', '@a'], ['unwoken'], ['message', messageId]]) {
        const run = await audit([...command, '--url', server.url, ...args, '--json'], env);
        expect({ code: run.code, stdout: run.stdout }).toEqual({ code: 2, stdout: '' });
        const refusal = JSON.parse(run.stderr);
        expect(refusal).toMatchObject({ error: 'Unauthenticated', code: 'UNAUTHENTICATED', field: from });
        expect(refusal.message).toContain(said);
        expect(refusal.message).toMatch(
          new RegExp(
            ` The token sent is ${from}'s: set it to an auditor's token \\(mailbox agent add @ops --role auditor prints one\\) or the admin token\\.$`,
          ),
        );
      }
    }
  });

  test('MAILBOX_AUDIT_TOKEN or --token set but empty or blank is refused naming it, before any request (exit 2)', async () => {
    // Blank, it was sent as a token and refused "The Authorization header must be 'Bearer <token>'."; empty, it said
    // "set MAILBOX_AUDIT_TOKEN" while it was set.
    const rejections = async () =>
      (await server.call('GET', '/v1/audit/rejections?limit=100', { token: tokens['@auditor'] })).body.rejections;
    const before = await rejections();
    for (const [value, what] of [
      ['', 'is set but empty (a ${VARIABLE} substituted while VARIABLE was unset?)'],
      ['   ', 'is blank (only spaces)'],
    ]) {
      const fromEnv = await audit(['replay', '--url', server.url, '--json'], { MAILBOX_AUDIT_TOKEN: value });
      expect({ code: fromEnv.code, stdout: fromEnv.stdout }).toEqual({ code: 2, stdout: '' });
      expect(JSON.parse(fromEnv.stderr)).toEqual({
        error: 'Invalid configuration',
        code: 'VALIDATION_FAILED',
        field: 'MAILBOX_AUDIT_TOKEN',
        message:
          `MAILBOX_AUDIT_TOKEN ${what}: set it to an auditor's token (mailbox agent add @ops --role auditor prints one) ` +
          'or the admin token, or unset it and pass --token <token>.',
      });
      const fromFlag = await audit(['unwoken', '--url', server.url, '--token', value, '--json']);
      expect({ code: fromFlag.code, stdout: fromFlag.stdout }).toEqual({ code: 2, stdout: '' });
      expect(JSON.parse(fromFlag.stderr)).toEqual({
        error: 'Validation failed',
        code: 'VALIDATION_FAILED',
        field: '--token',
        message: `--token is ${value === '' ? 'empty' : 'blank (only spaces)'}: pass an auditor's or the admin token, or leave --token out and set MAILBOX_AUDIT_TOKEN.`,
      });
    }
    // A good --token wins over an empty variable.
    const flagged = await audit(
      ['replay', '--url', server.url, '--token', tokens['@auditor'], '--from', '1', '--type', 'AgentRegistered'],
      {
        MAILBOX_AUDIT_TOKEN: '',
      },
    );
    expect(flagged.code).toBe(0);
    // None of them reached the server: it refused nothing more.
    expect(await rejections()).toEqual(before);
  });

  // The client's line told an auditor to "Set --url or MAILBOX_URL", and audit reads no MAILBOX_URL: set, it changed
  // nothing (without --url, audit reads the configured store, never a server).
  test('no server at --url: refused naming --url only, not MAILBOX_URL, which audit does not read (exit 2)', async () => {
    const url = `http://127.0.0.1:${await freePort()}`;
    const run = await audit(['replay', '--url', url, '--json'], { MAILBOX_AUDIT_TOKEN: tokens['@auditor'] });
    expect(run.stdout).toBe('');
    expect(JSON.parse(run.stderr)).toEqual({
      error: 'Mailbox unreachable',
      code: 'UNAVAILABLE',
      message: `Cannot reach the mailbox at ${url} (ECONNREFUSED); is \`mailbox serve\` running? Check --url.`,
      url,
    });
    expect(run.code).toBe(2);
    // Without --json: one line, as serve's refusals.
    expect(await audit(['replay', '--url', url], { MAILBOX_AUDIT_TOKEN: tokens['@auditor'] })).toEqual({
      code: 2,
      stdout: '',
      stderr: `mailbox: Cannot reach the mailbox at ${url} (ECONNREFUSED); is \`mailbox serve\` running? Check --url.\n`,
    });
  });

  test('a --url that is no http(s) URL, or names the API path, is refused naming --url only, not MAILBOX_URL (exit 2)', async () => {
    // They said "(--url or MAILBOX_URL)": an auditor who set MAILBOX_URL changed nothing, audit reads --url only.
    const env = { MAILBOX_AUDIT_TOKEN: tokens['@auditor'] };
    const bare = server.url.replace(/^http:\/\//, '');
    const noScheme = await audit(['unwoken', '--url', bare, '--json'], env);
    expect({ code: noScheme.code, stdout: noScheme.stdout }).toEqual({ code: 2, stdout: '' });
    expect(JSON.parse(noScheme.stderr)).toEqual({
      error: 'Invalid mailbox URL',
      code: 'VALIDATION_FAILED',
      field: 'url',
      message: `The mailbox URL '${bare}' is not an http:// or https:// URL; give the server's address, e.g. http://127.0.0.1:7420 (--url).`,
    });
    const apiPath = await audit(['replay', '--url', `${server.url}/v1`, '--json'], env);
    expect({ code: apiPath.code, stdout: apiPath.stdout }).toEqual({ code: 2, stdout: '' });
    expect(JSON.parse(apiPath.stderr)).toEqual({
      error: 'Invalid mailbox URL',
      code: 'VALIDATION_FAILED',
      field: 'url',
      message: `The mailbox URL '${server.url}/v1' names an API path (/v1); give the server's root, e.g. ${server.url} (--url): the client adds /v1/... itself.`,
    });
  });
});

describe('audit replay read directly and over --url, on one SQLite log', () => {
  let sqlite: TestServer;
  let dataDir: string;
  let auditor: string;

  beforeAll(async () => {
    dataDir = tempDir('mailbox-audit-summary-');
    sqlite = await startTestServer({ dataDir, eventStoreUrl: undefined });
    await sqlite.register(['@a', '@b', '@c']);
    auditor = (await sqlite.register(['@auditor'], 'auditor'))['@auditor'];
    expect((await sqlite.call('DELETE', '/v1/agents/@c', { token: sqlite.adminToken })).status).toBe(200);
    const as = sqlite.mailbox.asActor({ identity: '@a', role: 'agent' });
    for (let i = 0; i < 20; i++) await as.send({ to: '@b', subject: `m${i}`, body: 'x' });
  });
  afterAll(() => sqlite.close());

  test('its "M of N events shown" counts the same events both ways, and names the range N counts', async () => {
    // A stream's replay said "1 of 5 events shown" read directly (the stream's events) and "1 of 25 events shown" over
    // --url (the log it scanned for them), and neither said what N counted.
    const head = (await allEvents(sqlite.mailbox)).length;
    const lines = async (args: string[]) => {
      const direct = await audit(['replay', ...args], { MAILBOX_DATA_DIR: dataDir, MAILBOX_LOG_LEVEL: 'silent' });
      const remote = await audit(['replay', ...args, '--url', sqlite.url], { MAILBOX_AUDIT_TOKEN: auditor });
      expect([direct.code, remote.code]).toEqual([0, 0]);
      expect(remote.stdout).toBe(direct.stdout);
      expect(remote.stderr).toBe(direct.stderr);
      return direct.stderr;
    };
    expect(await lines(['--stream', 'mailbox-agents', '--type', 'AgentRetired'])).toBe(
      '1 of 5 events shown (stream mailbox-agents, --type AgentRetired)\n',
    );
    // From the retirement on, the agents stream holds one event: the retirement.
    expect(await lines(['--stream', 'mailbox-agents', '--from', '5'])).toBe(
      '1 of 1 events shown (stream mailbox-agents, from position 5)\n',
    );
    expect(await lines(['--from', '6', '--type', 'MessageSent'])).toBe(
      `20 of ${head - 5} events shown (from position 6, --type MessageSent)\n`,
    );
    expect(await lines([])).toBe(`${head} of ${head} events shown\n`);
  });
});
