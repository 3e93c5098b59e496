/**
 * Views belong to one log (issue 9, Deliver 3). Two mailboxes with two event
 * logs on one Redis namespace: the second refuses to start (one line, exit
 * code 2, nothing written to Redis) unless told to take the namespace over,
 * which rebuilds the views from its own log (readyz 503 until done) and never
 * while a projector of the other log is live. No agent, message or wake of
 * one log ever reaches the other's callers.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { parseConfig, type MailboxConfigInput } from '../../src/config';
import { startServer, type RunningServer } from '../../src/server';
import { isStartupError } from '../../src/startupError';
import { createMailbox } from '../../src/mailbox';
import { ADMIN_TOKEN, silentLogger, tempDir } from '../support/fixtures';
import { cliOnSources } from '../support/builtCli';
import { listing, spawnServe as serveRefused } from '../support/serveRefused';
import { EsdbDouble } from '../support/esdbDouble/esdbDouble';
import { freePort, startRedis, type TestRedis } from '../support/redisServer';
import { subscribe } from './wakeSubscriber';
import { REDIS_TEST_TIMEOUT_MS } from '../support/redisDeadline';

let redis: TestRedis;
let client: Redis;
const cleanups: Array<() => Promise<void> | void> = [];

beforeAll(async () => {
  redis = await startRedis();
  client = new Redis(redis.url);
});
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});
afterAll(async () => {
  client.disconnect();
  await redis.stop();
});

const namespace = () => `logid-${randomUUID().slice(0, 8)}`;

async function serve(config: MailboxConfigInput): Promise<RunningServer> {
  const server = await startServer(
    parseConfig({
      port: 0,
      adminToken: ADMIN_TOKEN,
      logLevel: 'silent',
      redisUrl: redis.url,
      redisTimeoutMs: REDIS_TEST_TIMEOUT_MS,
      ...config,
    }),
    { logger: silentLogger, print: () => undefined },
  );
  cleanups.push(() => server.close());
  return server;
}

async function call(url: string, method: string, pathname: string, token?: string, body?: unknown) {
  const response = await fetch(url + pathname, {
    method,
    body: body === undefined ? undefined : JSON.stringify(body),
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
  });
  const text = await response.text();
  return {
    status: response.status,
    body: text && (response.headers.get('content-type') ?? '').includes('json') ? JSON.parse(text) : text,
  };
}

async function registerAll(url: string, identities: string[]): Promise<Record<string, string>> {
  const tokens: Record<string, string> = {};
  for (const identity of identities) {
    const { status, body } = await call(url, 'POST', '/v1/agents', ADMIN_TOKEN, { identity });
    expect(status).toBe(201);
    tokens[identity] = body.token;
  }
  return tokens;
}

const subjects = async (url: string, token: string) =>
  (await call(url, 'GET', '/v1/messages', token)).body.messages.map((m: { subject: string }) => m.subject);
const agentsOf = async (url: string, token: string) =>
  (await call(url, 'GET', '/v1/agents', token)).body.agents.map((a: { identity: string }) => a.identity).sort();

/**
 * Every key of the namespace with its DUMP (value and type; TTLs aside): equal snapshots mean nothing was written.
 * The request limits shared by the API nodes (`<ns>:rate:{@a}`, `<ns>:streams:{@a}`) are left out: no view, and
 * they expire by themselves once idle.
 */
async function snapshot(ns: string): Promise<Record<string, string>> {
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [next, found] = await client.scan(cursor, 'MATCH', `${ns}*`, 'COUNT', 1000);
    keys.push(...found);
    cursor = next;
  } while (cursor !== '0');
  const dumped: Record<string, string> = {};
  for (const key of keys.filter((name) => !/^[^:]+:(rate|streams):\{/.test(name)).sort()) {
    const value = ((await client.dumpBuffer(key)) ?? Buffer.alloc(0)).toString('hex');
    dumped[key] = (await client.pttl(key)) > 0 ? `${VOLATILE}${value}` : value;
  }
  return dumped;
}
const VOLATILE = 'expires: ';

/**
 * Nothing was written since `before`: every key as it was, but a key with a time to live (a stopped mailbox's writer
 * mark) may have lapsed meanwhile: a lapse is no write (a CI run under load once took longer than its TTL to refuse).
 */
