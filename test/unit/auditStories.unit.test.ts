/**
 * The pure audit readers: a message's story and an agent's timeline, told
 * from events written by the real command path (memory adapters, no I/O).
 */
import { messageStory, formatMessageStory } from '../../src/audit/messageStory';
import { Writable } from 'node:stream';
import { AgentTimeline, formatTimelineEntry } from '../../src/audit/agentTimeline';
import { ADMIN_ACTOR } from '../../src/commands/roles';
import { runAgent, runReplay } from '../../src/audit/auditCommands';
import { eventStoreSource } from '../../src/audit/logSource';
import { diffHeartbeats, diffListing, sameValue } from '../../src/audit/verify/viewDiff';
import { messageStream } from '../../src/events/streams';
import type { StoredEvent } from '../../src/events/types';
import type { ListedMessage } from '../../src/projections/projectionStore';
import { allEvents, memoryMailbox, registerAgents, silentLogger } from '../support/fixtures';
import { startHeartbeat } from '../../src/heartbeat/startHeartbeat';

async function broadcastScenario() {
  const mailbox = await memoryMailbox();
  const { '@a': a, '@b': b, '@c': c, '@d': d } = await registerAgents(mailbox, ['@a', '@b', '@c', '@d']);
  const sent = await a.send({ to: 'AGENT:*', subject: 'deploy', body: 'at noon', priority: 'high' });
  const readB = await b.markRead({ messageId: sent.messageId });
  await c.archive(sent.messageId);
  const readD = await d.markRead({ messageId: sent.messageId });
  const direct = await b.send({ to: '@a', subject: 'ack', body: 'ok' });
  await a.markRead({ messageId: direct.messageId });
  const events = await allEvents(mailbox);
  await mailbox.close();
  return { sent, readB, readD, direct, events };
}

describe('audit message story', () => {
  test('sender, full broadcast audience and per-recipient read and archive times, as the events say', async () => {
    const { sent, events } = await broadcastScenario();
    const stream = events.filter((e) => e.streamName === messageStream(sent.messageId));
    const story = messageStory(stream)!;
    const reads = stream.filter((e): e is StoredEvent & { type: 'ReceiptRead' } => e.type === 'ReceiptRead');
    const readAt = (who: string) => reads.find((e) => e.data.reader === who)!.data.readAt;
    const archived = stream.find((e) => e.type === 'MessageArchived')!;

    expect(story.sent).toMatchObject({
      from: '@a',
      to: 'AGENT:*',
      isBroadcast: true,
      subject: 'deploy',
      priority: 'high',
      actor: '@a',
    });
    expect(story.audience.sort()).toEqual(['@b', '@c', '@d']);
    expect(story.recipients.map((r) => [r.identity, r.readAt, r.archivedAt])).toEqual([
      ['@b', readAt('@b'), null],
      ['@c', null, archived.metadata.at],
      ['@d', readAt('@d'), null],
    ]);
    expect(story.recipients.every((r) => r.deliveredAt === sent.sentAt)).toBe(true);
    expect(story.anomalies).toEqual([]);
    const text = formatMessageStory(story);
    expect(text).toContain(`by @a to AGENT:* (broadcast)`);
    expect(text).toContain('audience  3 recipients: @b, @c, @d');
  });

  test('an unknown message has no story; a read by a stranger is an anomaly, not hidden', async () => {
    const { sent, events } = await broadcastScenario();
    expect(messageStory([])).toBeNull();
    const stream = events.filter((e) => e.streamName === messageStream(sent.messageId));
    const forged = { ...structuredClone(stream.find((e) => e.type === 'ReceiptRead')!), position: 999n } as StoredEvent;
    (forged.data as { reader: string }).reader = '@mallory';
    expect(messageStory([...stream, forged])!.anomalies).toEqual([
      'a read receipt for @mallory at position 999, who is not in the audience',
    ]);
  });

  test('a send that expects replies (its ReplyRequested) is no anomaly; the story says when they are due; a second one is', async () => {
    const mailbox = await memoryMailbox();
    const { '@a': a, '@b': b, '@c': c } = await registerAgents(mailbox, ['@a', '@b', '@c', '@d']);
    const direct = await a.send({ to: ['@b', '@c', '@d'], subject: 'review', body: '.', expectsReplyBy: '10m' });
    const broadcast = await a.send({ to: 'AGENT:*', subject: 'all', body: '.', expectsReplyBy: '1h' });
    await b.markRead({ messageId: direct.messageId });
    await c.send({ to: '@a', subject: 're', body: 'ok', inReplyTo: broadcast.messageId });
    const events = await allEvents(mailbox);
    await mailbox.close();
    for (const [sent, minutes] of [
      [direct, 10],
      [broadcast, 60],
    ] as const) {
      const stream = events.filter((e) => e.streamName === messageStream(sent.messageId));
      const story = messageStory(stream)!;
      expect(story.anomalies).toEqual([]);
      const dueBy = new Date(Date.parse(sent.sentAt) + minutes * 60_000).toISOString();
      expect(story.replyDueBy).toBe(dueBy);
      const text = formatMessageStory(story);
      expect(text).not.toContain('ANOMALIES');
      expect(text).toContain(`replies   due by ${dueBy}`);
    }
    const stream = events.filter((e) => e.streamName === messageStream(direct.messageId));
    const requested = stream.find((e) => e.type === 'ReplyRequested')!;
    const again = { ...structuredClone(requested), position: 999n } as StoredEvent;
    expect(messageStory([...stream, again])!.anomalies).toEqual(['a second ReplyRequested at position 999']);
  });
});

