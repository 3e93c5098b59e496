/**
 * A data dir written as a shell would expand it, where no shell did (`MAILBOX_DATA_DIR="~/mbx"` quoted, a systemd
 * unit's Environment=, an env file, `--data-dir=~/mbx`): `mailbox serve` made a directory named `~` in its working
 * directory, printed the admin token and served from there. It is one line now, exit code 2, nothing created, naming
 * the path written out; a directory of that name there already (a mailbox started so before) keeps serving.
 */
import fs from 'node:fs';
import path from 'node:path';
import { ensureBuilt, runCli, startCli } from '../support/builtCli';
import { tempDir } from '../support/fixtures';
import { waitFor } from '../support/waitFor';

let cwd: string;
let home: string;
beforeAll(() => {
  ensureBuilt();
  cwd = tempDir('mailbox-unexpanded-');
  home = tempDir('mailbox-unexpanded-home-');
});
afterAll(() => {
  fs.rmSync(cwd, { recursive: true, force: true });
  fs.rmSync(home, { recursive: true, force: true });
});

test.each([
  [{ MAILBOX_DATA_DIR: '~/mbx' }, [], "MAILBOX_DATA_DIR='~/mbx' holds ~, which only a shell expands", 'mbx'],
  [{ MAILBOX_DATA_DIR: '$HOME/mbx' }, [], "MAILBOX_DATA_DIR='$HOME/mbx' holds $HOME", 'mbx'],
  [{}, ['--data-dir=${HOME}/mbx'], "--data-dir: '${HOME}/mbx' holds ${HOME}", 'mbx'],
  [
    { MAILBOX_EVENTSTORE_URL: 'sqlite:~/mbx/events.sqlite' },
    [],
    "MAILBOX_EVENTSTORE_URL='sqlite:~/mbx/events.sqlite' holds ~",
    'sqlite:',
  ],
])('%j %j: refused in one line naming the path written out, exit code 2, nothing created', async (env, flags, start, example) => {
  const run = await runCli(['serve', ...flags], { HOME: home, MAILBOX_PORT: '0', ...env }, { cwd });
  expect(run.stderr.trimEnd().split('\n')).toEqual([expect.stringContaining(`mailbox: ${start}`)]);
  const line = run.stderr.trim();
  expect(line).toContain(`taken as written, it names ${cwd}/`);
  expect(line).toContain(
    `the path written out, e.g. ${example === 'sqlite:' ? `sqlite:${home}/mbx/events.sqlite` : `${home}/mbx`}.`,
  );
  expect(run.code).toBe(2);
  expect(run.stdout).not.toContain('Admin token');
  expect(fs.readdirSync(cwd)).toEqual([]);
});

test('a directory named ~ there already (a mailbox started so before) keeps serving its data', async () => {
  const dir = path.join(cwd, 'kept');
  fs.mkdirSync(path.join(dir, '~', 'mbx'), { recursive: true });
  const server = startCli(['serve'], { HOME: home, MAILBOX_PORT: '0', MAILBOX_DATA_DIR: '~/mbx' }, { cwd: dir });
  try {
    await waitFor(() => /mailbox listening on/.test(server.stdout()) || server.child.exitCode !== null, {
      timeoutMs: 30_000,
      what: 'the server listening',
    });
    expect(server.stdout()).toContain('mailbox listening on');
    expect(fs.existsSync(path.join(dir, '~', 'mbx', 'admin.token'))).toBe(true);
  } finally {
    server.child.kill('SIGTERM');
    expect((await server.exited).code).toBe(0);
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
