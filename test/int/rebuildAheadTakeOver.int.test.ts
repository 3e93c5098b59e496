/**
 * `mailbox projections rebuild --take-over` on views of this very log that stand ahead of its head (the log was put
 * back from an older copy: same identity, fewer events). The views were replaced, as they should be, but the last line
 * said, in Redis, 'took the namespace over from log <this log's own id>' (and in the SQLite views file, 'took over
 * ... from log <own id>: ... (views of log <own id>)'), as if another log had owned them. Now it says what happened:
 * views ahead of this log's head, where they stood, replaced by a generation built from this log.
 * A start with MAILBOX_PROJECTIONS_ON_FOREIGN=take-over said the same wrong thing in its warn line and in /readyz
 * ('taking over <location> from <this log's own id>'): it says now that it replaces views ahead of this log's head.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Redis } from 'ioredis';
import { checkReadiness } from '../../src/adapters/http/readiness';
import { SqliteEventStore } from '../../src/adapters/eventstore/sqliteEventStore';
import { runRebuildCommand, runStatusCommand, type ProjectionsIo } from '../../src/cli/commands/projections';
import { createMailbox } from '../../src/mailbox';
import { appendLog, generateLog } from '../contract/projectionStoreLog';
import { capture } from '../support/auditCli';
import { tempDir } from '../support/fixtures';
import { recordingLogger } from '../support/recordingLogger';
import { startRedis, type TestRedis } from '../support/redisServer';

let redis: TestRedis;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await redis.stop();
});

/** `mailbox projections <command>` as the CLI runs it, with its output and the exit code it set. */
async function projections(command: (io: ProjectionsIo) => Promise<void>, env: NodeJS.ProcessEnv) {
  const out = capture();
  const err = capture();
  process.exitCode = undefined;
  await command({ stdout: out.stream, stderr: err.stream, env });
  const code = Number(process.exitCode ?? 0);
  process.exitCode = undefined;
  return { code, stdout: out.text(), stderr: err.text() };
}

const rebuild = (env: NodeJS.ProcessEnv, takeOver = false) =>
  projections(
    (io) => runRebuildCommand(io, { graceMs: '0', settleMs: '0', json: true, ...(takeOver ? { takeOver: true } : {}) }),
    env,
  );

/**
 * This log, with views of 30 events, then an older copy of it (same identity, empty) put back: the views stand ahead
 * of its head.
 */
async function viewsAheadOfTheLog(env: NodeJS.ProcessEnv, dataDir: string) {
  const logFile = path.join(dataDir, 'events.sqlite');
  const log = SqliteEventStore.open(logFile);
  const logIdentity = await log.logIdentity();
  await log.close();
  const olderCopy = `${dataDir}-older.sqlite`;
  fs.copyFileSync(logFile, olderCopy);
  const writer = SqliteEventStore.open(logFile);
  await appendLog(writer, generateLog(30));
  const head = String(await writer.headPosition());
  await writer.close();
  expect((await rebuild(env)).code).toBe(0);
  fs.copyFileSync(olderCopy, logFile);
  fs.rmSync(olderCopy);
  return { logIdentity, head };
}