describe('audit agent timeline', () => {
  test('what @a sent, received and read, and who read what it sent', async () => {
    const { sent, direct, events } = await broadcastScenario();
    const timeline = new AgentTimeline('@a');
    const entries = events.flatMap((e) => timeline.entriesFor(e));
    expect(entries.map((e) => [e.kind, e.messageId, e.counterpart])).toEqual([
      ['registered', null, null],
      ['sent', sent.messageId, 'AGENT:*'],
      ['read_by_recipient', sent.messageId, '@b'],
      ['read_by_recipient', sent.messageId, '@d'],
      ['received', direct.messageId, '@b'],
      ['read', direct.messageId, null],
    ]);
  });
  test('a lapsed lease is in the holder’s and the sender’s timelines, by the sweeper; not in a bystander’s', async () => {
    let now = Date.parse('2030-05-01T12:00:00.000Z');
    const mailbox = await memoryMailbox({ taskSweepMs: 0 }, { clock: { now: () => new Date(now) } });
    const { '@a': a, '@b': b } = await registerAgents(mailbox, ['@a', '@b', '@c']);
    const { messageId: taskId } = await a.send({ to: 'AGENT:*', subject: 'leased', body: 'x', task: {} });
    await b.claimTask(taskId, { leaseSeconds: 30 });
    now += 31_000;
    expect(await mailbox.sweeper.sweepOnce()).toMatchObject({ changed: 1 });
    const events = await allEvents(mailbox);
    await mailbox.close();
    const tasks = (identity: string) => {
      const timeline = new AgentTimeline(identity);
      return events
        .flatMap((e) => timeline.entriesFor(e))
        .filter((e) => e.kind === 'task')
        .map((e) => [e.counterpart, e.detail]);
    };
    const lapsed = `lease of @b lapsed at 2030-05-01T12:00:30.000Z (Submitted -> Submitted, claimable again)`;
    const claimed = `claimed by @b (lease to 2030-05-01T12:00:30.000Z)`;
    expect(tasks('@b')).toEqual([
      [null, claimed],
      ['sweeper', lapsed],
    ]);
    expect(tasks('@a')).toEqual([
      ['@b', claimed],
      ['sweeper', lapsed],
    ]);
    expect(tasks('@c')).toEqual([]);
  });
  // The text quoted the task's words as if a subject, and the reason within them came out escaped (\"late\").
  test('a task event in the text: its words as they are, the reason quoted once', async () => {
    const mailbox = await memoryMailbox();
    const { '@a': a, '@b': b } = await registerAgents(mailbox, ['@a', '@b', '@c']);
    const { messageId: taskId } = await a.send({ to: '@b', subject: 'job', body: 'x', task: {} });
    await b.updateTask({ taskId, to: 'Working' });
    await b.updateTask({ taskId, to: 'Failed', reason: 'late' });
    const events = await allEvents(mailbox);
    await mailbox.close();
    const timeline = new AgentTimeline('@b');
    const lines = events
      .flatMap((e) => timeline.entriesFor(e))
      .filter((e) => e.kind === 'task')
      .map((e) => formatTimelineEntry(e).split(/ {2,}/).slice(2).join('  '));
    expect(lines).toEqual([
      `task  message ${taskId}  Submitted -> Working by @b`,
      `task  message ${taskId}  Working -> Failed by @b (reason: "late")`,
    ]);
  });
});

