/**
 * `mailbox audit agent` and `mailbox audit replay` tell when an agent saw a message and when a wake reached it as the
 * log records them (MessagesSeen's seenAt, WakeObserved's observedAt: the times the delivery ledger shows), not when
 * the batch recording them was written (their metadata.at: seen marks and wakes are written off the request path,
 * up to MAILBOX_SEEN_FLUSH_MS or 100 ms later, and much later after an outage). A real server on the embedded
 * default (SQLite log and views file) on a clock that moves at every reading, so the two times always differ;
 * the CLI reads the data dir directly and over --url. Its text says how the wake came unquoted: "via stream" read as a
 * subject.
 */
import { runAuditCli as audit } from '../support/auditCli';
import { startClockedApiServer, type ClockedApiServer } from '../support/clockedApiServer';
import { apiCaller } from '../support/apiCalls';
import { ADMIN_TOKEN, tempDir } from '../support/fixtures';
import { subscribe } from './wakeSubscriber';

const T0 = Date.parse('2030-01-01T12:00:00.000Z');
let ticks = 0;
const now = () => new Date(T0 + 1000 * ticks++); // a second later at every reading

let server: ClockedApiServer;
const dataDir = tempDir('mailbox-timeline-times-');
beforeAll(async () => {
  server = await startClockedApiServer(now, { eventStoreUrl: undefined, dataDir });
});
afterAll(() => server.close());

const call = apiCaller(() => server.url);

test("audit agent's seen and woken entries carry the log's seenAt and observedAt, as the delivery ledger does", async () => {
  const tokens: Record<string, string> = {};
  for (const identity of ['@a', '@b', '@c'])
    tokens[identity] = (await call('POST', '/v1/agents', ADMIN_TOKEN, { identity })).body.token;
  const auditor = (await call('POST', '/v1/agents', ADMIN_TOKEN, { identity: '@aud', role: 'auditor' })).body.token;
  const wakes = await subscribe(server.url, tokens['@b']);
  try {
    const sent = await call('POST', '/v1/messages', tokens['@a'], { to: ['@b', '@c'], subject: 'plan', body: '.' });
    expect(sent.status).toBe(201);
    const messageId: string = sent.body.messageId;
    await wakes.next((e) => e.event === 'wake' && e.data.messageId === messageId);
    // @b and @c list their inboxes: each is noted seen now, and written at the next flush (a later time).
    for (const identity of ['@b', '@c']) expect((await call('GET', '/v1/messages', tokens[identity])).status).toBe(200);
    await server.mailbox.flushSeenMarks();
    await server.mailbox.wakeRecorder.flush();
    expect(await server.mailbox.runner.waitFor((await server.mailbox.eventStore.headPosition())!, 5000)).toBe(true);

    const ledger = (await call('GET', `/v1/messages/${messageId}/delivery`, tokens['@a'])).body;
    const row = (identity: string) => ledger.recipients.find((r: { recipient: string }) => r.recipient === identity);
    expect(row('@b')).toMatchObject({ woken: { via: 'stream' }, seen: { at: expect.any(String) } });
    expect(row('@c')).toMatchObject({ woken: null, seen: { at: expect.any(String) } });

    // The events were written later than what they record: a timeline at their write time told another time.
    const replayed = await audit(['replay', '--json', '--type', 'MessagesSeen,WakeObserved'], { MAILBOX_DATA_DIR: dataDir });
    const events = replayed.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(events).toHaveLength(3);
    for (const event of events) expect(event.metadata.at).not.toBe(event.data.seenAt ?? event.data.observedAt);

    const sources = [{ MAILBOX_DATA_DIR: dataDir }, { MAILBOX_AUDIT_TOKEN: auditor, url: server.url }];
    for (const { url, ...env } of sources) {
      const timeline = async (identity: string) => {
        const run = await audit(['agent', identity, '--json', ...(url ? ['--url', url] : [])], env);
        expect(run.code).toBe(0);
        return run.stdout
          .trim()
          .split('\n')
          .map((line) => JSON.parse(line))
          .filter((entry) => entry.messageId === messageId);
      };
      const b = await timeline('@b');
      expect(b.filter((e) => e.kind === 'woken').map((e) => e.at)).toEqual([row('@b').woken.at]);
      // Its subject is the message's; how the wake came is its detail (the subject read "via stream").
      expect(b.filter((e) => e.kind === 'woken').map((e) => [e.subject, e.detail])).toEqual([['plan', 'via stream']]);
      expect(b.filter((e) => e.kind === 'seen').map((e) => e.at)).toEqual([row('@b').seen.at]);
      const c = await timeline('@c');
      expect(c.filter((e) => e.kind === 'seen').map((e) => e.at)).toEqual([row('@c').seen.at]);
      expect(c.filter((e) => e.kind === 'woken')).toEqual([]);
      // The text says how the wake came in words: it quoted them as if a subject ("via stream").
      const text = await audit(['agent', '@b', ...(url ? ['--url', url] : [])], env);
      const woken = text.stdout.split('\n').filter((line) => / woken /.test(line));
      expect(woken).toEqual([expect.stringMatching(new RegExp(` woken +message ${messageId}  via stream$`))]);
    }

    // The replay's text names the recorded times beside the write time of its column.
    const text = await audit(['replay', '--type', 'MessagesSeen,WakeObserved'], { MAILBOX_DATA_DIR: dataDir });
    const lines = text.stdout.trim().split('\n');
    expect(lines.find((line) => line.includes('WakeObserved'))).toContain(
      `@b woken for message ${messageId} via stream at ${row('@b').woken.at}`,
    );
    for (const identity of ['@b', '@c'])
      expect(lines.find((line) => line.includes(`MessagesSeen        ${identity} saw`))).toContain(
        `${identity} saw 1 message at ${row(identity).seen.at} (listed or opened, which does not mark it read): ${messageId}`,
      );
  } finally {
    wakes.close();
  }
});
