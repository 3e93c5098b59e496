/**
 * A first start whose generated admin token finds no room (a full disk, a quota, a file size limit: here `ulimit -f 0`,
 * SIGXFSZ ignored, with the log in memory so that the token is the only file written): it was a stack trace (`Error:
 * EFBIG: file too large, write`), exit code 1, and it left an empty admin.token that refused every later start ("holds
 * an admin token of 0 characters ... delete the file"). It is one line naming the file, the cause and the remedy, exit
 * code 2, no file left, and the next start with room generates the token as a first start does. And a start whose
 * views' owner file finds no room (a full disk met after the log opened) said "set MAILBOX_DATA_DIR to a writable
 * directory", where a start finds none of this mailbox's messages: it says the disk is full and to free space there.
 * A first start whose log got no byte (SQLite's first page refused) left that empty events.sqlite, and the data dir it
 * made: it leaves the data dir as it found it, as any refused first start does.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { ensureBuilt, MAILBOX_BIN, runCli, startCli } from '../support/builtCli';
import { tempDir } from '../support/fixtures';
import { waitFor } from '../support/waitFor';

// The built CLI: on the sources, the transpile cache cannot be written under the limit, and each start took 15 s.
beforeAll(() => ensureBuilt());

/** `mailbox serve` that may write no byte to a file (`ulimit -f 0`, SIGXFSZ ignored): its exit code and stderr. */
async function serveWithoutRoom(env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  const serve = [process.execPath, MAILBOX_BIN, 'serve'].map((arg) => `'${arg}'`).join(' ');
  const refused = spawn('/bin/sh', ['-c', `trap '' XFSZ; ulimit -f 0; exec ${serve}`], {
    env: { PATH: process.env.PATH, ...env, MAILBOX_LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  refused.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => refused.once('exit', resolve));
  return { code, stderr };
}

test('no room for the generated admin token: one line, exit code 2, no empty admin.token; the next start generates it', async () => {
  const dataDir = path.join(tempDir('mailbox-token-room-'), 'data');
  const env = { MAILBOX_PORT: '0', MAILBOX_DATA_DIR: dataDir, MAILBOX_EVENTSTORE_URL: 'memory:' };
  const { code, stderr } = await serveWithoutRoom(env);
  expect(stderr.trimEnd().split('\n')).toEqual([
    `mailbox: cannot write the generated admin token to ${dataDir}/admin.token (EFBIG: the file size limit of this ` +
      'process is reached); nothing was kept: raise it (ulimit -f), or set MAILBOX_ADMIN_TOKEN (e.g. the output of ' +
      '`openssl rand -hex 32`).',
  ]);
  expect(code).toBe(2);
  expect(fs.readdirSync(dataDir)).toEqual([]);

  const server = startCli(['serve'], env);
  try {
    await waitFor(() => /mailbox listening on/.test(server.stdout()) || server.child.exitCode !== null, {
      timeoutMs: 30_000,
      what: 'the second start listening',
    });
    expect(server.stderr()).toBe('');
    expect(server.stdout()).toContain('Admin token (generated now and shown only this once');
    expect(fs.readFileSync(path.join(dataDir, 'admin.token'), 'utf8')).toMatch(/^mbx_admin_\S{32,}\n$/);
  } finally {
    server.child.kill('SIGTERM');
    expect((await server.exited).code).toBe(0);
  }
}, 120_000);

test('no room for the views owner file at start: the disk is full, free space there, not another data dir', async () => {
  const dataDir = path.join(tempDir('mailbox-owner-room-'), 'data');
  const env = { MAILBOX_PORT: '0', MAILBOX_DATA_DIR: dataDir };
  const first = startCli(['serve'], env);
  await waitFor(() => /mailbox listening on/.test(first.stdout()) || first.child.exitCode !== null, {
    timeoutMs: 30_000,
    what: 'the first start serving',
  });
  first.child.kill('SIGTERM');
  expect((await first.exited).code).toBe(0);
  // Every write to /dev/full is ENOSPC, as on a full disk: the log and views open (they have their pages), the owner file does not.
  fs.symlinkSync('/dev/full', path.join(dataDir, 'views.sqlite.owner'));
  const refused = await runCli(['serve'], { ...env, MAILBOX_LOG_LEVEL: 'warn' });
  expect(refused.stderr.trimEnd().split('\n')).toEqual([
    `mailbox: MAILBOX_DATA_DIR='${dataDir}': cannot write ${dataDir} (ENOSPC: the disk is full); free disk space there, ` +
      'then start again.',
  ]);
  expect(refused.code).toBe(2);
}, 120_000);

test('a first start whose log gets no byte: the data dir as it found it (one made removed, one there left empty)', async () => {
  const root = tempDir('mailbox-log-room-');
  for (const dataDir of [path.join(root, 'made'), path.join(root, 'there')]) {
    if (dataDir.endsWith('there')) fs.mkdirSync(dataDir);
    const { code, stderr } = await serveWithoutRoom({ MAILBOX_PORT: '0', MAILBOX_DATA_DIR: dataDir });
    expect(stderr).toMatch(new RegExp(`^mailbox: MAILBOX_DATA_DIR='${dataDir}': the disk failed a read or write`));
    expect(code).toBe(2);
  }
  expect(fs.readdirSync(root)).toEqual(['there']);
  expect(fs.readdirSync(path.join(root, 'there'))).toEqual([]);
}, 120_000);
