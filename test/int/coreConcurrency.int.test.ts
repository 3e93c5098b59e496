/**
 * Acceptance (issue 2): racing commands. Idempotent sends that race, many
 * receipts on one broadcast at once, and two Mailbox instances on one SQLite
 * file (two processes' worth of optimistic concurrency): conflicts must be
 * re-decided on fresh state, never overwritten, so no receipt is ever lost.
 */
import { ConcurrencyConflict } from '../../src/errors';
import type { Mailbox } from '../../src/mailbox';
import { ADMIN_ACTOR } from '../../src/commands/roles';
import { allEvents, registerAgents } from '../support/fixtures';
import { eventsOfType, mailboxHarness, STORE_KINDS } from './coreHarness';

const recipientNames = (count: number) => Array.from({ length: count }, (_, i) => `@r${String(i).padStart(2, '0')}`);

describe.each(STORE_KINDS)('racing commands on one instance ($name event store)', (kind) => {
  const harness = mailboxHarness(kind);

  // DESIGN: a retry returns the original result (deep-equal); a3709e1 put replayed: true in it, which broke that.
  it('a replay returns the original result unchanged and writes no event; only sendOutcome says replayed', async () => {
    const mailbox = await harness.open();
    const { '@a': a, '@b': b, '@c': c } = await registerAgents(mailbox, ['@a', '@b', '@c']);
    const input = { to: '@b', subject: 'once', body: 'exactly once' };
    const first = await a.sendOutcome(input, { idempotencyKey: 'k1' });
    expect(first).toEqual({ result: expect.objectContaining({ status: 'sent', recipients: ['@b'] }), replayed: false });
    expect(first.result).not.toHaveProperty('replayed');
    const before = (await allEvents(mailbox)).length;
    expect(await a.send(input, { idempotencyKey: 'k1' })).toEqual(first.result);
    expect(await a.sendOutcome(input, { idempotencyKey: 'k1' })).toEqual({ result: first.result, replayed: true });
    expect(await allEvents(mailbox)).toHaveLength(before);
    // The key is the sender's: C's send with it is C's own new message.
    const fromC = await c.sendOutcome(input, { idempotencyKey: 'k1' });
    expect(fromC.replayed).toBe(false);
    expect(fromC.result.messageId).not.toBe(first.result.messageId);
    expect(await allEvents(mailbox)).toHaveLength(before + 1);
    expect((await b.unreadCount()).unreadCount).toBe(2);
  });

  it('the same idempotencyKey sent 20 times concurrently -> one MessageSent, 20 identical results, one not a replay', async () => {
    const mailbox = await harness.open();
    const { '@a': a, '@b': b } = await registerAgents(mailbox, ['@a', '@b', '@c']);
    const input = { to: '@b', subject: 'once', body: 'exactly once' };
    const outcomes = await Promise.all(Array.from({ length: 20 }, () => a.sendOutcome(input, { idempotencyKey: 'retry-me' })));
    const results = outcomes.map((o) => o.result);
    expect(new Set(results.map((r) => JSON.stringify(r))).size).toBe(1);
    expect(outcomes.filter((o) => !o.replayed)).toHaveLength(1);
    expect(results[0]).toMatchObject({ status: 'sent', to: '@b', recipients: ['@b'] });
    expect((await eventsOfType(mailbox, 'MessageSent')).map((e) => e.data.messageId)).toEqual([results[0].messageId]);
    expect(await b.unreadCount()).toMatchObject({ unreadCount: 1 });
  });

  it('replays return the original result in full, warnings included (unregistered recipient, permissive mode)', async () => {
    const mailbox = await harness.open();
    const { '@a': a } = await registerAgents(mailbox, ['@a', '@b', '@neo-gpt']);
    const input = { to: '@neo-gtp', subject: 'typo', body: 'x' };
    const results = await Promise.all(Array.from({ length: 20 }, () => a.send(input, { idempotencyKey: 'warned' })));
    expect(results[0].warnings).toEqual([expect.objectContaining({ code: 'UNREGISTERED_RECIPIENT', suggestions: ['@neo-gpt'] })]);
    expect(new Set(results.map((r) => JSON.stringify(r))).size).toBe(1);
    expect(await a.send(input, { idempotencyKey: 'warned' })).toEqual(results[0]);
    expect(await eventsOfType(mailbox, 'MessageSent')).toHaveLength(1);
  });

  it('a replay spelling the same request another equivalent way (task as JSON string, v1.0 state) is the same request', async () => {
    const mailbox = await harness.open();
    const { '@a': a } = await registerAgents(mailbox, ['@a', '@b', '@c']);
    const original = await a.send(
      { to: '@b', subject: 't', body: 'x', task: { state: 'input-required' } },
      { idempotencyKey: 'eq' },
    );
    const replay = await a.send(
      { to: '@b', subject: 't', body: 'x', priority: 'normal', task: JSON.stringify({ state: 'TASK_STATE_INPUT_REQUIRED' }) },
      { idempotencyKey: 'eq' },
    );
    expect(replay).toEqual(original);
    expect(await eventsOfType(mailbox, 'MessageSent')).toHaveLength(1);
  });

  it('the key is per sender: another sender with the same key sends its own message', async () => {
    const mailbox = await harness.open();
    const { '@a': a, '@c': c, '@b': b } = await registerAgents(mailbox, ['@a', '@b', '@c']);
    const input = { to: '@b', subject: 'same key', body: 'x', idempotencyKey: 'shared-key' };
    const [fromA, fromC] = await Promise.all([a.send(input), c.send(input)]);
    expect(fromA.messageId).not.toBe(fromC.messageId);
    expect(await eventsOfType(mailbox, 'MessageSent')).toHaveLength(2);
    expect((await b.unreadCount()).unreadCount).toBe(2);
  });

  it('a broadcast with the same key raced 20 times -> one message, one delivery per recipient', async () => {
    const mailbox = await harness.open();
    const { '@a': a } = await registerAgents(mailbox, ['@a', '@b', '@c']);
    const results = await Promise.all(
      Array.from({ length: 20 }, () => a.send({ to: 'AGENT:*', subject: 'all', body: 'x', idempotencyKey: 'bk' })),
    );
    expect(new Set(results.map((r) => JSON.stringify(r))).size).toBe(1);
    expect(await eventsOfType(mailbox, 'MessageSent')).toHaveLength(1);
    expect((await eventsOfType(mailbox, 'BroadcastDelivered')).map((e) => e.data.recipient).sort()).toEqual(['@b', '@c']);
  });

  it('50 concurrent MarkReads from 50 recipients of one broadcast -> 50 receipts, none lost', async () => {
    const mailbox = await harness.open();
    const names = recipientNames(50);
    const agents = await registerAgents(mailbox, ['@sender', ...names]);
    const sent = await agents['@sender'].send({ to: 'AGENT:*', subject: 'all hands', body: 'x' });
    expect(sent.recipients).toHaveLength(50);
    const reads = await Promise.all(names.map((name) => agents[name].markRead({ messageId: sent.messageId })));
    expect(reads.every((r) => 'status' in r && r.status === 'read')).toBe(true);
    const receipts = await eventsOfType(mailbox, 'ReceiptRead');
    expect(receipts.map((e) => e.data.reader).sort()).toEqual(names);
    const detail = await agents['@sender'].getMessage(sent.messageId);
    expect(detail.receipts).toHaveLength(50);
    expect(detail.receipts!.every((r) => r.readAt !== null)).toBe(true);
    const counts = await Promise.all(names.map((name) => agents[name].unreadCount()));
    expect(counts.map((c) => c.unreadCount)).toEqual(names.map(() => 0));
    // Revisions of the message stream are consecutive: nothing was overwritten.
    const stream = await mailbox.eventStore.readStream(`mailbox-message-${sent.messageId}`);
    expect(stream.map((e) => e.revision)).toEqual(stream.map((_, i) => BigInt(i)));
    expect(stream).toHaveLength(1 + 50 + 50);
  });
});