describe.each([
  ['Redis', true],
  ['the SQLite views file', false],
])("a start with MAILBOX_PROJECTIONS_ON_FOREIGN=take-over on views ahead of this log's head, in %s", (_where, inRedis) => {
  test('the warn lines and /readyz say the views ahead of the head are replaced, never "taking over" from this log', async () => {
    const dataDir = tempDir('mailbox-ahead-start-');
    const namespace = `aheadstart${process.pid}${inRedis ? 'r' : 's'}`;
    const env = {
      MAILBOX_LOG_LEVEL: 'silent',
      MAILBOX_DATA_DIR: dataDir,
      ...(inRedis ? { MAILBOX_REDIS_URL: redis.url, MAILBOX_REDIS_NAMESPACE: namespace } : {}),
    };
    const { logIdentity, head } = await viewsAheadOfTheLog(env, dataDir);
    const location = inRedis ? `Redis namespace '${namespace}'` : `the SQLite views file ${path.join(dataDir, 'views.sqlite')}`;
    const replacing =
      `replacing views ahead of this log's head: the views in ${location} stand at log position ${head}, ` +
      `ahead of the head (empty) of this log (${logIdentity})`;

    const { logger, warnings } = recordingLogger();
    // In Redis every write is held for a moment (CLIENT PAUSE WRITE: reads go on), so /readyz is asked during the rebuild.
    const client = inRedis ? new Redis(redis.url) : null;
    await client?.call('CLIENT', 'PAUSE', '60000', 'WRITE');
    const mailbox = await createMailbox(
      {
        dataDir,
        adminToken: 'a'.repeat(32),
        logLevel: 'silent',
        projectionsOnForeign: 'take-over',
        ...(inRedis ? { redisUrl: redis.url, redisNamespace: namespace } : {}),
      },
      { logger },
    ).catch(async (error: unknown) => {
      await client?.call('CLIENT', 'UNPAUSE');
      client?.disconnect();
      throw error;
    });
    try {
      if (client) {
        const during = await checkReadiness(mailbox);
        await client.call('CLIENT', 'UNPAUSE');
        client.disconnect();
        expect(during.status).toBe('not ready');
        expect(during.checks.projections.viewsProblem).toBe(
          `R${replacing.slice(1)}: the views are being rebuilt from this log and are not served until the switch.`,
        );
      }
      await mailbox.viewsReady;
      const previous = inRedis ? `${namespace}:v2:` : 'g2'; // the views the rebuild above built
      expect(warnings()).toEqual([
        `projections: ${replacing}; rebuilding the views from this log (readiness is 503 until done)`,
        `projections: replaced the views ahead of this log's head in ${location}; ` +
          `the previous views (generation ${previous}) are kept until deleted`,
      ]);
      expect(warnings().join('\n')).not.toContain(`from ${logIdentity}`);
      expect((await checkReadiness(mailbox)).status).toBe('ready');
    } finally {
      await mailbox.close();
    }
  });
});

describe.each([
  ['Redis', true],
  ['the SQLite views file', false],
])("rebuild --take-over of views ahead of this log's head, in %s", (_where, inRedis) => {
  test('the last line says the views were ahead of the head and replaced, never "taken over from" this log', async () => {
    const dataDir = tempDir('mailbox-ahead-');
    const namespace = `ahead${process.pid}${inRedis ? 'r' : 's'}`;
    const env = {
      MAILBOX_LOG_LEVEL: 'silent',
      MAILBOX_DATA_DIR: dataDir,
      ...(inRedis ? { MAILBOX_REDIS_URL: redis.url, MAILBOX_REDIS_NAMESPACE: namespace } : {}),
    };
    const { logIdentity, head } = await viewsAheadOfTheLog(env, dataDir);

    // status says so (it printed viewsOfThisLog true and upToDate false, as of views catching up, and no word more).
    const before = await projections(runStatusCommand, env);
    expect(before.code).toBe(0);
    expect(JSON.parse(before.stdout)).toMatchObject({
      viewsOfThisLog: true,
      checkpoint: head,
      logHead: null,
      upToDate: false,
      note:
        `the views stand at log position ${head}, ahead of the head (empty) of this log (${logIdentity}): the log was ` +
        'replaced or lost events (a backup restored beside the views of the newer log?). The server refuses to start ' +
        `on them, and audit verify to compare them: ${
          inRedis
            ? 'use another MAILBOX_REDIS_NAMESPACE for this mailbox'
            : 'move the views file away (it is then rebuilt from this log at start)'
        }, or replace them with this log's (\`mailbox projections rebuild --take-over\`).`,
    });

    const refused = await rebuild(env); // without --take-over: refused, saying where the views stand
    expect(refused.code).toBe(2);
    expect(JSON.parse(refused.stderr).message).toContain(`stand at log position ${head}, ahead of this event log's head (empty`);

    const { code, stdout, stderr } = await rebuild(env, true);
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    const last = stdout.trim().split('\n').at(-1)!;
    const stood = `stood at log position ${head}, ahead of the head (empty) of this log (${logIdentity})`;
    expect(last).toMatch(
      inRedis
        ? new RegExp(
            `; replaced views ahead of this log's head: the views in Redis namespace '${namespace}' ${escape(stood)}, ` +
              `and were replaced by ${namespace}:v3:, built from this log$`,
          )
        : new RegExp(
            `; replaced views ahead of this log's head: the active generation g2 of the SQLite views file ` +
              `${escape(path.join(dataDir, 'views.sqlite'))} ${escape(stood)}, and was replaced by g3, built from this log$`,
          ),
    );
    expect(last).not.toContain('took');
    expect(last).not.toContain(`from log ${logIdentity}`);

    const status = await projections(runStatusCommand, env);
    expect(JSON.parse(status.stdout)).toMatchObject({ viewsOfThisLog: true, checkpoint: null, logHead: null, upToDate: true });
    expect(JSON.parse(status.stdout).note).toBeUndefined();
  });
});

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
