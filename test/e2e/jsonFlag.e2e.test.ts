/**
 * `--json` where a command prints JSON anyway: a script that passes --json to every command it runs was refused with
 * "unknown option '--json'" (exit 2) by `mailbox projections status` and `mailbox heartbeat --once`, whose output is
 * JSON already. Both take it now; on the heartbeat it also makes the log lines JSON on a terminal setting (it overrides
 * MAILBOX_LOG_FORMAT=pretty), so that everything it prints parses.
 */
import fs from 'node:fs';
import pino from 'pino';
import { ADMIN_ACTOR } from '../../src/commands/roles';
import { createMailbox } from '../../src/mailbox';
import { ensureBuilt, runCli } from '../support/builtCli';
import { ADMIN_TOKEN, tempDir } from '../support/fixtures';

let dataDir: string;
beforeAll(async () => {
  ensureBuilt();
  dataDir = tempDir('mailbox-json-flag-');
  const mailbox = await createMailbox({ dataDir, adminToken: ADMIN_TOKEN }, { logger: pino({ level: 'silent' }) });
  for (const identity of ['@a', '@b', '@c']) await mailbox.asActor(ADMIN_ACTOR).registerAgent({ identity });
  await mailbox.close(); // a log and views file made by a server, for the tools to read
});
afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));

const jsonLines = (text: string) =>
  text
    .trimEnd()
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);

test('projections status --json: the same JSON document as without it, exit 0', async () => {
  const plain = await runCli(['projections', 'status'], { MAILBOX_DATA_DIR: dataDir });
  const flagged = await runCli(['projections', 'status', '--json'], { MAILBOX_DATA_DIR: dataDir });
  expect(plain.code).toBe(0);
  expect(flagged).toMatchObject({ code: 0, stderr: '' });
  expect(JSON.parse(flagged.stdout)).toEqual(JSON.parse(plain.stdout));
  expect(JSON.parse(flagged.stdout)).toMatchObject({ viewsBuilt: true, viewsOfThisLog: true });
});

test('heartbeat --once --json: the report on stdout and every log line on stderr parse as JSON, over MAILBOX_LOG_FORMAT=pretty', async () => {
  const env = { MAILBOX_DATA_DIR: dataDir, MAILBOX_LOG_FORMAT: 'pretty', MAILBOX_LOG_LEVEL: 'info' };
  const pretty = await runCli(['heartbeat', '--once'], env);
  // Without the flag the variable holds: human lines (the positive control that the flag below changes something).
  expect(pretty.stderr.trim()).not.toBe('');
  expect(() => jsonLines(pretty.stderr)).toThrow();
  const flagged = await runCli(['heartbeat', '--once', '--json'], env);
  expect(flagged.code).toBe(pretty.code);
  const report = JSON.parse(flagged.stdout) as { pipeline: { checkpoint: unknown } };
  expect(report.pipeline).toEqual(expect.objectContaining({ checkpoint: expect.anything() }));
  const logs = jsonLines(flagged.stderr);
  expect(logs.length).toBeGreaterThan(0);
  for (const line of logs) expect(line).toMatchObject({ name: 'mailbox-heartbeat', msg: expect.any(String) });
});