// A reply asked of an agent, or overdue from it, was in no timeline: an auditor following @c never saw that @a
// expected its reply, nor that it was late (the events name the message, not its recipients).
test('audit agent: a reply asked (of a list, of a broadcast audience) and one overdue are in the timelines of those concerned', async () => {
  let now = Date.parse('2030-05-01T12:00:00.000Z');
  const clock = { now: () => new Date(now) };
  const mailbox = await memoryMailbox({}, { clock });
  const { '@a': a, '@b': b } = await registerAgents(mailbox, ['@a', '@b', '@c']);
  const list = await a.send({ to: ['@b', '@c'], subject: 'both', body: 'x', expectsReplyBy: '1m' });
  const all = await b.send({ to: 'AGENT:*', subject: 'all', body: 'x', expectsReplyBy: '1h' });
  await b.send({ to: '@a', subject: 're: both', body: 'done', inReplyTo: list.messageId });
  now += 61_000;
  const heartbeat = await startHeartbeat(mailbox, {
    clock,
    schedule: false,
    settings: { metricsPort: null },
    logger: silentLogger,
  });
  expect((await heartbeat.tick()).replies.overdue).toHaveLength(1);
  await heartbeat.stop();
  const events = await allEvents(mailbox);
  await mailbox.close();
  const replies = (identity: string) => {
    const timeline = new AgentTimeline(identity);
    return events
      .flatMap((e) => timeline.entriesFor(e))
      .filter((e) => e.kind.startsWith('reply_'))
      .map((e) => formatTimelineEntry(e).split(/ {2,}/).slice(2).join('  '));
  };
  expect(replies('@a')).toEqual([
    `reply_requested  message ${list.messageId}  asked for replies by 2030-05-01T12:01:00.000Z`,
    `reply_requested  message ${all.messageId}  @b expects a reply by 2030-05-01T13:00:00.000Z`,
    `reply_overdue  message ${list.messageId}  replies overdue since 2030-05-01T12:01:00.000Z, waiting on @c`,
  ]);
  expect(replies('@b')).toEqual([
    `reply_requested  message ${list.messageId}  @a expects a reply by 2030-05-01T12:01:00.000Z`,
    `reply_requested  message ${all.messageId}  asked for replies by 2030-05-01T13:00:00.000Z`,
  ]);
  expect(replies('@c')).toEqual([
    `reply_requested  message ${list.messageId}  @a expects a reply by 2030-05-01T12:01:00.000Z`,
    `reply_requested  message ${all.messageId}  @b expects a reply by 2030-05-01T13:00:00.000Z`,
    `reply_overdue  message ${list.messageId}  reply to @a overdue since 2030-05-01T12:01:00.000Z`,
  ]);
});

