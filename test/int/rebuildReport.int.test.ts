/**
 * `mailbox projections rebuild` reports the time the rebuild took, not the time plus the grace it then waits before
 * deleting the previous generation: 100 events rebuilt in a few ms were reported "in 5028 ms (20 events/s)", the
 * default 5 s grace counted as rebuilding. Now the time and the rate are those of building and switching, and the
 * grace is named apart. SQLite views (no Redis needed); three agents, a message to two of them, a read.
 */
import fs from 'node:fs';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import pino from 'pino';
import { runRebuild } from '../../src/cli/commands/projections';
import { createMailbox } from '../../src/mailbox';
import { ADMIN_TOKEN, registerAgents, tempDir, threeAgentsDataDir } from '../support/fixtures';

let dataDir: string;
afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));

test('the rebuild time and rate leave the grace out, and the grace is named', async () => {
  dataDir = await threeAgentsDataDir('mailbox-rebuild-report-');

  const stdout = new PassThrough();
  let out = '';
  stdout.on('data', (chunk) => (out += chunk));
  const graceMs = 1500;
  const started = Date.now();
  expect(
    await runRebuild(
      { graceMs: String(graceMs), settleMs: '0' },
      { stdout, stderr: new PassThrough(), env: { MAILBOX_DATA_DIR: dataDir } },
    ),
  ).toBe(0);
  expect(Date.now() - started).toBeGreaterThanOrEqual(graceMs); // the grace was waited
  const last = out.trim().split('\n').at(-1)!;
  const match =
    /^rebuilt (\d+) events into (\S+) in (\d+) ms \((\d+) events\/s\); previous generation (\S+) deleted after the 1500 ms grace/.exec(
      last,
    );
  expect(match).not.toBeNull();
  const [, events, , ms, rate] = match!.map(String);
  expect(Number(events)).toBeGreaterThanOrEqual(5);
  expect(Number(ms)).toBeLessThan(graceMs);
  expect(Number(rate)).toBe(Math.round((Number(events) / Math.max(Number(ms), 1)) * 1000));
});

/**
 * The previous generation is said to be deleted (or kept) only when it held views: a first build (the views never
 * built, or built from an empty log) said "previous generation g1 deleted", as if views had been thrown away.
 */
describe('what the rebuild says of the previous generation', () => {
  const rebuild = async (dir: string, flags: Record<string, unknown>) => {
    const stdout = new PassThrough();
    let out = '';
    stdout.on('data', (chunk) => (out += chunk));
    const code = await runRebuild(
      { settleMs: '0', ...flags },
      { stdout, stderr: new PassThrough(), env: { MAILBOX_DATA_DIR: dir } },
    );
    const lines = out.trim().split('\n');
    return { code, switched: lines.find((line) => line.startsWith('switched the active views')), last: lines.at(-1) };
  };
  const FORCED = '(; no live projector was following, switched without it)?$';
  const mailboxIn = async (dir: string) =>
    createMailbox({ dataDir: dir, adminToken: ADMIN_TOKEN, logLevel: 'silent' }, { logger: pino({ level: 'silent' }) });

  test('views never built: the first rebuild says g1 held none; later ones delete or keep the views they replace', async () => {
    const dir = tempDir('mailbox-rebuild-first-');
    const mailbox = await mailboxIn(dir);
    await registerAgents(mailbox, ['@a', '@b']);
    await mailbox.close();
    // The log stays; the views go (deleted while stopped: the offline way to rebuild, docs/operators.md).
    for (const suffix of ['', '-wal', '-shm']) fs.rmSync(path.join(dir, `views.sqlite${suffix}`), { force: true });

    const first = await rebuild(dir, { keepPrevious: true });
    expect(first.code).toBe(0);
    expect(first.switched).toBe('switched the active views to the rebuilt generation');
    expect(first.last).toMatch(
      new RegExp(
        `^rebuilt 2 events into g2 in \\d+ ms \\(\\d+ events/s\\); previous generation g1 held no views: nothing to keep${FORCED}`,
      ),
    );
    const second = await rebuild(dir, { graceMs: '0' });
    expect(second.switched).toBe('switched the active views to the rebuilt generation; the previous one is deleted in 0 ms');
    expect(second.last).toMatch(new RegExp(`; previous generation g2 deleted after the 0 ms grace${FORCED}`));
    expect((await rebuild(dir, { keepPrevious: true })).last).toMatch(new RegExp(`; previous generation g3 kept${FORCED}`));
  });

  test('an empty log: the views it replaces held none, so none are said to be deleted', async () => {
    const dir = tempDir('mailbox-rebuild-empty-');
    await (await mailboxIn(dir)).close();
    for (const generation of ['g1', 'g2']) {
      const { code, switched, last } = await rebuild(dir, { graceMs: '0' });
      expect(code).toBe(0);
      expect(switched).toBe(
        'switched the active views to the rebuilt generation; the previous one held no views (its empty generation is cleared away in 0 ms)',
      );
      expect(last).toMatch(
        new RegExp(
          `; previous generation ${generation} held no views: nothing to delete \\(the empty generation was cleared away after the 0 ms grace\\)${FORCED}`,
        ),
      );
    }
  });
});
