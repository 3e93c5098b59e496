/**
 * Redis flushed twice while the mailbox rebuilds its views (a start on views of an earlier version's rules rebuilds
 * them beside the served ones; the flush makes the projector rebuild the served ones in place too). The mailbox's own
 * log never changed, but the views ended marked as another log's: the rules rebuild had written into its generation
 * after the flush had taken the generation's log record, and switched to it, so every read answered 503 "belong to
 * another event log" (or "hold nothing of this mailbox's event log") until a restart or a take-over. Now the loss is
 * noticed, the views are rebuilt from this log again, and reads are served once that is done (503 saying the views
 * are being rebuilt meanwhile).
 */
import { Redis } from 'ioredis';
import { checkReadiness } from '../../src/adapters/http/readiness';
import { RedisKeys } from '../../src/adapters/projections/redisKeys';
import { leaseKey } from '../../src/adapters/projections/redisLease';
import { ADMIN_ACTOR } from '../../src/commands/roles';
import { isMailboxError } from '../../src/errors';
import { createMailbox, type Mailbox } from '../../src/mailbox';
import { READ_MODEL_VERSION } from '../../src/projections/readModel/readModelVersion';
import { rebuildProjections } from '../../src/projections/rebuild';
import { allEvents, tempDir } from '../support/fixtures';
import { holdApplies, type HeldApplies } from '../support/heldApplies';
import { recordingLogger } from '../support/recordingLogger';
import { startRedis, type TestRedis } from '../support/redisServer';
import { waitFor } from '../support/waitFor';
import { REDIS_TEST_TIMEOUT_MS } from '../support/redisDeadline';

let redis: TestRedis;
let client: Redis;
const opened: Mailbox[] = [];
let releases: Array<() => void> = [];
beforeAll(async () => {
  redis = await startRedis();
  client = new Redis(redis.url);
});
afterEach(async () => {
  for (const release of releases) release();
  releases = [];
  for (const mailbox of opened.splice(0)) await mailbox.close().catch(() => undefined);
});
afterAll(async () => {
  client.disconnect();
  await redis.stop();
});

const unread = async (mailbox: Mailbox, identity: string) => mailbox.asActor({ identity, role: 'agent' }).unreadCount();
const refusal = async (mailbox: Mailbox, identity: string) =>
  unread(mailbox, identity).then(
    (counts) => ({ served: counts.unread }),
    (error: unknown) => (isMailboxError(error) ? { code: error.code, message: error.message } : { thrown: String(error) }),
  );

