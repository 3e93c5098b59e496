/**
 * `mailbox projections rebuild` off a terminal prints one line per 10% and per phase. While it catches up with sends
 * that went on during the build, its position passes the head it started from: that is said as such, never
 * "position 1890 of 1858" (read as a miscount). A copy that failed for now says what failed and when it tries again.
 */
import { PassThrough } from 'node:stream';
import { progressReporter } from '../../src/cli/commands/projections';
import type { RebuildProgress } from '../../src/projections/rebuild';

function lines(updates: RebuildProgress[]) {
  const stdout = new PassThrough();
  let out = '';
  stdout.on('data', (chunk) => (out += chunk));
  const reporter = progressReporter(stdout);
  for (const update of updates) reporter.update(update);
  reporter.stop();
  return out.trim().split('\n');
}

test('up to the head: position of the head; past it: how far past the head it started from', () => {
  expect(
    lines([
      { phase: 'building', events: 1858, position: 1858n, head: 1858n },
      { phase: 'catching up', events: 1890, position: 1890n, head: 1858n },
    ]),
  ).toEqual([
    'rebuild: building 100% (1858 events, position 1858 of 1858)',
    'rebuild: catching up 100% (1890 events, position 1890, 32 past the head of 1858 when the rebuild began)',
  ]);
});

test('a copy that failed for now: one line per wait, with the reason, the wait and the budget; then building goes on', () => {
  const retry = { attempt: 1, reason: 'Redis projections (apply) is unavailable; retry later', delayMs: 180, outageMs: 60_000 };
  expect(
    lines([
      { phase: 'building', events: 400, position: 400n, head: 1000n },
      { phase: 'retrying', events: 400, position: 400n, head: 1000n, retry },
      { phase: 'retrying', events: 400, position: 400n, head: 1000n, retry: { ...retry, attempt: 2, delayMs: 400 } },
      { phase: 'building', events: 600, position: 600n, head: 1000n },
    ]),
  ).toEqual([
    'rebuild: building 40% (400 events, position 400 of 1000)',
    'rebuild: could not copy at position 400 of 1000 (Redis projections (apply) is unavailable; retry later); ' +
      'trying again in 0.2 s (try 1; gives up after 60 s of failures in a row)',
    'rebuild: could not copy at position 400 of 1000 (Redis projections (apply) is unavailable; retry later); ' +
      'trying again in 0.4 s (try 2; gives up after 60 s of failures in a row)',
    'rebuild: building 60% (600 events, position 600 of 1000)',
  ]);
});
