/**
 * `mailbox projections drop` with no generation named printed commander's "error: missing required argument
 * 'generation'" and no more: neither the form nor which generations there were to name. It is now a usage error in
 * one line (exit code 2), as drop's other refusals: the form `mailbox projections drop <generation>` and the generations
 * it can drop (those `status` lists as keptGenerations), the active one named as never dropped; nothing changed. With
 * no event log (nothing to name) it is still the usage error, with the log's words. A log of @a, @b and @c.
 */
import fs from 'node:fs';
import path from 'node:path';
import { ensureBuilt, runCli } from '../support/builtCli';
import { tempDir, threeAgentsDataDir } from '../support/fixtures';

beforeAll(() => ensureBuilt());

const oneLine = (run: { stderr: string }) => {
  expect(run.stderr.trimEnd().split('\n')).toHaveLength(1);
  return JSON.parse(run.stderr) as Record<string, unknown>;
};

test('no generation named: the form and the generations it can drop, exit code 2; nothing dropped', async () => {
  const dataDir = await threeAgentsDataDir('mailbox-drop-unnamed-');
  const env = { MAILBOX_DATA_DIR: dataDir };
  const rebuilt = await runCli(['projections', 'rebuild', '--keep-previous', '--settle-ms', '0'], env);
  expect(rebuilt.stdout).toMatch(/previous generation g1 kept\n$/);
  const status = async () => JSON.parse((await runCli(['projections', 'status'], env)).stdout) as Record<string, unknown>;
  expect(await status()).toMatchObject({ activeGeneration: 'g2', keptGenerations: ['g1'] });

  const run = await runCli(['projections', 'drop', '--json'], env);
  expect({ code: run.code, stdout: run.stdout }).toEqual({ code: 2, stdout: '' });
  expect(oneLine(run)).toEqual({
    error: 'No generation named',
    code: 'VALIDATION_FAILED',
    message:
      'Name the generation to drop: `mailbox projections drop <generation>`; in the SQLite views file ' +
      `${path.join(dataDir, 'views.sqlite')}, besides the active one (g2), it can drop g1. Nothing was changed.`,
    activeGeneration: 'g2',
    droppable: ['g1'],
  });
  expect(await status()).toMatchObject({ activeGeneration: 'g2', keptGenerations: ['g1'] }); // g1 still there
});

test('no generation named and no event log: still the usage error (exit code 2), saying there is none; nothing created', async () => {
  const dataDir = path.join(tempDir('mailbox-drop-unnamed-'), 'data');
  const run = await runCli(['projections', 'drop', '--json'], { MAILBOX_DATA_DIR: dataDir });
  expect({ code: run.code, stdout: run.stdout }).toEqual({ code: 2, stdout: '' });
  expect(oneLine(run)).toMatchObject({
    error: 'No generation named',
    code: 'VALIDATION_FAILED',
    message: expect.stringMatching(
      /^Name the generation to drop: `mailbox projections drop <generation>`; there is none to name: there is no event log at /,
    ),
  });
  expect(fs.existsSync(dataDir)).toBe(false);
});
