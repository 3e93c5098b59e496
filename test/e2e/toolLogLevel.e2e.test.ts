/**
 * MAILBOX_LOG_LEVEL in the operator's tools, whose stderr carries their envelopes: warn while unset, else the variable
 * as serve reads it. `mailbox projections` logged at warn whatever it said (MAILBOX_LOG_LEVEL=info showed nothing
 * more), and `mailbox audit` failed on an empty one as INTERNAL "default level: must be included in custom levels".
 */
import fs from 'node:fs';
import pino from 'pino';
import { createMailbox } from '../../src/mailbox';
import { ensureBuilt, runCli } from '../support/builtCli';
import { ADMIN_TOKEN, tempDir } from '../support/fixtures';

let dataDir: string;
beforeAll(async () => {
  ensureBuilt();
  dataDir = tempDir('mailbox-tool-log-');
  const mailbox = await createMailbox({ dataDir, adminToken: ADMIN_TOKEN }, { logger: pino({ level: 'silent' }) });
  await mailbox.close(); // a log and views file for the tools to read
});
afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));

const opened = /"msg":"event store: SQLite \(embedded default\)"/;

test('projections status: quiet at warn by default, the info lines with MAILBOX_LOG_LEVEL=info', async () => {
  const quiet = await runCli(['projections', 'status'], { MAILBOX_DATA_DIR: dataDir });
  expect(quiet.code).toBe(0);
  expect(quiet.stdout).toMatch(/"checkpoint"/); // it ran
  expect(quiet.stderr).toBe('');
  const told = await runCli(['projections', 'status'], { MAILBOX_DATA_DIR: dataDir, MAILBOX_LOG_LEVEL: 'info' });
  expect(told.code).toBe(0);
  expect(told.stderr).toMatch(opened);
});

test('audit and projections: an unset MAILBOX_LOG_LEVEL is warn, an empty or bad one refused in serve’s words', async () => {
  const unset = await runCli(['audit', 'replay'], { MAILBOX_DATA_DIR: dataDir });
  expect(unset).toMatchObject({ code: 0, stderr: '0 of 0 events shown\n' }); // its summary, and no log line
  // Empty is refused as serve refuses it (it was read as unset), never taken as a default.
  const empty = await runCli(['audit', 'replay', '--json'], { MAILBOX_DATA_DIR: dataDir, MAILBOX_LOG_LEVEL: '' });
  expect(empty.code).toBe(2);
  expect(JSON.parse(empty.stderr)).toMatchObject({
    code: 'VALIDATION_FAILED',
    field: 'MAILBOX_LOG_LEVEL',
    message: expect.stringMatching(/^MAILBOX_LOG_LEVEL is set but empty .*, or unset it[.]$/),
  });
  for (const args of [
    ['audit', 'replay'],
    ['projections', 'status'],
  ]) {
    const bad = await runCli([...args, '--json'], { MAILBOX_DATA_DIR: dataDir, MAILBOX_LOG_LEVEL: 'loud' });
    expect(bad.code).toBe(2);
    expect(JSON.parse(bad.stderr)).toMatchObject({
      code: 'VALIDATION_FAILED',
      field: 'MAILBOX_LOG_LEVEL',
      message:
        "MAILBOX_LOG_LEVEL='loud' is not valid: set MAILBOX_LOG_LEVEL to one of fatal, error, warn, info, debug, trace, silent.",
    });
  }
});
