/**
 * The generated admin token is kept (stored 0600, printed once) only when `keepAdminToken` is called, after the stores
 * opened (src/server.ts); until then nothing is written or printed. A token another process stored in between wins:
 * it is returned for the server to start with, and the generated one is neither stored nor printed.
 */
import fs from 'node:fs';
import path from 'node:path';
import { keepAdminToken, prepareAdminToken } from '../../src/adminToken';
import { parseConfig } from '../../src/config';
import { silentLogger, tempDir } from '../support/fixtures';

const STORED = 'a-token-another-process-stored-0123456789';

test('a generated token: nothing written or printed until it is kept; then stored 0600 and printed once', () => {
  const dataDir = path.join(tempDir('mailbox-admin-keep-'), 'data');
  const prepared = prepareAdminToken(parseConfig({ dataDir }), silentLogger);
  expect(prepared).toMatchObject({ source: 'generated', pending: true });
  expect(fs.existsSync(dataDir)).toBe(false);
  const printed: string[] = [];
  const kept = keepAdminToken(prepared, silentLogger, (text) => printed.push(text));
  expect(kept).toEqual({ token: prepared.token, source: 'generated', file: path.join(dataDir, 'admin.token') });
  expect(fs.readFileSync(kept.file!, 'utf8')).toBe(`${prepared.token}\n`);
  expect(fs.statSync(kept.file!).mode & 0o777).toBe(0o600);
  expect(printed).toHaveLength(1);
  expect(printed[0]).toContain(prepared.token);
  // The next start reads it, and prints nothing.
  const again = prepareAdminToken(parseConfig({ dataDir }), silentLogger);
  expect(again).toMatchObject({ token: prepared.token, source: 'file', pending: false });
  expect(keepAdminToken(again, silentLogger, (text) => printed.push(text)).token).toBe(prepared.token);
  expect(printed).toHaveLength(1);
});

test('a token another process stored between: it is returned, the generated one neither stored nor printed', () => {
  const dataDir = path.join(tempDir('mailbox-admin-keep-'), 'data');
  const prepared = prepareAdminToken(parseConfig({ dataDir }), silentLogger);
  fs.mkdirSync(dataDir, { mode: 0o700 });
  fs.writeFileSync(path.join(dataDir, 'admin.token'), `${STORED}\n`, { mode: 0o600 });
  const printed: string[] = [];
  const kept = keepAdminToken(prepared, silentLogger, (text) => printed.push(text));
  expect(kept).toEqual({ token: STORED, source: 'file', file: path.join(dataDir, 'admin.token') });
  expect(printed).toEqual([]);
  expect(fs.readFileSync(path.join(dataDir, 'admin.token'), 'utf8')).toBe(`${STORED}\n`);
});
