/**
 * `mailbox projections rebuild` off a terminal prints one line per 10% and per phase. While it catches up with sends
 * that went on during the build, its position passes the head it started from: that is said as such, never
 * "position 1890 of 1858" (read as a miscount).
 */
import { PassThrough } from 'node:stream';
import { progressReporter } from '../../src/cli/commands/projections';

function lines(updates: Array<{ phase: 'building' | 'catching up'; events: number; position: bigint; head: bigint }>) {
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