test('flushed twice during the rebuilds: the views are rebuilt from this log again and served, never taken for another log', async () => {
  const namespace = `flushrebuild${process.pid}`;
  const keys = new RedisKeys(namespace);
  const config = {
    dataDir: tempDir('mailbox-flushrebuild-'),
    adminToken: 'a'.repeat(32),
    logLevel: 'silent' as const,
    redisUrl: redis.url,
    redisNamespace: namespace,
    redisTimeoutMs: REDIS_TEST_TIMEOUT_MS,
  };
  const open = async () => {
    const { logger, messages } = recordingLogger();
    const mailbox = await createMailbox(config, { logger });
    opened.push(mailbox);
    return { mailbox, messages };
  };

  // A first mailbox: three agents, direct mail, a broadcast, a receipt.
  const first = await open();
  const admin = first.mailbox.asActor(ADMIN_ACTOR);
  for (const identity of ['@a', '@b', '@c']) await admin.registerAgent({ identity });
  const as = (identity: string) => first.mailbox.asActor({ identity, role: 'agent' });
  const toB = await as('@a').send({ to: '@b', subject: 'one', body: 'x' });
  await as('@c').send({ to: '@b', subject: 'two', body: 'x', priority: 'high' });
  await as('@a').send({ to: 'AGENT:*', subject: 'all', body: 'x' });
  await as('@b').markRead({ messageIds: [toB.messageId] });
  expect(await unread(first.mailbox, '@b')).toMatchObject({ unread: 2 });
  await first.mailbox.close();
  opened.splice(opened.indexOf(first.mailbox), 1);
  // As an earlier version left them (no rules recorded): the next start rebuilds them beside the served ones.
  const active = (await client.get(keys.active)) ?? keys.defaultPrefix;
  await client.del(keys.rulesOf(active));

  const second = await open();
  const mailbox = second.mailbox;
  const logIdentity = await mailbox.eventStore.logIdentity();
  const eventsBefore = (await allEvents(mailbox)).length;
  // The rules rebuild is held once it has made its generation (before its first page goes in).
  const generations = mailbox.projections.generations!();
  const create = generations.create.bind(generations);
  let releaseRebuild = () => {};
  const rebuildHeld = new Promise<void>((resolve) => (releaseRebuild = resolve));
  releases.push(releaseRebuild);
  let created = false;
  generations.create = async (identity) => {
    const generation = await create(identity);
    created = true;
    await rebuildHeld;
    return generation;
  };
  await waitFor(() => created, { timeoutMs: 15_000, what: "the rules rebuild's generation made" });

  // First flush: the projector finds the served views gone and rebuilds them in place (held at its first apply).
  const held: HeldApplies = holdApplies(mailbox.projections);
  releases.push(() => held.release());
  expect(await client.flushall()).toBe('OK');
  await waitFor(() => held.waiting > 0, { timeoutMs: 15_000, what: 'the rebuild of the lost views started' });
  const during = await refusal(mailbox, '@b');
  expect(during).toMatchObject({ code: 'UNAVAILABLE', message: expect.stringContaining('are being rebuilt from the event log') });

  // Second flush, while both rebuilds are under way; then both go on.
  expect(await client.flushall()).toBe('OK');
  releaseRebuild();
  held.release();
  await mailbox.rulesRebuilt;

  await waitFor(async () => 'served' in (await refusal(mailbox, '@b')), {
    timeoutMs: 15_000,
    what: 'reads served again',
  });
  expect(await unread(mailbox, '@b')).toMatchObject({ unread: 2, byPriority: { low: 0, normal: 1, high: 1 } });
  expect(await unread(mailbox, '@c')).toMatchObject({ unread: 1 });
  expect(await unread(mailbox, '@a')).toMatchObject({ unread: 0 });
  const status = mailbox.runner.getStatus();
  expect({ views: status.views, viewsProblem: status.viewsProblem }).toEqual({ views: 'own', viewsProblem: null });
  const served = (await client.get(keys.active)) ?? keys.defaultPrefix;
  expect(await client.get(keys.logOf(served))).toBe(logIdentity);
  expect((await checkReadiness(mailbox)).ready).toBe(true);
  expect((await allEvents(mailbox)).length).toBe(eventsBefore); // the refused read wrote nothing
  // The rules rebuild's generation lost its log record to the flush: dropped, never switched to, and said so.
  expect(second.messages()).toEqual(
    expect.arrayContaining([expect.stringContaining('the views store lost its data while the views were rebuilt for the rules')]),
  );
  expect(second.messages().filter((m) => /now belong to another log/.test(m))).toEqual([]);
  expect(await client.keys(`${namespace}:v2:*`)).toEqual([]);
  // And it stays so: the projector's next looks (each second) find the views this log's.
  await mailbox.asActor({ identity: '@c', role: 'agent' }).send({ to: '@a', subject: 'after', body: 'x' });
  expect(await unread(mailbox, '@a')).toMatchObject({ unread: 1 });
  expect(mailbox.runner.getStatus().views).toBe('own');
});

