/**
 * Redis keeps its views across upgrades. A mailbox of a newer version served views built by an earlier version's
 * rules as they stood (what its rules compute differently showed only for events applied from then on), and nothing
 * said so: operators.md asked for a manual `mailbox projections rebuild` after such an upgrade. Now every generation
 * records the version of the rules that built it; a mailbox that starts on views of other rules (or of none recorded:
 * version 1) says so in its log and rebuilds them from the log beside the ones served, switching when done, and
 * `mailbox projections status` says it too. Views of this version's rules are left as they are.
 */
import { Redis } from 'ioredis';
import { checkReadiness, type Readiness } from '../../src/adapters/http/readiness';
import { RedisKeys } from '../../src/adapters/projections/redisKeys';
import { runStatusCommand, type ProjectionsIo } from '../../src/cli/commands/projections';
import { ADMIN_ACTOR } from '../../src/commands/roles';
import { createMailbox, type Mailbox } from '../../src/mailbox';
import { READ_MODEL_VERSION } from '../../src/projections/readModel/readModelVersion';
import { capture } from '../support/auditCli';
import { tempDir } from '../support/fixtures';
import { recordingLogger } from '../support/recordingLogger';
import { startRedis, type TestRedis } from '../support/redisServer';
import { waitFor } from '../support/waitFor';
import { REDIS_TEST_TIMEOUT_ENV, REDIS_TEST_TIMEOUT_MS } from '../support/redisDeadline';

let redis: TestRedis;
let client: Redis;
beforeAll(async () => {
  redis = await startRedis();
  client = new Redis(redis.url);
});
afterAll(async () => {
  client.disconnect();
  await redis.stop();
});

async function status(env: NodeJS.ProcessEnv): Promise<Record<string, unknown>> {
  const out = capture();
  const err = capture();
  process.exitCode = undefined;
  await runStatusCommand({ stdout: out.stream, stderr: err.stream, env } as ProjectionsIo);
  process.exitCode = undefined;
  return JSON.parse(out.text()) as Record<string, unknown>;
}