// `mailbox audit agent` drew '#9  <at>' and '#10  <at>': the columns after the position moved once positions reached
// two digits. Padded now by the widest position: the log head's (direct access), or the widest shown (over the API).
test('audit agent: a retirement and a new token say who did them (the lines said "retired" and nothing more)', async () => {
  const mailbox = await memoryMailbox();
  await registerAgents(mailbox, ['@a', '@b']);
  const admin = mailbox.asActor(ADMIN_ACTOR);
  await admin.rotateToken('@b');
  await admin.retireAgent('@b');
  const events = await allEvents(mailbox);
  await mailbox.close();
  const timeline = new AgentTimeline('@b');
  const entries = events.flatMap((event) => timeline.entriesFor(event));
  expect(entries.map((e) => [e.kind, e.counterpart])).toEqual([
    ['registered', null],
    ['token_rotated', 'admin'],
    ['retired', 'admin'],
  ]);
  const text = entries.map((entry) => formatTimelineEntry(entry, 1));
  expect(text[1]).toMatch(/ token_rotated +got a new token from admin$/);
  expect(text[2]).toMatch(/ retired +retired by admin$/);
});

describe('audit agent timeline text', () => {
  async function timelineText(tellsHead: boolean) {
    const mailbox = await memoryMailbox();
    const { '@a': a, '@b': b } = await registerAgents(mailbox, ['@a', '@b']);
    for (let i = 0; i < 6; i++) {
      const sent = await a.send({ to: '@b', subject: `note ${i}`, body: 'x' });
      await b.markRead({ messageId: sent.messageId });
    }
    const store = eventStoreSource(mailbox.eventStore);
    const source = tellsHead ? store : { ...store, head: async () => undefined };
    const chunks: string[] = [];
    const stdout = new Writable({
      write(chunk, _encoding, done) {
        chunks.push(String(chunk));
        done();
      },
    });
    const said: string[] = [];
    const stderr = new Writable({
      write(chunk, _encoding, done) {
        said.push(String(chunk));
        done();
      },
    });
    const code = await runAgent(source, '@a', { json: false, progress: false }, { stdout, stderr, env: {} });
    const head = await mailbox.eventStore.headPosition();
    await mailbox.close();
    return { code, lines: chunks.join('').trimEnd().split('\n'), head: head!.toString(), stderr: said.join('') };
  }

  // The timeline ended with its last entry: an auditor counting an agent's sends or reads counted lines by hand.
  test.each([
    ['direct access, which tells the log head', true, ' in the log up to position 14\n'],
    ['over the API, which does not', false, ' in the log\n'],
  ])('%s: stderr says how many entries of each kind it showed', async (_, tellsHead, scope) => {
    const { lines, stderr, head } = await timelineText(tellsHead);
    expect(head).toBe('14'); // two registrations, six sends, six reads
    const kinds = lines.map((line) => line.split(/ {2,}/)[2]);
    expect(kinds.filter((kind) => kind === 'sent')).toHaveLength(6);
    expect(kinds.filter((kind) => kind === 'read_by_recipient')).toHaveLength(6);
    expect(stderr).toBe(`@a: 13 entries (registered 1, sent 6, read_by_recipient 6)${scope}`);
  });

  test.each([
    ['the log head tells the width (direct access)', true],
    ['the widest position shown (over the API, no head)', false],
  ])('%s: every column starts at the same place once positions reach two digits', async (_, tellsHead) => {
    const { code, lines, head } = await timelineText(tellsHead);
    expect(code).toBe(0);
    const positions = lines.map((line) => /^#(\d+)/.exec(line)![1]);
    expect(positions.some((p) => p.length === 1) && positions.some((p) => p.length === 2)).toBe(true);
    const width = tellsHead ? head.length : Math.max(...positions.map((p) => p.length));
    for (const line of lines) {
      expect(line).toMatch(new RegExp(`^#\\d+ *  \\d{4}-\\d\\d-\\d\\dT\\S+Z  \\S`));
      expect(line.indexOf('  20')).toBe(1 + width); // the time column, after '#' and the padded position
      expect(line.slice(1 + width + 2 + 24 + 2, 1 + width + 2 + 24 + 2 + 17)).toMatch(/^[a-z_]+ *$/); // the kind column
    }
    expect(lines.find((line) => line.startsWith('#1 '))).toMatch(new RegExp(`^#1 {${width - 1}}  2`));
  });
});

// `mailbox audit replay` drew '#9  <at>' and '#10  <at>' as the agent timeline once did: the time, type and text
// columns moved once positions reached two digits. Padded now by the log head's digits (direct access).
test('audit replay text: every column starts at the same place once positions reach two digits', async () => {
  const mailbox = await memoryMailbox();
  const { '@a': a, '@b': b } = await registerAgents(mailbox, ['@a', '@b']);
  for (let i = 0; i < 6; i++)
    await b.markRead({ messageId: (await a.send({ to: '@b', subject: `n${i}`, body: 'x' })).messageId });
  const chunks: string[] = [];
  const stdout = new Writable({
    write(chunk, _encoding, done) {
      chunks.push(String(chunk));
      done();
    },
  });
  const filter = { from: null, types: null, stream: null };
  await runReplay(
    eventStoreSource(mailbox.eventStore),
    filter,
    { json: false, progress: false },
    { stdout, stderr: stdout, env: {} },
  );
  const width = (await mailbox.eventStore.headPosition())!.toString().length;
  await mailbox.close();
  const lines = chunks.join('').trimEnd().split('\n');
  const positions = lines.map((line) => /^#(\d+)/.exec(line)![1]);
  expect(positions.some((p) => p.length === 1) && positions.some((p) => p.length === 2)).toBe(true);
  for (const line of lines) {
    expect(line.indexOf('  20')).toBe(1 + width); // the time column, after '#' and the padded position
    const type = 1 + width + 2 + 24 + 2; // where the type column starts; the text starts 18 + 2 after it
    expect(line.slice(type, type + 20)).toMatch(/^[A-Za-z]+ +$/);
    expect(line[type + 20]).not.toBe(' ');
  }
});

describe('view diff', () => {
  const entry = (messageId: string, readAt: string | null = null): ListedMessage => ({
    messageId,
    from: '@a',
    to: '@b',
    subject: 's',
    priority: 'normal',
    threadId: messageId,
    inReplyTo: null,
    tags: ['x'],
    sentAt: '2030-01-01T00:00:00.000Z',
    readAt,
    seenAt: null,
  });

  test('identical listings have no differences; a changed field names the message and both values', () => {
    expect(diffListing('inbox', '@b', [entry('m2'), entry('m1')], [entry('m2'), entry('m1')])).toEqual([]);
    expect(
      diffListing('inbox', '@b', [entry('m2'), entry('m1')], [entry('m2'), entry('m1', '2030-01-02T00:00:00.000Z')]),
    ).toEqual([
      { view: 'inbox', identity: '@b', messageId: 'm1', field: 'readAt', expected: null, actual: '2030-01-02T00:00:00.000Z' },
    ]);
  });

  test('missing, extra and reordered entries are each reported', () => {
    expect(diffListing('unread', '@b', [entry('m3'), entry('m2'), entry('m1')], [entry('m1'), entry('m3'), entry('m4')])).toEqual(
      [
        { view: 'unread', identity: '@b', messageId: 'm2', field: 'presence', expected: 'listed', actual: 'missing' },
        { view: 'unread', identity: '@b', messageId: 'm4', field: 'presence', expected: 'absent', actual: 'listed' },
        { view: 'unread', identity: '@b', field: 'order (newest first)', expected: ['m3', 'm1'], actual: ['m1', 'm3'] },
      ],
    );
  });

  test('an agent missing from one side equals the zero heartbeat; any count that differs is named', () => {
    const zero = {
      identity: '@c',
      unread: 0,
      unseen: 0,
      tasksWaiting: 0,
      tasksWaitingSince: null,
      byPriority: { low: 0, normal: 0, high: 0 },
      oldestUnreadAt: null,
      lastActivityAt: null,
      repliesOwed: 0,
      nextReplyDueBy: null,
    };
    expect(diffHeartbeats([zero], [])).toEqual([]);
    expect(diffHeartbeats([zero], [{ ...zero, unread: 1, byPriority: { low: 0, normal: 1, high: 0 } }])).toEqual([
      { view: 'heartbeat', identity: '@c', field: 'unread', expected: 0, actual: 1 },
      { view: 'heartbeat', identity: '@c', field: 'byPriority.normal', expected: 0, actual: 1 },
    ]);
  });

  test('deep equality ignores key order and undefined fields', () => {
    expect(sameValue({ a: 1, b: [1, { c: 2 }] }, { b: [1, { c: 2 }], a: 1, d: undefined })).toBe(true);
    expect(sameValue({ a: 1 }, { a: '1' })).toBe(false);
    expect(sameValue([1, 2], [2, 1])).toBe(false);
  });
});

describe('event JSON lines', () => {
  test('audit replay --json prints events exactly as GET /v1/audit/events serves them', async () => {
    const { eventJson, eventJsonLine } = await import('../../src/audit/eventFormat');
    const { eventToJson } = await import('../../src/application/mailboxQueries');
    const { events } = await broadcastScenario();
    expect(events.map(eventJson)).toEqual(events.map(eventToJson));
    expect(Object.keys(eventJson(events[0]))).toEqual(Object.keys(eventToJson(events[0])));
    expect(events.map(eventJsonLine)).toEqual(events.map((e) => JSON.stringify(eventToJson(e))));
  });
});

describe('scratch views (the read model as audit verify rebuilds it)', () => {
  test('agree with the in-memory projection store on every listing and count; a changed task or tag is not a match', async () => {
    const { ScratchViews } = await import('../../src/projections/readModel/scratchViews');
    const { matches } = await import('../../src/audit/verify/verifyProjections');
    const { projectStored } = await import('../../src/projections/projector');
    const { parseListQuery, viewQuery } = await import('../../src/application/listQueryParser');
    const mailbox = await memoryMailbox();
    const { '@a': a, '@b': b, '@c': c } = await registerAgents(mailbox, ['@a', '@b', '@c']);
    const tasked = await a.send({ to: '@b', subject: 'task', body: 'x', tags: ['t1', 't2'], task: { state: 'Working' } });
    const all = await a.send({ to: 'AGENT:*', subject: 'all', body: 'y', priority: 'high' });
    await b.send({ to: '@a', subject: 're', body: 'z', inReplyTo: tasked.messageId });
    await c.markRead({ messageId: all.messageId });
    await b.archive(all.messageId);
    const views = new ScratchViews();
    views.applyBatch((await allEvents(mailbox)).map(projectStored));
    const query = { inbox: { status: 'all' }, unread: { status: 'unread' }, outbox: { box: 'outbox' } } as const;
    for (const identity of ['@a', '@b', '@c']) {
      expect(views.heartbeat(identity)).toEqual(await mailbox.projections.heartbeat(identity));
      for (const view of ['inbox', 'unread', 'outbox'] as const) {
        const live = (await mailbox.projections.listMessages(identity, viewQuery(parseListQuery(query[view]), null))).messages;
        const expected = views.listing(identity, view);
        expect(expected.map((entry) => views.listed(entry, view))).toEqual(live);
        expect(expected.every((entry, i) => matches(views, entry, view, live[i]))).toBe(true);
      }
    }
    const [entry] = views.listing('@b', 'inbox').filter((e) => e.fields.messageId === tasked.messageId);
    const listed = views.listed(entry, 'inbox');
    expect(matches(views, entry, 'inbox', { ...listed, task: { ...listed.task!, state: 'Completed' } })).toBe(false);
    expect(matches(views, entry, 'inbox', { ...listed, tags: ['t1'] })).toBe(false);
    expect(matches(views, entry, 'inbox', { ...listed, recipientCount: 1 } as never)).toBe(false);
    await mailbox.close();
  });
});
