/**
 * `mailbox projections rebuild` reports the time the rebuild took, not the time plus the grace it then waits before
 * deleting the previous generation: 100 events rebuilt in a few ms were reported "in 5028 ms (20 events/s)", the
 * default 5 s grace counted as rebuilding. Now the time and the rate are those of building and switching, and the
 * grace is named apart. SQLite views (no Redis needed); three agents, a message to two of them, a read.
 */
import fs from 'node:fs';
import { PassThrough } from 'node:stream';
import pino from 'pino';
import { runRebuild } from '../../src/cli/commands/projections';
import { createMailbox } from '../../src/mailbox';
import { ADMIN_TOKEN, registerAgents, tempDir } from '../support/fixtures';

let dataDir: string;
afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));

test('the rebuild time and rate leave the grace out, and the grace is named', async () => {
  dataDir = tempDir('mailbox-rebuild-report-');
  const mailbox = await createMailbox(
    { dataDir, adminToken: ADMIN_TOKEN, logLevel: 'silent' },
    { logger: pino({ level: 'silent' }) },
  );
  const { '@a': a, '@b': b } = await registerAgents(mailbox, ['@a', '@b', '@c']);
  const sent = await a.send({ to: ['@b', '@c'], subject: 's', body: 'x' });
  await b.markRead({ messageId: sent.messageId });
  await mailbox.close();

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
