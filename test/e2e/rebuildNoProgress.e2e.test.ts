/**
 * `mailbox audit replay|message|unwoken|verify` take `--no-progress`; `mailbox projections rebuild`, which draws a bar on
 * a terminal and writes a progress line per step otherwise, refused it: "error: unknown option '--no-progress'", exit
 * code 2, nothing rebuilt. It now takes it: the rebuild runs and prints its result lines only. A log of @a, @b and @c.
 */
import { ensureBuilt, runCli } from '../support/builtCli';
import { threeAgentsDataDir } from '../support/fixtures';

beforeAll(() => ensureBuilt());

test('projections rebuild --no-progress rebuilds and prints no progress line; without it, the lines are there', async () => {
  const env = { MAILBOX_DATA_DIR: await threeAgentsDataDir('mailbox-rebuild-quiet-') };
  const quiet = await runCli(['projections', 'rebuild', '--no-progress', '--settle-ms', '0', '--grace-ms', '0'], env);
  expect({ code: quiet.code, stderr: quiet.stderr }).toEqual({ code: 0, stderr: '' });
  expect(quiet.stdout).not.toMatch(/^rebuild: /m);
  expect(quiet.stdout).toMatch(/^switched the active views to the rebuilt generation/m);
  expect(quiet.stdout).toMatch(/^rebuilt \d+ events into g2 in /m);
  const status = JSON.parse((await runCli(['projections', 'status'], env)).stdout) as Record<string, unknown>;
  expect(status).toMatchObject({ activeGeneration: 'g2', upToDate: true });

  const shown = await runCli(['projections', 'rebuild', '--settle-ms', '0', '--grace-ms', '0'], env);
  expect(shown.code).toBe(0);
  expect(shown.stdout).toMatch(/^rebuild: building 100% /m);
  expect(shown.stdout).toMatch(/^rebuilt \d+ events into g3 in /m);
});
