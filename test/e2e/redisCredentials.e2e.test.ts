/**
 * A Redis that asks for a password, given as operators.md says: MAILBOX_REDIS_PASSWORD beside MAILBOX_REDIS_URL, which
 * "apply to every data node". Every connection the mailbox opens uses them: the server's (the rejection log's connected
 * without, so the server did not start), and the heartbeat's nudges on MAILBOX_REDIS_URL (published without them). And
 * the heartbeat publishes through the mailbox's Redis in any topology: a Sentinel URL stopped it at start.
 */
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import { Redis } from 'ioredis';
import pino from 'pino';
import { createMailbox } from '../../src/mailbox';
import { ensureBuilt, runCli } from '../support/builtCli';
import { ADMIN_TOKEN, registerAgents, tempDir } from '../support/fixtures';
import { freePort, spawnRedis, stopChild } from '../support/redisServer';
import { startRedisSentinel } from '../support/redisTopologies';
import { REDIS_TEST_TIMEOUT_ENV, REDIS_TEST_TIMEOUT_MS } from '../support/redisDeadline';

const PASSWORD = 'a-redis-password-0123';
let redis: ChildProcess;
let url: string;
let dataDir: string;
beforeAll(async () => {
  ensureBuilt();
  const port = await freePort();
  redis = await spawnRedis(port, ['--requirepass', PASSWORD]);
  url = `redis://127.0.0.1:${port}`;
  dataDir = tempDir('mailbox-redis-password-');
});
afterAll(async () => {
  await stopChild(redis);
  fs.rmSync(dataDir, { recursive: true, force: true });
});

test('the mailbox starts on it and keeps its views, wakes and rejections there; the heartbeat publishes nudges there', async () => {
  const mailbox = await createMailbox(
    {
      dataDir,
      redisUrl: url,
      redisPassword: PASSWORD,
      adminToken: ADMIN_TOKEN,
      logLevel: 'silent',
      redisTimeoutMs: REDIS_TEST_TIMEOUT_MS,
    },
    { logger: pino({ level: 'silent' }) },
  );
  try {
    const { '@a': a, '@b': b } = await registerAgents(mailbox, ['@a', '@b', '@c']);
    await a.send({ to: '@b', subject: 'for b', body: 'x' });
    await a.send({ to: '@c', subject: 'for c', body: 'x' });
    expect((await b.listMessages({})).messages.map((message) => message.subject)).toEqual(['for b']);
    // The recent rejections are kept in Redis too, read through a connection that authenticated.
    expect(mailbox.rejections.backend).toBe('redis');
    expect(await mailbox.rejections.recent(10)).toEqual([]);
  } catch (error) {
    await mailbox.close();
    throw error;
  }

  // The heartbeat publishes on mailbox:heartbeat:<identity> through the mailbox's Redis, with its credentials (beside
  // the running mailbox, whose projector keeps the views there).
  const subscriber = new Redis(url, { password: PASSWORD });
  try {
    await subscriber.subscribe('mailbox:heartbeat:@b');
    const run = await runCli(['heartbeat', '--once', '--idle', '0', '--wake-grace', '0'], {
      MAILBOX_DATA_DIR: dataDir,
      MAILBOX_REDIS_URL: url,
      MAILBOX_REDIS_PASSWORD: PASSWORD,
      ...REDIS_TEST_TIMEOUT_ENV,
    });
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ nudged: ['@b'], unheard: ['@c'], failed: [] });
  } finally {
    subscriber.disconnect();
    await mailbox.close();
  }
});

test('the heartbeat on a Sentinel deployment (MAILBOX_REDIS_URL=redis+sentinel://...) publishes its nudges there', async () => {
  const sentinel = await startRedisSentinel();
  const dir = tempDir('mailbox-redis-sentinel-heartbeat-');
  try {
    const mailbox = await createMailbox(
      {
        dataDir: dir,
        redisUrl: sentinel.url,
        adminToken: ADMIN_TOKEN,
        logLevel: 'silent',
        redisTimeoutMs: REDIS_TEST_TIMEOUT_MS,
      },
      { logger: pino({ level: 'silent' }) },
    );
    // The heartbeat runs beside the mailbox, whose projector keeps the views on Sentinel's Redis.
    try {
      const { '@a': a } = await registerAgents(mailbox, ['@a', '@b', '@c']);
      await a.send({ to: '@b', subject: 'for b', body: 'x' });
      const subscriber = new Redis(`redis://127.0.0.1:${await sentinel.masterPort()}`);
      try {
        await subscriber.subscribe('mailbox:heartbeat:@b');
        // It was refused at start: "--redis-url / MAILBOX_HEARTBEAT_REDIS_URL: ... must be a Redis URL, starting with redis://".
        const run = await runCli(['heartbeat', '--once', '--idle', '0', '--wake-grace', '0'], {
          MAILBOX_DATA_DIR: dir,
          MAILBOX_REDIS_URL: sentinel.url,
          ...REDIS_TEST_TIMEOUT_ENV,
        });
        expect([run.code, run.stderr.includes('MAILBOX_HEARTBEAT_REDIS_URL')]).toEqual([0, false]);
        expect(JSON.parse(run.stdout)).toMatchObject({ nudged: ['@b'], failed: [] });
      } finally {
        subscriber.disconnect();
      }
    } finally {
      await mailbox.close();
    }
  } finally {
    await sentinel.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