// After a rebuild the views are a later generation (<ns>:v2:); a flush takes the active pointer too, so the projector
// rebuilds them in place in the first generation (<ns>:). The first apply to meet the flush named the generation it had
// cached (v2), and the rules record went there (dropped with it): the views rebuilt had none, so every start after took
// them for views of rules version 1 and rebuilt them all beside the served ones (a rebuild a second flush could break).
test("flushed while a later generation is active: the views rebuilt in place record this version's rules", async () => {
  const namespace = `flushrules${process.pid}`;
  const keys = new RedisKeys(namespace);
  const config = {
    dataDir: tempDir('mailbox-flushrules-'),
    adminToken: 'a'.repeat(32),
    logLevel: 'silent' as const,
    redisUrl: redis.url,
    redisNamespace: namespace,
    redisTimeoutMs: REDIS_TEST_TIMEOUT_MS,
  };
  const first = await createMailbox(config);
  opened.push(first);
  const admin = first.asActor(ADMIN_ACTOR);
  for (const identity of ['@a', '@b', '@c']) await admin.registerAgent({ identity });
  const as = (identity: string) => first.asActor({ identity, role: 'agent' });
  await as('@a').send({ to: '@b', subject: 'one', body: 'x' });
  await as('@c').send({ to: '@b', subject: 'two', body: 'x' });
  await rebuildProjections(first.eventStore, first.projections.generations!(), { dropPreviousAfterMs: null });
  const rebuilt = (await client.get(keys.active))!;
  expect(rebuilt).toBe(`${namespace}:v2:`);

  // The projector's look at the views (each second) is held: the send's apply is the first to meet the flush.
  const views = first.projections;
  const binding = views.binding.bind(views);
  let lookAgain = () => {};
  const looked = new Promise<void>((resolve) => (lookAgain = resolve));
  releases.push(lookAgain);
  views.binding = async () => (await looked, binding());
  expect(await client.flushall()).toBe('OK');
  await as('@a').send({ to: '@c', subject: 'after the flush', body: 'x' });
  views.binding = binding;
  lookAgain();
  await waitFor(async () => 'served' in (await refusal(first, '@b')), { timeoutMs: 15_000, what: 'reads served again' });
  expect(await unread(first, '@b')).toMatchObject({ unread: 2 });
  expect(await unread(first, '@c')).toMatchObject({ unread: 1 });
  expect(await client.get(keys.active)).toBeNull(); // rebuilt in place, in the first generation
  expect(await client.get(keys.rulesOf(keys.defaultPrefix))).toBe(READ_MODEL_VERSION);
  expect(await client.keys(`${rebuilt}*`)).toEqual([]); // nothing recorded on the generation the flush took
  await first.close();
  opened.splice(opened.indexOf(first), 1);

  // The next start finds this version's rules: nothing rebuilt.
  const { logger, messages } = recordingLogger();
  const second = await createMailbox(config, { logger });
  opened.push(second);
  await second.rulesRebuilt;
  expect(messages().filter((m) => /read model's rules/.test(m))).toEqual([]);
  expect(await unread(second, '@b')).toMatchObject({ unread: 2 });
});

// The projector rebuilds lost views in place with each batch's chunks of events pipelined (64 per script call). The
// first batch of such a rebuild expected no checkpoint, so a second flush between two of its chunks left the chunks
// after it to claim the emptied views and go on from their own positions: the events of the chunks before were missing
// for good (acknowledged mail never shown, counts short) while the views looked whole, and were served as whole.
test('flushed again between two chunks of the rebuild in place: no event is missing, nothing is served with a gap', async () => {
  const namespace = `flushchunks${process.pid}`;
  const keys = new RedisKeys(namespace);
  const config = {
    dataDir: tempDir('mailbox-flushchunks-'),
    adminToken: 'a'.repeat(32),
    logLevel: 'silent' as const,
    redisUrl: redis.url,
    redisNamespace: namespace,
    redisTimeoutMs: REDIS_TEST_TIMEOUT_MS,
  };
  const { logger, messages } = recordingLogger();
  const mailbox = await createMailbox(config, { logger });
  opened.push(mailbox);
  const agents = ['@a', '@b', '@c'];
  for (const identity of agents) await mailbox.asActor(ADMIN_ACTOR).registerAgent({ identity });
  const as = (identity: string) => mailbox.asActor({ identity, role: 'agent' });
  // Enough mail that the rebuild's first batch spans several script calls: each agent writes to the next one.
  const sent = new Map<string, string[]>(agents.map((identity) => [identity, []]));
  const read = new Map<string, string[]>(agents.map((identity) => [identity, []]));
  for (let round = 0; round < 40; round++) {
    for (const [i, from] of agents.entries()) {
      const to = agents[(i + 1) % agents.length];
      const { messageId } = await as(from).send({ to, subject: `round ${round}`, body: 'x' });
      sent.get(to)!.push(messageId);
    }
  }
  for (const identity of agents) {
    const first = sent.get(identity)!.slice(0, 3); // early: in the rebuild's first chunk
    await as(identity).markRead({ messageIds: first });
    read.get(identity)!.push(...first);
  }
  const whole = async (lists: boolean) => {
    for (const identity of agents) {
      const unreadIds = sent.get(identity)!.filter((id) => !read.get(identity)!.includes(id));
      expect(await unread(mailbox, identity)).toMatchObject({ unread: unreadIds.length });
      if (!lists) continue; // a listing marks entries seen (events written later)
      const listed = await as(identity).listMessages({ limit: 200 });
      expect(listed.messages.map((m) => m.messageId).sort()).toEqual([...sent.get(identity)!].sort());
      const unreadListed = await as(identity).listMessages({ status: 'unread', limit: 200 });
      expect(unreadListed.messages.map((m) => m.messageId).sort()).toEqual([...unreadIds].sort());
    }
  };
  await whole(false);
  const eventsBefore = (await allEvents(mailbox)).length;
  expect(eventsBefore).toBeGreaterThan(2 * 64);

  // The projector's calls of the apply script: the rebuild's first call that goes in (it expects no checkpoint, and the
  // lease the flush took is the projector's again) passes; the calls pipelined beside it (its batch's later chunks,
  // issued in the same turn) are held, and every call after them, until the test lets them go, in the order issued.
  // Beside a first refused, they go on at once.
  const projector = (mailbox.projections as unknown as { views: { client: Record<string, unknown> } }).views.client;
  type Reply = [string, string, number];
  const apply = (projector.mailboxApply as (...args: unknown[]) => Promise<Reply>).bind(projector);
  const held: Array<() => void> = [];
  const hold = (args: unknown[]) =>
    new Promise<Reply>((resolve, reject) => held.push(() => void apply(...args).then(resolve, reject)));
  releases.push(() => held.splice(0).forEach((go) => go()));
  let turn: { first: Promise<Reply>; beside: number } | null = null;
  let caught: { beside: number } | null = null;
  projector.mailboxApply = (...args: unknown[]) => {
    if (turn !== null) {
      turn.beside++;
      return turn.first.then((reply) => (reply[0] === 'ok' ? hold(args) : apply(...args)));
    }
    if (caught !== null) return hold(args);
    const expected = args[Number(args[0]) + 2]; // after the key count, the keys and the flags
    if (expected !== '') return apply(...args);
    const thisTurn = (turn = { first: apply(...args), beside: 0 });
    queueMicrotask(() => (turn = null));
    void thisTurn.first.then((reply) => {
      if (reply[0] === 'ok' && thisTurn.beside > 0) caught = thisTurn;
    });
    return thisTurn.first;
  };

  // First flush: the projector finds the views gone and rebuilds them in place; its first chunk goes in.
  expect(await client.flushall()).toBe('OK');
  await waitFor(() => caught !== null && held.length >= caught.beside, {
    timeoutMs: 15_000,
    what: "the rebuild's first chunk applied, with the batch's later chunks held behind it",
  });
  expect(await refusal(mailbox, '@b')).toMatchObject({
    code: 'UNAVAILABLE',
    message: expect.stringContaining('are being rebuilt from the event log'),
  });

  // Second flush between the first chunk and the next: the chunk's events are gone again, and the projector lease
  // with them. The held chunks go on once the projector holds the lease again, under a new token (tokens never repeat
  // after a loss: redisLease.ts), so the fence refuses them as writes of its earlier term, which changes nothing of
  // this term's. (Before, the token counter started again from 1 with the flush: the lease named the same holder as
  // the held chunks did, and only the contiguity of the chunks refused them.)
  const lease = leaseKey(keys, 'projector');
  const holder = await client.get(lease);
  expect(holder).not.toBeNull();
  expect(await client.flushall()).toBe('OK');
  await waitFor(async () => (await client.get(lease)) !== null, { timeoutMs: 15_000, what: 'the projector lease taken again' });
  const retaken = await client.get(lease);
  expect(retaken).not.toBe(holder);
  expect(retaken!.slice(0, retaken!.lastIndexOf(':'))).toBe(holder!.slice(0, holder!.lastIndexOf(':')));
  projector.mailboxApply = apply;
  for (const go of held.splice(0)) go();

  // Reads are refused until the views are rebuilt whole; then every message is where it belongs, counts exact.
  await waitFor(async () => (await Promise.all(agents.map((a) => refusal(mailbox, a)))).every((r) => 'served' in r), {
    timeoutMs: 15_000,
    what: 'reads served again',
  });
  expect((await allEvents(mailbox)).length).toBe(eventsBefore); // the refused reads wrote nothing
  await whole(true);
  expect(await client.get(keys.logOf(keys.defaultPrefix))).toBe(await mailbox.eventStore.logIdentity());
  const status = mailbox.runner.getStatus();
  expect({ views: status.views, viewsProblem: status.viewsProblem }).toEqual({ views: 'own', viewsProblem: null });
  expect((await checkReadiness(mailbox)).ready).toBe(true);
  expect(messages().filter((m) => /now belong to another log/.test(m))).toEqual([]);
  // The refusal of its earlier term's chunks did not depose this term: the node leads under the token it took again.
  expect(status.leadership).toEqual({
    role: 'leading',
    node: expect.any(String),
    token: retaken!.slice(retaken!.lastIndexOf(':') + 1),
  });
  // (A step-down saying that nobody holds the lease any longer may come first, from an apply refused before the
  // renewal found the lease gone: the flush took it.)
  const node = retaken!.slice(0, retaken!.lastIndexOf(':'));
  expect(messages().filter((m) => m.includes(`${node} holds the projector lease`))).toEqual([]);
});
