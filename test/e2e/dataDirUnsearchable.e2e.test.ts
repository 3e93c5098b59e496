/**
 * A data dir inside a directory this user may not look inside (a parent of mode 0700 owned by another user, a volume
 * mounted for root only). `mailbox serve` refused it in Node's words, "cannot be used (EACCES: EACCES: permission
 * denied, lstat '<data dir>')": the code twice, the system call, and not which directory refuses. It names it now.
 */
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { ensureBuilt, MAILBOX_BIN, ROOT, type CliRun } from '../support/builtCli';
import { tempDir } from '../support/fixtures';

const NOBODY = 65534;
const asRoot = process.getuid?.() === 0;
let root: string;
beforeAll(() => {
  ensureBuilt();
  root = tempDir('mailbox-unsearchable-');
});
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

/** `mailbox serve` as this user, or, run by root (whom modes do not stop), as nobody. */
function serveAs(env: Record<string, string>): Promise<CliRun> {
  const base = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('MAILBOX_')));
  const child = spawn(process.execPath, [MAILBOX_BIN, 'serve'], {
    cwd: ROOT,
    env: { ...base, ...env },
    ...(asRoot ? { uid: NOBODY, gid: NOBODY } : {}),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += String(chunk)));
  child.stderr.on('data', (chunk) => (stderr += String(chunk)));
  const timer = setTimeout(() => child.kill('SIGKILL'), 45_000);
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

test('a data dir in a directory this user may not look inside: one line naming that directory, exit code 2', async () => {
  // Root runs the server as nobody, which must be able to run the CLI from this checkout.
  if (asRoot && spawnSync(process.execPath, [MAILBOX_BIN, '--version'], { cwd: ROOT, uid: NOBODY, gid: NOBODY }).status !== 0) {
    process.stderr.write('skipped: running as root, and user nobody cannot run bin/mailbox.js from this checkout\n');
    return;
  }
  const locked = path.join(root, 'locked');
  fs.mkdirSync(locked);
  if (asRoot) fs.chmodSync(root, 0o755); // nobody may look inside the temp dir, not inside `locked` (root's, 0700)
  fs.chmodSync(locked, asRoot ? 0o700 : 0o600);
  const dataDir = path.join(locked, 'data');
  try {
    const run = await serveAs({ MAILBOX_DATA_DIR: dataDir, MAILBOX_PORT: '0' });
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