function expectUnwritten(before: Record<string, string>, after: Record<string, string>): void {
  const lapsed = Object.keys(before).filter((key) => before[key].startsWith(VOLATILE) && !(key in after));
  expect(after).toEqual(Object.fromEntries(Object.entries(before).filter(([key]) => !lapsed.includes(key))));
}

/** The real CLI entry point (bin/mailbox.js) on the sources: exit code and stderr. */
const spawnServe = (env: Record<string, string>) => serveRefused({ MAILBOX_ADMIN_TOKEN: ADMIN_TOKEN, ...env });

function expectRefusalLine(text: string, ns: string): void {
  const lines = text.trim().split('\n');
  expect(lines).toHaveLength(1);
  expect(lines[0]).toContain(`Redis namespace '${ns}'`);
  expect(lines[0]).toContain('another event log');
  expect(lines[0]).toContain('MAILBOX_REDIS_NAMESPACE');
  expect(lines[0]).toContain('mailbox projections rebuild --take-over');
  expect(lines[0]).toContain('MAILBOX_PROJECTIONS_ON_FOREIGN=take-over');
}

async function expectStartupRefusal(config: MailboxConfigInput, ns: string, contains = 'another event log'): Promise<void> {
  const error = await serve(config).then(
    () => null,
    (e: unknown) => e,
  );
  expect(isStartupError(error)).toBe(true);
  expect((error as Error).message).toContain(`Redis namespace '${ns}'`);
  expect((error as Error).message).toContain(contains);
  expect((error as { exitCode: number }).exitCode).toBe(2);
}

test('one after the other: the second log refuses (one line, exit 2, nothing written); take-over rebuilds (readyz 503 until done) and serves only its own log', async () => {
  const ns = namespace();
  const [dir1, dir2] = [tempDir(), tempDir()];
  // The first mailbox on the namespace: three agents, a message.
  const first = await serve({ dataDir: dir1, redisNamespace: ns });
  const log1 = await registerAll(first.url, ['@ana', '@bo', '@cy', '@old-only']);
  expect(
    (await call(first.url, 'POST', '/v1/messages', log1['@ana'], { to: '@bo', subject: 'from log 1', body: 'x' })).status,
  ).toBe(201);
  await first.close();

  // A second log (its own data dir), written with in-memory views: same agent names, many messages.
  const seed = await createMailbox({ dataDir: dir2, adminToken: ADMIN_TOKEN, logLevel: 'silent' }, { logger: silentLogger });
  const admin = seed.asActor({ identity: '@admin', role: 'admin' } as never);
  const log2: Record<string, string> = {};
  for (const identity of ['@ana', '@bo', '@cy']) log2[identity] = (await admin.registerAgent({ identity })).token;
  const ana2 = await seed.as(log2['@ana']);
  for (let i = 0; i < 400; i += 100) {
    await Promise.all(Array.from({ length: 100 }, (_, j) => ana2.send({ to: '@cy', subject: `bulk ${i + j}`, body: 'x' })));
  }
  await seed.close();

  const before = await snapshot(ns);
  expect(Object.keys(before).length).toBeGreaterThan(0);
  const refused = await spawnServe({ MAILBOX_DATA_DIR: dir2, MAILBOX_REDIS_URL: redis.url, MAILBOX_REDIS_NAMESPACE: ns });
  expect(refused.code).toBe(2);
  expectRefusalLine(refused.stderr.replace(/^mailbox: /, ''), ns);
  expectUnwritten(before, await snapshot(ns));

  // Take-over: the views are rebuilt from log 2; until then nothing is served. Redis holds every write for a moment
  // (CLIENT PAUSE WRITE: reads go on), so the rebuild is still under way while we look.
  await client.call('CLIENT', 'PAUSE', '60000', 'WRITE');
  const second = await serve({ dataDir: dir2, redisNamespace: ns, projectionsOnForeign: 'take-over' }).catch(async (error) => {
    await client.call('CLIENT', 'UNPAUSE');
    throw error;
  });
  let done = false;
  const ready = second.mailbox.viewsReady.then(() => (done = true));
  // Both are asked while the rebuild's first write waits (a read queued behind it on the store's connection answers after it).
  const agentsAsked = call(second.url, 'GET', '/v1/agents', log2['@ana']);
  const during = await call(second.url, 'GET', '/readyz');
  const doneWhilePaused = done;
  await client.call('CLIENT', 'UNPAUSE');
  const agentsDuring = await agentsAsked;
  expect(doneWhilePaused).toBe(false);
  expect(during.status).toBe(503);
  expect(during.body.checks.projections).toMatchObject({
    ok: false,
    running: false,
    views: 'foreign',
    viewsProblem: expect.stringContaining(`Taking over Redis namespace '${ns}'`),
  });
  expect(agentsDuring.status).toBe(503); // never log 1's agents
  expect(agentsDuring.body.message).toContain('another event log');
  await ready;
  const after = await call(second.url, 'GET', '/readyz');
  expect(after.status).toBe(200);
  expect(after.body.projections).toMatchObject({ views: 'own', logIdentity: await second.mailbox.eventStore.logIdentity() });

  expect(await agentsOf(second.url, log2['@ana'])).toEqual(['@ana', '@bo', '@cy']);
  expect(await subjects(second.url, log2['@bo'])).toEqual([]);
  expect((await call(second.url, 'GET', '/v1/inbox/count', log2['@cy'])).body.unread).toBe(400);
  for (const [from, to] of [
    ['@ana', '@bo'],
    ['@bo', '@cy'],
    ['@cy', '@ana'],
  ]) {
    const sent = await call(second.url, 'POST', '/v1/messages', log2[from], { to, subject: `${from} to ${to}`, body: 'x' });
    expect(sent.status).toBe(201);
    expect(sent.body.warnings).toBeUndefined();
  }
  expect(await subjects(second.url, log2['@bo'])).toEqual(['@ana to @bo']);
  expect(await subjects(second.url, log2['@ana'])).toEqual(['@cy to @ana']);
  expect((await call(second.url, 'GET', '/v1/messages', log1['@bo'])).status).toBe(401); // log 1's tokens mean nothing here

  // The first log is now the foreign one: it refuses in turn.
  await second.close();
  await expectStartupRefusal({ dataDir: dir1, redisNamespace: ns }, ns);
}, 120_000);

