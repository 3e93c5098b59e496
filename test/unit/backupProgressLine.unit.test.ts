/**
 * `mailbox backup`'s progress line on stderr. Before anything was copied it said "backup: about 0% (0.0 MB of about
 * 0.0 MB)": on a loaded machine the copying process takes over a second to start, so a backup of a file that proves no
 * log at all printed that line above its refusal. Nothing is said until the copy has bytes.
 */
import { backupProgressLine } from '../../src/cli/commands/backup';

test('nothing copied yet: no line', () => {
  expect(backupProgressLine({ written: 0, estimated: 0 })).toBeNull();
  expect(backupProgressLine({ written: 0, estimated: 5_000_000 })).toBeNull();
});

test('a copy under way: the share of the estimate, in whole percent, never 100 before it is done', () => {
  expect(backupProgressLine({ written: 1_250_000, estimated: 5_000_000 })).toEqual({
    percent: 25,
    text: 'backup: about 25% (1.3 MB of about 5.0 MB)',
  });
  // The estimate is the log and its WAL at the start: the copy can outgrow it, and still says "about 99%".
  expect(backupProgressLine({ written: 6_000_000, estimated: 5_000_000 })?.percent).toBe(99);
});