test("views built by an earlier version are rebuilt with this version's rules at start; views of this version are kept", async () => {
  const dataDir = tempDir('mailbox-rules-');
  const namespace = `rules${process.pid}`;
  const keys = new RedisKeys(namespace);
  const config = {
    dataDir,
    adminToken: 'a'.repeat(32),
    logLevel: 'silent' as const,
    redisUrl: redis.url,
    redisNamespace: namespace,
    redisTimeoutMs: REDIS_TEST_TIMEOUT_MS,
  };
  const activePrefix = async () => (await client.get(keys.active)) ?? keys.defaultPrefix;
  const open = async () => {
    const { logger, messages } = recordingLogger();
    const mailbox = await createMailbox(config, { logger });
    return { mailbox, messages };
  };
  const unread = async (mailbox: Mailbox, identity: string) => mailbox.asActor({ identity, role: 'agent' }).unreadCount();

  // A first mailbox: three agents, direct mail, a broadcast, a receipt.
  const first = await open();
  const admin = first.mailbox.asActor(ADMIN_ACTOR);
  for (const identity of ['@a', '@b', '@c']) await admin.registerAgent({ identity });
  const as = (identity: string) => first.mailbox.asActor({ identity, role: 'agent' });
  const toB = await as('@a').send({ to: '@b', subject: 'one', body: 'x' });
  await as('@c').send({ to: '@b', subject: 'two', body: 'x', priority: 'high' });
  await as('@a').send({ to: 'AGENT:*', subject: 'all', body: 'x' });
  await as('@b').markRead({ messageIds: [toB.messageId] });
  expect(await unread(first.mailbox, '@b')).toMatchObject({ unread: 2, byPriority: { low: 0, normal: 1, high: 1 } });
  expect(await unread(first.mailbox, '@c')).toMatchObject({ unread: 1 });
  await first.mailbox.close(); // waits for the look at the views' rules
  const built = await activePrefix();
  expect(await client.get(keys.rulesOf(built))).toBe(READ_MODEL_VERSION); // the claim recorded this version's rules
  expect(first.messages().filter((m) => /read model's rules/.test(m))).toEqual([]);

  // As an earlier version left them: no rules recorded, and counts its rules computed otherwise.
  await client.del(keys.rulesOf(built));
  await client.hset(keys.agent(built, '@b', 'counts'), 'normal', '7');
  await client.del(keys.agent(built, '@c', 'unread'));
  const env = {
    MAILBOX_LOG_LEVEL: 'silent',
    MAILBOX_DATA_DIR: dataDir,
    MAILBOX_REDIS_URL: redis.url,
    MAILBOX_REDIS_NAMESPACE: namespace,
    ...REDIS_TEST_TIMEOUT_ENV,
  };
  expect(await status(env)).toMatchObject({
    viewsRules: '1',
    rules: READ_MODEL_VERSION,
    rulesNote: expect.stringContaining('mailbox serve of this version rebuilds them at its start'),
  });

  const second = await open();
  // The rebuild is held at its first look at the log (before the continuation of open() runs, it is still waiting for
  // Redis), so that /readyz is asked while it is under way: it said nothing of it.
  let release = () => {};
  const held = new Promise<void>((resolve) => (release = resolve));
  const log = second.mailbox.eventStore;
  const logIdentity = log.logIdentity.bind(log);
  const hold = jest.spyOn(log, 'logIdentity').mockImplementation(async () => (await held, logIdentity()));
  let during: Readiness;
  try {
    await waitFor(() => second.mailbox.runner.getStatus().rulesRebuild !== null, { what: 'the rebuild under way' });
    during = await checkReadiness(second.mailbox);
  } finally {
    release();
    hold.mockRestore();
  }
  expect(during).toMatchObject({ ready: true, status: 'ready' }); // the views of the earlier rules serve meanwhile
  expect(during.checks.projections.rulesRebuild).toEqual({
    viewsRules: '1',
    rules: READ_MODEL_VERSION,
    since: expect.any(String),
    note:
      `the views are being rebuilt from the log with the read model's rules of version ${READ_MODEL_VERSION}, beside the ` +
      'ones served, which answer meanwhile by the rules of version 1 (they differ only where the rules changed); the ' +
      'switch comes when the rebuild has caught up',
  });
  await second.mailbox.rulesRebuilt;
  expect((await checkReadiness(second.mailbox)).checks.projections).not.toHaveProperty('rulesRebuild');
  const rebuilt = await activePrefix();
  expect(rebuilt).not.toBe(built);
  expect(await client.get(keys.rulesOf(rebuilt))).toBe(READ_MODEL_VERSION);
  expect(second.messages()).toEqual(
    expect.arrayContaining([
      expect.stringContaining(
        `were built by the read model's rules of version 1 (recorded by none before version 2), this mailbox's are version ${READ_MODEL_VERSION}: rebuilding them`,
      ),
      expect.stringContaining(`rebuilt the views with the rules of version ${READ_MODEL_VERSION}`),
    ]),
  );
  expect(await unread(second.mailbox, '@b')).toMatchObject({ unread: 2, byPriority: { low: 0, normal: 1, high: 1 } });
  expect(await unread(second.mailbox, '@c')).toMatchObject({ unread: 1 });
  expect(await unread(second.mailbox, '@a')).toMatchObject({ unread: 0 });
  // The live projector follows the new generation: a send after the switch is in the views.
  await second.mailbox.asActor({ identity: '@c', role: 'agent' }).send({ to: '@a', subject: 'after', body: 'x' });
  expect(await unread(second.mailbox, '@a')).toMatchObject({ unread: 1 });
  // Its own switch is said by its own lines, not again as a rebuild run beside it: the positive signal, two more looks
  // of the projector at the views (each second).
  const views = second.mailbox.projections;
  const binding = views.binding.bind(views);
  let looks = 0;
  views.binding = async () => ((looks += 1), binding());
  await waitFor(() => looks >= 2, { timeoutMs: 15_000, what: 'two more looks at the views' });
  expect(second.messages().filter((m) => /were switched to generation/.test(m))).toEqual([]);
  await second.mailbox.close();
  expect(await status(env)).not.toHaveProperty('rulesNote');

  // This version's views: kept as they are.
  const third = await open();
  await third.mailbox.rulesRebuilt;
  expect(await activePrefix()).toBe(rebuilt);
  expect(third.messages().filter((m) => /read model's rules/.test(m))).toEqual([]);
  await third.mailbox.close();
});

test("a look at the views' rules that fails is taken again with backoff, the views served and /readyz saying so; once answered, the views are rebuilt", async () => {
  const dataDir = tempDir('mailbox-rules-look-');
  const namespace = `ruleslook${process.pid}`;
  const keys = new RedisKeys(namespace);
  const config = {
    dataDir,
    adminToken: 'a'.repeat(32),
    logLevel: 'silent' as const,
    redisUrl: redis.url,
    redisNamespace: namespace,
    redisTimeoutMs: REDIS_TEST_TIMEOUT_MS,
  };
  const activePrefix = async () => (await client.get(keys.active)) ?? keys.defaultPrefix;
  const unread = async (mailbox: Mailbox, identity: string) => mailbox.asActor({ identity, role: 'agent' }).unreadCount();
  const first = await createMailbox(config);
  const admin = first.asActor(ADMIN_ACTOR);
  for (const identity of ['@a', '@b', '@c']) await admin.registerAgent({ identity });
  await first.asActor({ identity: '@a', role: 'agent' }).send({ to: '@b', subject: 'one', body: 'x' });
  await first.asActor({ identity: '@a', role: 'agent' }).send({ to: 'AGENT:*', subject: 'all', body: 'x' });
  await first.close();
  const built = await activePrefix();
  // As an earlier version left them (no rules recorded, @c's unread lost), and the list of generations being built
  // unreadable (a key of another type): the look at the rules fails, as it does when Redis does not answer it.
  await client.del(keys.rulesOf(built));
  await client.del(keys.agent(built, '@c', 'unread'));
  await client.set(keys.building, 'not a hash');

  const { logger, lines } = recordingLogger();
  const second = await createMailbox(config, { logger });
  try {
    await waitFor(() => second.runner.getStatus().rulesUnknown !== null, { timeoutMs: 15_000, what: 'the failed look' });
    const during = await checkReadiness(second);
    expect(during).toMatchObject({ ready: true }); // the views serve meanwhile, as they are
    expect(during.checks.projections.rulesUnknown).toEqual({
      since: expect.any(String),
      lastError: expect.stringContaining('WRONGTYPE'),
      nextLookAt: expect.any(String),
      note: expect.stringContaining('could not tell which rules built the views'),
    });
    expect(await unread(second, '@b')).toMatchObject({ unread: 2 });
    // Still unknown after a second look: one warn line in all, naming when it looks again.
    const looked = second.runner.getStatus().rulesUnknown!.nextLookAt;
    await waitFor(() => second.runner.getStatus().rulesUnknown?.nextLookAt !== looked, {
      timeoutMs: 15_000,
      what: 'a second failed look',
    });
    const warned = lines.filter((line) => /which rules built the views/.test(String(line.msg)) && line.level === 40);
    expect(warned).toEqual([
      expect.objectContaining({
        msg: expect.stringMatching(
          /^projections: could not tell which rules built the views \(.*WRONGTYPE.*\); they are served as they are meanwhile; looking again in 1 s/,
        ),
        nextLookMs: 1000,
      }),
    ]);

    // The store answers the look again: it is taken without a restart, and the views of the earlier rules rebuilt.
    await client.del(keys.building);
    await waitFor(async () => (await client.get(keys.rulesOf(await activePrefix()))) === READ_MODEL_VERSION, {
      timeoutMs: 60_000,
      what: "the views rebuilt with this version's rules",
    });
    await second.rulesRebuilt;
    expect(second.runner.getStatus().rulesUnknown).toBeNull();
    expect((await checkReadiness(second)).checks.projections).not.toHaveProperty('rulesUnknown');
    expect(await activePrefix()).not.toBe(built);
    expect(await unread(second, '@c')).toMatchObject({ unread: 1 });
    expect(await unread(second, '@b')).toMatchObject({ unread: 2 });
    expect(await unread(second, '@a')).toMatchObject({ unread: 0 });
    expect(lines.map((line) => line.msg)).toEqual(
      expect.arrayContaining(['projections: told which rules built the views at last (what was done about them is said above)']),
    );
  } finally {
    await second.close();
  }
}, 120_000);