test('the data dir deleted and Redis kept: the new log refuses the old views, writing nothing', async () => {
  const ns = namespace();
  const dir = tempDir();
  const first = await serve({ dataDir: dir, redisNamespace: ns });
  const tokens = await registerAll(first.url, ['@ana', '@bo', '@cy']);
  expect((await call(first.url, 'POST', '/v1/messages', tokens['@ana'], { to: '@bo', subject: 'kept', body: 'x' })).status).toBe(
    201,
  );
  await first.close();
  fs.rmSync(dir, { recursive: true, force: true });
  const before = await snapshot(ns);
  await expectStartupRefusal({ dataDir: dir, redisNamespace: ns }, ns);
  expectUnwritten(before, await snapshot(ns));
});

/** Every file and directory under dir (relative path, kind and size), or null when dir is not there. */
test('a first start on views of another log (an empty data dir, a missing one, a views file left alone) is refused and leaves no file behind: no new events.sqlite', async () => {
  const ns = namespace();
  const first = await serve({ dataDir: tempDir(), redisNamespace: ns });
  const tokens = await registerAll(first.url, ['@ana', '@bo', '@cy']);
  expect((await call(first.url, 'POST', '/v1/messages', tokens['@ana'], { to: '@bo', subject: 'x', body: 'x' })).status).toBe(
    201,
  );
  await first.close();
  const before = await snapshot(ns);
  const empty = tempDir();
  const parent = tempDir();
  const missing = path.join(parent, 'not', 'yet');
  const refusals = [];
  for (const dataDir of [empty, missing]) {
    refusals.push(await spawnServe({ MAILBOX_DATA_DIR: dataDir, MAILBOX_REDIS_URL: redis.url, MAILBOX_REDIS_NAMESPACE: ns }));
  }
  expect(listing(empty)).toEqual([]);
  expect(listing(parent)).toEqual([]); // not even the data dir
  refusals.forEach((refused, i) => {
    expect(refused.code).toBe(2);
    expectRefusalLine(refused.stderr.replace(/^mailbox: /, ''), ns);
    // The log it would have created is named, not a new log's identity.
    expect(refused.stderr).toContain(`there is no event log at ${path.join([empty, missing][i], 'events.sqlite')}`);
  });
  expectUnwritten(before, await snapshot(ns));

  // Views in a SQLite file of their own (no Redis), their log's events.sqlite gone: the same refusal, the file untouched.
  const dir = tempDir();
  const owner = await serve({ dataDir: dir, redisUrl: undefined });
  await registerAll(owner.url, ['@ana', '@bo', '@cy']);
  await owner.close();
  for (const name of fs.readdirSync(dir).filter((file) => file.startsWith('events.sqlite'))) fs.rmSync(path.join(dir, name));
  const views = listing(dir);
  expect(views).toContain(`views.sqlite ${fs.statSync(path.join(dir, 'views.sqlite')).size}`);
  const refused = await spawnServe({ MAILBOX_DATA_DIR: dir });
  expect(refused.code).toBe(2);
  expect(refused.stderr.trim().split('\n')).toEqual([
    expect.stringContaining(`views file ${path.join(dir, 'views.sqlite')} belong to another event log`),
  ]);
  expect(listing(dir)).toEqual(views);
});