/** Counts the ConcurrencyConflicts an instance's command handler ran into (and then re-decided). */
function countConflicts(mailbox: Mailbox): { count: number } {
  const seen = { count: 0 };
  const append = mailbox.eventStore.append.bind(mailbox.eventStore);
  jest.spyOn(mailbox.eventStore, 'append').mockImplementation(async (...args) => {
    try {
      return await append(...args);
    } catch (error) {
      if (error instanceof ConcurrencyConflict) seen.count++;
      throw error;
    }
  });
  return seen;
}

async function caughtUp(mailboxes: Mailbox[]): Promise<void> {
  const head = await mailboxes[0].eventStore.headPosition();
  if (head === null) return;
  for (const mailbox of mailboxes) expect(await mailbox.runner.waitFor(head, 5000)).toBe(true);
}

describe('two Mailbox instances on one SQLite file', () => {
  const sqlite = STORE_KINDS.find((k) => k.name === 'sqlite')!;
  const harness = mailboxHarness(sqlite);
  // Two writers of one log. Each keeps its views in its own memory, projected from the whole log: one SQLite views
  // file has one owner (sqliteViewsOwnerLock.ts), since each process would wake only its own agents.
  const open = () => harness.open({ views: 'memory' });

  afterEach(() => jest.restoreAllMocks());

  it('concurrent MarkReads through both instances all land: conflicts are re-decided, not overwritten', async () => {
    const one = await open();
    const two = await open();
    const names = recipientNames(40);
    const viaOne = await registerAgents(one, ['@sender', ...names]);
    const sent = await viaOne['@sender'].send({ to: 'AGENT:*', subject: 'race', body: 'x' });
    const viaTwo = Object.fromEntries(await Promise.all(names.map(async (n) => [n, await two.as(viaOne[n].token)] as const)));
    const conflicts = [countConflicts(one), countConflicts(two)];

    const reads = await Promise.all(
      names.map((name, i) => (i % 2 === 0 ? viaOne[name] : viaTwo[name]).markRead({ messageId: sent.messageId })),
    );
    expect(reads).toHaveLength(40);
    expect(conflicts[0].count + conflicts[1].count).toBeGreaterThan(0); // the race really happened

    const receipts = await eventsOfType(one, 'ReceiptRead');
    expect(receipts.map((e) => e.data.reader).sort()).toEqual(names);
    const stream = await one.eventStore.readStream(`mailbox-message-${sent.messageId}`);
    expect(stream.map((e) => e.revision)).toEqual(stream.map((_, i) => BigInt(i)));
    await caughtUp([one, two]);
    for (const mailbox of [one, two]) {
      const detail = await mailbox.asActor({ identity: '@sender', role: 'agent' }).getMessage(sent.messageId);
      expect(detail.receipts!.filter((r) => r.readAt !== null)).toHaveLength(40);
      for (const name of names)
        expect((await mailbox.asActor({ identity: name, role: 'agent' }).unreadCount()).unreadCount).toBe(0);
    }
  });

  it('the same idempotencyKey raced through both instances -> one MessageSent, identical results, one not a replay', async () => {
    const one = await open();
    const two = await open();
    const { '@a': a1, '@b': b1 } = await registerAgents(one, ['@a', '@b', '@c']);
    const a2 = await two.as(a1.token);
    const input = { to: '@b', subject: 'once', body: 'x', idempotencyKey: 'cross-instance' };
    const outcomes = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? a1 : a2).sendOutcome(input)));
    expect(new Set(outcomes.map((o) => JSON.stringify(o.result))).size).toBe(1);
    expect(outcomes.filter((o) => !o.replayed)).toHaveLength(1);
    expect(await eventsOfType(one, 'MessageSent')).toHaveLength(1);
    await caughtUp([one, two]);
    expect((await b1.unreadCount()).unreadCount).toBe(1);
  });

  it('registrations and sends through both instances interleave without loss', async () => {
    const one = await open();
    const two = await open();
    const conflicts = [countConflicts(one), countConflicts(two)];
    const names = recipientNames(20);
    const registrations = await Promise.all(
      names.map((identity, i) => (i % 2 ? one : two).asActor(ADMIN_ACTOR).registerAgent({ identity })),
    );
    expect(registrations.map((r) => r.identity).sort()).toEqual(names);
    expect(conflicts[0].count + conflicts[1].count).toBeGreaterThan(0);
    const registry = await one.eventStore.readStream('mailbox-agents');
    expect(registry.map((e) => e.revision)).toEqual(names.map((_, i) => BigInt(i)));
    // A broadcast from either instance sees the whole registry.
    const sender = await two.as(registrations[0].token);
    const sent = await sender.send({ to: 'AGENT:*', subject: 'all', body: 'x' });
    expect(sent.recipients.sort()).toEqual(names.filter((n) => n !== registrations[0].identity));
  });
});
