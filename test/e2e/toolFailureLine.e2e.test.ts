/**
 * `mailbox backup` as an operator runs it: a failure is one line on stderr, `mailbox: <message>`, as serve's, the
 * heartbeat's and the client commands' are, and the JSON envelope only with --json (it printed the envelope either
 * way). Exit codes as before; never a stack trace; nothing written.
 */
import fs from 'node:fs';
import path from 'node:path';
import { SqliteEventStore } from '../../src/adapters/eventstore/sqliteEventStore';
import { ensureBuilt, runCli, type CliRun } from '../support/builtCli';
import { tempDir, threeAgentsDataDir } from '../support/fixtures';

beforeAll(() => ensureBuilt());

/** The run said one line, `mailbox: ...`, no JSON and no stack trace, with exit code `code`; the line. */
function theLine(run: CliRun, code: number): string {
  expect({ code: run.code, lines: run.stderr.trimEnd().split('\n').length }).toEqual({ code, lines: 1 });
  expect(run.stderr).toMatch(/^mailbox: /);
  expect(run.stderr).not.toContain('{');
  expect(run.stderr).not.toMatch(/\n\s+at /);
  return run.stderr.trimEnd();
}

/** The same run with --json: the envelope, one JSON line, the same exit code. */
function theEnvelope(run: CliRun, code: number): Record<string, unknown> {
  expect({ code: run.code, lines: run.stderr.trimEnd().split('\n').length }).toEqual({ code, lines: 1 });
  return JSON.parse(run.stderr) as Record<string, unknown>;
}

async function logHead(dataDir: string): Promise<bigint | null> {
  const store = SqliteEventStore.open(path.join(dataDir, 'events.sqlite'), undefined, { readOnly: true });
  try {
    return await store.headPosition();
  } finally {
    await store.close();
  }
}

const missingLog = () => ({ MAILBOX_DATA_DIR: path.join(tempDir('mailbox-line-'), 'nothing-here') });

describe('mailbox backup', () => {
  test('a destination that exists is one line saying so, exit 2; nothing is written', async () => {
    const dataDir = await threeAgentsDataDir('mailbox-line-backup-');
    const head = await logHead(dataDir);
    const destination = path.join(tempDir('mailbox-line-dest-'), 'taken.sqlite');
    fs.writeFileSync(destination, 'mine');
    const line = theLine(await runCli(['backup', destination], { MAILBOX_DATA_DIR: dataDir }), 2);
    expect(line).toContain(destination);
    const json = await runCli(['backup', destination, '--json'], { MAILBOX_DATA_DIR: dataDir });
    expect(theEnvelope(json, 2)).toHaveProperty('code');
    expect(fs.readFileSync(destination, 'utf8')).toBe('mine');
    expect(await logHead(dataDir)).toBe(head);
  });

  test('no event log is one line, exit 1', async () => {
    const env = missingLog();
    const destination = path.join(tempDir('mailbox-line-dest-'), 'b.sqlite');
    expect(theLine(await runCli(['backup', destination], env), 1)).toContain('There is no event log');
    expect(theEnvelope(await runCli(['backup', destination, '--json'], env), 1)).toMatchObject({ code: 'NOT_FOUND' });
    expect(fs.existsSync(destination)).toBe(false);
  });
});

test.each([['backup']])('%s --help says what --json does to a failure', async (...command) => {
  const run = await runCli([...command, '--help'], {});
  expect(run.stdout.replace(/\s+/g, ' ')).toContain('a failure as the JSON error envelope on stderr');
});
