/**
 * The commands that only read the log (`mailbox audit ...`, `mailbox projections status | rebuild`) never create one.
 * Pointed at an empty or mistyped MAILBOX_DATA_DIR (or a sqlite: URL naming no file), they created a new
 * events.sqlite (a new log identity) and views.sqlite there, then answered as if the log were empty: `0 of 0 events
 * shown`, `OK: the live projections match`, a status of a log nobody wrote. Now each refuses with one line naming the
 * file it looked for and what to check, exit code 1 (not found, as `audit replay --json` always did), and the
 * directory is left exactly as it was.
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { runRebuildCommand, runStatusCommand, type ProjectionsIo } from '../../src/cli/commands/projections';
import { capture, runAuditCli as audit } from '../support/auditCli';
import { tempDir } from '../support/fixtures';

type Run = (env: NodeJS.ProcessEnv) => Promise<{ code: number; stdout: string; stderr: string }>;

/** `mailbox projections <command>` as the CLI runs it, with its output and the exit code it set. */
const projections =
  (command: (io: ProjectionsIo) => Promise<void>): Run =>
  async (env) => {
    const out = capture();
    const err = capture();
    process.exitCode = undefined;
    await command({ stdout: out.stream, stderr: err.stream, env });
    const code = Number(process.exitCode ?? 0);
    process.exitCode = undefined;
    return { code, stdout: out.text(), stderr: err.text() };
  };

const COMMANDS: Array<[string, Run]> = [
  ['audit replay', (env) => audit(['replay', '--no-progress'], env)],
  ['audit replay --json', (env) => audit(['replay', '--json'], env)],
  ['audit message <id>', (env) => audit(['message', randomUUID()], env)],
  ['audit agent @a', (env) => audit(['agent', '@a'], env)],
  ['audit unwoken', (env) => audit(['unwoken'], env)],
  ['audit verify', (env) => audit(['verify', '--no-progress'], env)],
  ['projections status', projections(runStatusCommand)],
  ['projections rebuild', projections((io) => runRebuildCommand(io, { graceMs: '0', settleMs: '0' }))],
];

/** Every path under dir, so that a test sees any file or directory a command left. */
const tree = (dir: string): string[] =>
  fs
    .readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .map((entry) => path.join(dir, entry))
    .sort();

describe.each(COMMANDS)('mailbox %s where there is no log', (_name, run) => {
  let root: string;
  beforeEach(() => {
    root = tempDir('mailbox-read-only-');
  });

  async function refuses(env: NodeJS.ProcessEnv, file: string, check: string) {
    const { code, stdout, stderr } = await run({ MAILBOX_LOG_LEVEL: 'silent', ...env });
    expect(stdout).toBe('');
    expect(stderr.trim().split('\n')).toHaveLength(1);
    const error = JSON.parse(stderr);
    expect(error).toMatchObject({ error: 'No event log', code: 'NOT_FOUND', file, field: check });
    expect(error.message).toContain(`There is no event log at ${file}`);
    expect(error.message).toContain(`check ${check}`);
    expect(code).toBe(1);
    return error.message as string;
  }

  test('an empty MAILBOX_DATA_DIR: refused, and nothing is created in it', async () => {
    const dataDir = path.join(root, 'data');
    fs.mkdirSync(dataDir);
    await refuses({ MAILBOX_DATA_DIR: dataDir }, path.join(dataDir, 'events.sqlite'), 'MAILBOX_DATA_DIR');
    expect(tree(root)).toEqual([dataDir]);
  });

  test('a mistyped MAILBOX_DATA_DIR: refused, saying the directory does not exist, and it is not made', async () => {
    const dataDir = path.join(root, 'dta');
    const message = await refuses({ MAILBOX_DATA_DIR: dataDir }, path.join(dataDir, 'events.sqlite'), 'MAILBOX_DATA_DIR');
    expect(message).toContain(`MAILBOX_DATA_DIR is ${dataDir}, a directory that does not exist`);
    expect(tree(root)).toEqual([]);
  });

  test('a sqlite: URL naming no file: refused, naming MAILBOX_EVENTSTORE_URL, and nothing is created', async () => {
    const file = path.join(root, 'log.sqlite');
    await refuses({ MAILBOX_EVENTSTORE_URL: `sqlite:${file}` }, file, 'MAILBOX_EVENTSTORE_URL');
    expect(tree(root)).toEqual([]);
  });
});