test('the EventStoreDB double reset to an empty log: refused, nothing written; take-over serves the new log only', async () => {
  const ns = namespace();
  const double = await EsdbDouble.start();
  cleanups.push(() => double.close());
  const first = await serve({ eventStoreUrl: double.url, redisNamespace: ns });
  const tokens = await registerAll(first.url, ['@ana', '@bo', '@cy']);
  expect(
    (await call(first.url, 'POST', '/v1/messages', tokens['@ana'], { to: '@bo', subject: 'old log', body: 'x' })).status,
  ).toBe(201);
  await first.close();
  await double.resetToEmpty();
  const before = await snapshot(ns);
  await expectStartupRefusal({ eventStoreUrl: double.url, redisNamespace: ns }, ns);
  expectUnwritten(before, await snapshot(ns));

  const second = await serve({ eventStoreUrl: double.url, redisNamespace: ns, projectionsOnForeign: 'take-over' });
  await second.mailbox.viewsReady;
  const fresh = await registerAll(second.url, ['@dee', '@eve', '@fay']);
  expect(
    (await call(second.url, 'POST', '/v1/messages', fresh['@dee'], { to: '@eve', subject: 'new log', body: 'x' })).status,
  ).toBe(201);
  expect(await agentsOf(second.url, fresh['@fay'])).toEqual(['@dee', '@eve', '@fay']);
  expect(await subjects(second.url, fresh['@eve'])).toEqual(['new log']);
});

