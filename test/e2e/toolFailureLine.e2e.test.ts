/**
 * `mailbox audit`, `mailbox projections` and `mailbox backup` as an operator runs them: a failure is one line on stderr,
 * `mailbox: <message>`, as serve's, the heartbeat's and the client commands' are, and the JSON envelope only with
 * --json (they printed the envelope either way). Exit codes as before; never a stack trace; nothing written.
 */
import fs from 'node:fs';
import net from 'node:net';
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

/** A loopback port nothing listens on (taken, then let go). */
const closedPort = (): Promise<number> =>
  new Promise((resolve) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });

async function logHead(dataDir: string): Promise<bigint | null> {
  const store = SqliteEventStore.open(path.join(dataDir, 'events.sqlite'), undefined, { readOnly: true });
  try {
    return await store.headPosition();
  } finally {
    await store.close();
  }
}

const missingLog = () => ({ MAILBOX_DATA_DIR: path.join(tempDir('mailbox-line-'), 'nothing-here') });

describe('mailbox audit', () => {
  test('a bad --from is one line naming the flag and its form, exit 2; --json the envelope', async () => {
    const line = theLine(await runCli(['audit', 'replay', '--from', 'abc'], missingLog()), 2);
    expect(line).toBe("mailbox: audit replay: '--from' takes a log position (digits), e.g. --from 1200");
    expect(theEnvelope(await runCli(['audit', 'replay', '--from', 'abc', '--json'], missingLog()), 2)).toMatchObject({
      error: 'Validation failed',
      code: 'VALIDATION_FAILED',
      field: '--from',
    });
  });

  test('an unreachable server is one line naming it and --url, exit 2', async () => {
    const url = `http://127.0.0.1:${await closedPort()}`;
    const env = { ...missingLog(), MAILBOX_AUDIT_TOKEN: 'some-auditor-token' };
    const line = theLine(await runCli(['audit', 'agent', '@a', '--url', url], env), 2);
    expect(line).toMatch(new RegExp(`^mailbox: Cannot reach the mailbox at ${url}.*Check --url\\.$`));
    expect(theEnvelope(await runCli(['audit', 'agent', '@a', '--url', url, '--json'], env), 2)).toMatchObject({
      error: 'Mailbox unreachable',
      code: 'UNAVAILABLE',
      url,
    });
  });

  test('replay where there is no log: one line naming the file and the variable, exit 1, nothing created', async () => {
    const env = missingLog();
    const line = theLine(await runCli(['audit', 'replay'], env), 1);
    expect(line).toContain(`There is no event log at ${env.MAILBOX_DATA_DIR}/events.sqlite`);
    expect(line).toContain('check MAILBOX_DATA_DIR');
    expect(fs.existsSync(env.MAILBOX_DATA_DIR)).toBe(false);
  });

  test('a message the log does not hold is one line, exit 1, and the log is as it was', async () => {
    const dataDir = await threeAgentsDataDir('mailbox-line-audit-');
    const head = await logHead(dataDir);
    const id = '0190a8d2-0000-7000-8000-000000000000';
    const run = await runCli(['audit', 'message', id], { MAILBOX_DATA_DIR: dataDir });
    expect(theLine(run, 1)).toContain(id);
    expect(theEnvelope(await runCli(['audit', 'message', id, '--json'], { MAILBOX_DATA_DIR: dataDir }), 1)).toMatchObject({
      code: 'MESSAGE_NOT_FOUND',
    });
    expect(await logHead(dataDir)).toBe(head);
  });
});

describe('mailbox projections', () => {
  test('a bad --grace-ms is one line, exit 2; --json the envelope', async () => {
    const line = theLine(await runCli(['projections', 'rebuild', '--grace-ms', 'abc'], missingLog()), 2);
    expect(line).toBe(
      "mailbox: projections rebuild: '--grace-ms' takes a whole number of milliseconds up to 2147483647 (e.g. --grace-ms " +
        "5000), written in plain decimal digits, not 'abc'",
    );
    const json = await runCli(['projections', 'rebuild', '--grace-ms', 'abc', '--json'], missingLog());
    expect(theEnvelope(json, 2)).toMatchObject({ code: 'VALIDATION_FAILED', field: '--grace-ms' });
  });

  test.each([['status'], ['drop', 'g1']])('%s without an event log is one line naming the directory, exit 1', async (...args) => {
    const env = missingLog();
    const line = theLine(await runCli(['projections', ...args], env), 1);
    expect(line).toContain(`There is no event log at ${env.MAILBOX_DATA_DIR}/events.sqlite`);
    expect(theEnvelope(await runCli(['projections', ...args, '--json'], env), 1)).toMatchObject({
      error: 'No event log',
      code: 'NOT_FOUND',
      field: 'MAILBOX_DATA_DIR',
    });
    expect(fs.existsSync(env.MAILBOX_DATA_DIR)).toBe(false);
  });
});

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

test.each([['audit', 'replay'], ['audit', 'verify'], ['projections', 'rebuild'], ['projections', 'drop'], ['backup']])(
  '%s %s --help says what --json does to a failure',
  async (...command) => {
    const run = await runCli([...command, '--help'], {});
    expect(run.stdout.replace(/\s+/g, ' ')).toContain('a failure as the JSON error envelope on stderr');
  },
);
