/**
 * Files and directories of the server that the user running a command may not use: what it is told.
 *
 * A data dir inside a directory this user may not look inside (a parent of mode 0700 owned by another user, a volume
 * mounted for root only): `mailbox serve` refused it in Node's words, "cannot be used (EACCES: EACCES: permission
 * denied, lstat '<data dir>')": the code twice, the system call, and not which directory refuses. It names it now.
 *
 * The server's admin.token (0600, the server's user's) read by an admin command run as another user: it was told to
 * "delete the file and start the server to get a new one", replacing the admin token every script of that server holds.
 *
 * The server's event log (0600) read by `mailbox heartbeat`, `audit` or `projections` run as another user: INTERNAL
 * "unable to open database file", naming no file and no remedy.
 */
import fs from 'node:fs';
import path from 'node:path';
import { createMailbox } from '../../src/mailbox';
import { ensureBuilt } from '../support/builtCli';
import { ADMIN_TOKEN, tempDir } from '../support/fixtures';
import { asRoot, otherUserCanRunCli, runCliAsOtherUser } from '../support/otherUser';
import { freePort } from '../support/redisServer';

let root: string;
beforeAll(() => {
  ensureBuilt();
  root = tempDir('mailbox-unsearchable-');
  if (asRoot) fs.chmodSync(root, 0o755); // nobody may look inside the temp dir, not inside what each test locks
});
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

test('a data dir in a directory this user may not look inside: one line naming that directory, exit code 2', async () => {
  if (!otherUserCanRunCli()) return;
  const locked = path.join(root, 'locked');
  fs.mkdirSync(locked);
  fs.chmodSync(locked, asRoot ? 0o700 : 0o600);
  const dataDir = path.join(locked, 'data');
  try {
    const run = await runCliAsOtherUser(['serve'], { MAILBOX_DATA_DIR: dataDir, MAILBOX_PORT: '0' });
    expect(run.stderr).toBe(
      `mailbox: MAILBOX_DATA_DIR='${dataDir}': ${dataDir} cannot be used (EACCES: ${locked} refuses this user: it may ` +
        'not look inside); set MAILBOX_DATA_DIR to a directory this user can write, or fix its permissions.\n',
    );
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
  } finally {
    fs.chmodSync(locked, 0o700);
  }
  expect(fs.existsSync(dataDir)).toBe(false); // nothing created
});

test("an admin command that may not read the server's admin.token: told to run as the server's user, not to delete it", async () => {
  if (!otherUserCanRunCli()) return;
  const dataDir = path.join(root, 'data');
  fs.mkdirSync(dataDir, { mode: 0o755 });
  const file = path.join(dataDir, 'admin.token');
  fs.writeFileSync(file, `mbx_admin_${'x'.repeat(43)}\n`, { mode: asRoot ? 0o600 : 0o000 });
  const run = await runCliAsOtherUser(['agent', 'add', '@q'], {
    MAILBOX_DATA_DIR: dataDir,
    MAILBOX_URL: `http://127.0.0.1:${await freePort()}`,
  });
  expect(run.stderr).toBe(
    `error: No admin token: ${file} cannot be read (EACCES: this user may not read it; the server keeps it for its own ` +
      'user only). Run this command as the user the server runs as, or pass --token <admin token> or set ' +
      'MAILBOX_ADMIN_TOKEN. (UNAUTHENTICATED)\n',
  );
  expect(run.code).toBe(1);
  expect(run.stdout).toBe('');
  expect(fs.existsSync(file)).toBe(true);
});

test("heartbeat and projections run by a user who may not read the server's log: one line naming the file, exit code 2", async () => {
  if (!otherUserCanRunCli()) return;
  const dataDir = path.join(root, 'served');
  const mailbox = await createMailbox({ dataDir, adminToken: ADMIN_TOKEN, logLevel: 'silent' });
  await (await mailbox.as(ADMIN_TOKEN)).registerAgent({ identity: '@a' });
  await mailbox.close();
  fs.chmodSync(dataDir, 0o755); // the files are the server's (0600; 0000 when this user is their owner)
  const log = path.join(dataDir, 'events.sqlite');
  if (!asRoot) for (const file of fs.readdirSync(dataDir)) fs.chmodSync(path.join(dataDir, file), 0o000);
  const said =
    `MAILBOX_DATA_DIR='${dataDir}': ${log} cannot be read by this user (EACCES; the server keeps its files for its own ` +
    'user only): run this command as the user the server runs as, or give this user read access to it.';
  const heartbeat = await runCliAsOtherUser(['heartbeat', '--once'], { MAILBOX_DATA_DIR: dataDir });
  expect(heartbeat.stderr).toBe(`mailbox: ${said}\n`);
  expect(heartbeat.code).toBe(2);
  expect(heartbeat.stdout).toBe('');
  // projections status says it in the same line (it printed its envelope); the envelope with --json.
  const status = await runCliAsOtherUser(['projections', 'status'], { MAILBOX_DATA_DIR: dataDir });
  expect(status.stderr).toBe(`mailbox: ${said}\n`);
  expect(status.code).toBe(2);
  const json = await runCliAsOtherUser(['projections', 'status', '--json'], { MAILBOX_DATA_DIR: dataDir });
  expect(JSON.parse(json.stderr)).toEqual({
    error: 'Files not readable by this user',
    code: 'UNAVAILABLE',
    message: said,
    field: 'MAILBOX_DATA_DIR',
    file: log,
  });
  expect(json.code).toBe(2);
});

// The data dir as the server makes it (0700): another user may not even look inside, and backup, audit and projections
// failed as INTERNAL "EACCES: permission denied, stat '<data dir>/events.sqlite'" (no remedy).
test('backup, audit verify and projections status in a data dir this user may not look inside: the file and the remedy, exit code 2', async () => {
  if (!otherUserCanRunCli()) return;
  const dataDir = path.join(root, 'closed');
  const mailbox = await createMailbox({ dataDir, adminToken: ADMIN_TOKEN, logLevel: 'silent' });
  const admin = await mailbox.as(ADMIN_TOKEN);
  for (const identity of ['@a', '@b', '@c']) await admin.registerAgent({ identity });
  await mailbox.close();
  const out = path.join(root, 'backups');
  fs.mkdirSync(out, { mode: 0o777 });
  fs.chmodSync(out, 0o777); // this user may write the copy there
  fs.chmodSync(dataDir, asRoot ? 0o700 : 0o000);
  const log = path.join(dataDir, 'events.sqlite');
  const refusal = {
    error: 'Files not readable by this user',
    code: 'UNAVAILABLE',
    message:
      `MAILBOX_DATA_DIR='${dataDir}': ${log} cannot be read by this user (EACCES; the server keeps its files for its own ` +
      'user only): run this command as the user the server runs as, or give this user read access to it.',
    field: 'MAILBOX_DATA_DIR',
    file: log,
  };
  try {
    for (const args of [
      ['backup', path.join(out, 'copy.sqlite')],
      ['audit', 'verify'],
      ['projections', 'status'],
    ]) {
      const run = await runCliAsOtherUser([...args, '--json'], { MAILBOX_DATA_DIR: dataDir });
      expect({ args, code: run.code, stdout: run.stdout, said: JSON.parse(run.stderr) }).toEqual({
        args,
        code: 2,
        stdout: '',
        said: refusal,
      });
    }
  } finally {
    fs.chmodSync(dataDir, 0o700);
  }
  expect(fs.readdirSync(out)).toEqual([]); // no copy left
});