test('the EventStoreDB double reset to an empty log while the mailbox runs: it stops serving the old views (503, says why), and applies none of them to the new log', async () => {
  const ns = namespace();
  const double = await EsdbDouble.start();
  cleanups.push(() => double.close());
  const server = await serve({ eventStoreUrl: double.url, redisNamespace: ns });
  await server.mailbox.viewsReady;
  const tokens = await registerAll(server.url, ['@ana', '@bo', '@cy']);
  const sent = await call(server.url, 'POST', '/v1/messages', tokens['@ana'], { to: 'AGENT:*', subject: 'old log', body: 'x' });
  expect(sent.status).toBe(201);
  expect(await subjects(server.url, tokens['@bo'])).toEqual(['old log']);

  // Listing wrote @bo's seen mark (after answering): let it reach the old log first.
  while (!double.log.records.some((record) => record.streamName === 'mailbox-seen-@bo'))
    await new Promise((resolve) => setTimeout(resolve, 20));
  const oldLog = (await call(server.url, 'GET', '/readyz')).body.projections.logIdentity;
  await double.resetToEmpty();
  const deadline = Date.now() + 20_000;
  for (;;) {
    const readiness = await call(server.url, 'GET', '/readyz');
    if (readiness.status === 503 && readiness.body.checks?.projections?.views === 'foreign') {
      // Said of the log as it is now: the views are the old log's, this one is another.
      expect(readiness.body.checks.projections.viewsProblem).toContain(`another event log (${oldLog})`);
      expect(readiness.body.checks.projections.logIdentity).not.toBe(oldLog);
      break;
    }
    if (Date.now() > deadline)
      throw new Error(`readyz never said the views are another log's: ${JSON.stringify(readiness.body)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  // The old log's agents, messages and tokens are not this log's: refused, not served.
  const agents = await call(server.url, 'GET', '/v1/agents', tokens['@cy']);
  expect(agents.status).toBe(503);
  expect(agents.body.message).toContain('another event log');
  expect((await call(server.url, 'GET', '/v1/messages', tokens['@bo'])).status).toBe(503);
  // Nor is anything written to the new log on the old log's registry: a send (and a read mark) is refused, saying why.
  const send = await call(server.url, 'POST', '/v1/messages', tokens['@ana'], { to: '@bo', subject: 'after', body: 'x' });
  expect([send.status, send.body.code]).toEqual([503, 'UNAVAILABLE']);
  expect(send.body.message).toMatch(
    new RegExp(`^The event log changed under this server: it started on log ${oldLog}, and the event store now holds log `),
  );
  expect(send.body.message).toContain('Nothing was written');
  expect((await call(server.url, 'POST', `/v1/messages/${sent.body.messageId}/read`, tokens['@bo'])).status).toBe(503);
  expect(
    double.log.records.filter((record) => record.streamName.startsWith('mailbox-')).map((r) => [r.streamName, r.type]),
  ).toEqual([]);
});

test('both running at once: the second refuses (take-over too, while the first is live); once taken over, the first serves nothing and no wake crosses', async () => {
  const ns = namespace();
  const first = await serve({ dataDir: tempDir(), redisNamespace: ns });
  const log1 = await registerAll(first.url, ['@ana', '@bo', '@cy']);
  const before = await snapshot(ns);
  await expectStartupRefusal({ dataDir: tempDir(), redisNamespace: ns }, ns);
  await expectStartupRefusal(
    { dataDir: tempDir(), redisNamespace: ns, projectionsOnForeign: 'take-over' },
    ns,
    'is live on these views',
  );
  expectUnwritten(before, await snapshot(ns));

  // The first still works, wakes and all.
  const bo1 = await subscribe(first.url, log1['@bo']);
  cleanups.push(() => bo1.close());
  await bo1.next((e) => e.event === 'sync');
  await call(first.url, 'POST', '/v1/messages', log1['@ana'], { to: '@bo', subject: 'log 1 to bo', body: 'x' });
  await bo1.next((e) => e.event === 'wake' && e.data.subject === 'log 1 to bo');

  // Its projector stops (its live mark goes with it): now a take-over may proceed.
  await first.mailbox.runner.stop();
  const dir2 = tempDir();
  const second = await serve({ dataDir: dir2, redisNamespace: ns, projectionsOnForeign: 'take-over' });
  await second.mailbox.viewsReady;
  const log2 = await registerAll(second.url, ['@ana', '@bo', '@cy']);
  // The first finds the views taken over: it refuses to resume, readiness and reads say so.
  await expect(first.mailbox.runner.start()).rejects.toThrow('another event log');
  const readiness = await call(first.url, 'GET', '/readyz');
  expect(readiness.status).toBe(503);
  expect(readiness.body.checks.projections.views).toBe('foreign');
  expect((await call(first.url, 'GET', '/v1/agents', log1['@ana'])).status).toBe(503);
  expect((await call(first.url, 'GET', '/v1/messages', log1['@bo'])).status).toBe(503);

  // A send on the second wakes its @bo (the positive signal), never the first's @bo.
  const bo2 = await subscribe(second.url, log2['@bo']);
  cleanups.push(() => bo2.close());
  await bo2.next((e) => e.event === 'sync');
  await call(second.url, 'POST', '/v1/messages', log2['@ana'], { to: '@bo', subject: 'log 2 to bo', body: 'x' });
  await bo2.next((e) => e.event === 'wake' && e.data.subject === 'log 2 to bo');
  await call(second.url, 'POST', '/v1/messages', log2['@cy'], { to: '@bo', subject: 'log 2 again', body: 'x' });
  await bo2.next((e) => e.event === 'wake' && e.data.subject === 'log 2 again');
  expect(bo1.wakes().map((w) => w.subject)).toEqual(['log 1 to bo']);
  expect(await subjects(second.url, log2['@bo'])).toEqual(['log 2 again', 'log 2 to bo']);
  expect(await agentsOf(second.url, log2['@cy'])).toEqual(['@ana', '@bo', '@cy']);
});

test("a running mailbox frozen long enough to be taken over: on resume it stops applying and serving, says so, and passes on none of the new log's wakes", async () => {
  const ns = namespace();
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child = spawn(process.execPath, cliOnSources('serve'), {
    env: {
      PATH: process.env.PATH,
      MAILBOX_PORT: String(port),
      MAILBOX_ADMIN_TOKEN: ADMIN_TOKEN,
      MAILBOX_LOG_LEVEL: 'info',
      MAILBOX_DATA_DIR: tempDir(),
      MAILBOX_REDIS_URL: redis.url,
      MAILBOX_REDIS_NAMESPACE: ns,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGCONT');
        child.kill('SIGKILL');
      }),
  );
  const until = async (what: string, check: () => Promise<boolean> | boolean, timeoutMs = 20_000) => {
    const deadline = Date.now() + timeoutMs;
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error(`${what} did not happen within ${timeoutMs} ms; output: ${output}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };
  await until(
    'the first mailbox listening',
    async () =>
      (await fetch(`${url}/readyz`).then(
        (r) => r.status,
        () => 0,
      )) === 200,
  );
  const log1 = await registerAll(url, ['@ana', '@bo', '@cy']);
  const bo1 = await subscribe(url, log1['@bo']);
  cleanups.push(() => bo1.close());
  await bo1.next((e) => e.event === 'sync');

  // Frozen: its live mark expires, so a take-over may proceed.
  child.kill('SIGSTOP');
  const keys = { writer: `${ns}:{${ns}}:writer` };
  await until('the live mark of the frozen mailbox expired', async () => (await client.exists(keys.writer)) === 0, 15_000);
  const second = await serve({ dataDir: tempDir(), redisNamespace: ns, projectionsOnForeign: 'take-over' });
  await second.mailbox.viewsReady;
  const log2 = await registerAll(second.url, ['@ana', '@bo', '@cy']);
  const bo2 = await subscribe(second.url, log2['@bo']);
  cleanups.push(() => bo2.close());
  await bo2.next((e) => e.event === 'sync');
  await call(second.url, 'POST', '/v1/messages', log2['@ana'], { to: '@bo', subject: 'while frozen', body: 'x' });
  await bo2.next((e) => e.event === 'wake' && e.data.subject === 'while frozen');

  child.kill('SIGCONT');
  await until('the resumed mailbox noticing', async () => {
    const readiness = await call(url, 'GET', '/readyz');
    return readiness.status === 503 && readiness.body.checks?.projections?.views === 'foreign';
  });
  // /readyz says so from the first look of the store that finds it; the projector, told then, says it in its log.
  await until('the projector saying it', () =>
    output.includes('the views now belong to another log; this mailbox stopped applying to and serving them'),
  );
  expect((await call(url, 'GET', '/v1/agents', log1['@ana'])).status).toBe(503);
  expect((await call(url, 'GET', '/v1/messages', log1['@bo'])).status).toBe(503);
  await call(second.url, 'POST', '/v1/messages', log2['@cy'], { to: '@bo', subject: 'after resume', body: 'x' });
  await bo2.next((e) => e.event === 'wake' && e.data.subject === 'after resume');
  expect(bo1.wakes()).toEqual([]);
  // Its commands are still durable in its own log, and say that its views lag.
  const sent = await call(url, 'POST', '/v1/messages', log1['@ana'], { to: '@bo', subject: 'log 1 after', body: 'x' });
  expect(sent.status).toBe(201);
  expect(sent.body.warnings.map((w: { code: string }) => w.code)).toEqual(['VIEWS_LAGGING']);
  expect(await subjects(second.url, log2['@bo'])).toEqual(['after resume', 'while frozen']);
  expect(bo1.wakes()).toEqual([]);
}, 90_000);
