/**
 * A usage error (an unknown option or subcommand, a missing or extra argument, a value not among the choices
 * (cliChoiceValues.e2e), an option given twice) of the operator's commands exits with code 2, as their help says ("2 usage, configuration
 * ..."). It exited 1, commander's code, which these commands give a meaning a script acts on: `audit verify --jsn`
 * in CI read as drift, a typo in a cron job's `heartbeat --once` as a stalled pipeline, `projections status --json`
 * and `backup` without a file as "no event log". Nothing runs: no store is opened, nothing is created. The client
 * commands keep 1 (their one error code).
 */
import fs from 'node:fs';
import path from 'node:path';
import { ensureBuilt, runCli } from '../support/builtCli';
import { tempDir } from '../support/fixtures';
import { packageVersion } from '../../src/packageVersion';

let root: string;
let dataDir: string;
beforeAll(() => {
  ensureBuilt();
  root = tempDir('mailbox-usage-');
  dataDir = path.join(root, 'data');
});
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

test.concurrent.each([
  [['audit', 'verify', '--jsn'], "unknown option '--jsn'"],
  [['audit', 'replay', '--from', '1', '--from', '2'], "option '--from <position>' was given twice"],
  [['audit', 'message'], "missing required argument 'messageId'"],
  [['audit', 'verfy'], "unknown command 'verfy'"],
  [['heartbeat', '--once', '--interval', '1s', '--interval', '2s'], "option '--interval <duration>' was given twice"],
  [['heartbeat', '--onse'], "unknown option '--onse'"],
  [['projections', 'status', '--jsn'], "unknown option '--jsn'"],
  [['projections', 'rebuild', 'now'], "too many arguments for 'rebuild'"],
  [['backup'], "missing required argument 'file'"],
  [['serve', '--prot', '7421'], "unknown option '--prot'"],
  // A misspelt command name: the operator's command it was meant to be exits 1 for a stalled pipeline or drift.
  [['heartbaet', '--once'], "unknown command 'heartbaet'"],
  [['audti', 'verify'], "unknown command 'audti'"],
  [['--once', 'heartbeat'], "unknown option '--once'"],
])('mailbox %j: the error and the help hint, exit code 2, nothing created', async (args, error) => {
  const run = await runCli(args, { MAILBOX_DATA_DIR: dataDir, MAILBOX_PORT: '0' });
  const lines = run.stderr.trimEnd().split('\n'); // commander may add a "(Did you mean --json?)" line between
  expect(lines[0]).toContain(`error: ${error}`);
  expect(lines[lines.length - 1]).toBe('(run with --help for usage)');
  expect(run.stdout).toBe('');
  expect(run.code).toBe(2);
  expect(fs.existsSync(dataDir)).toBe(false);
});

// An option before the command was "unknown option '--port'" and no more, while `serve` takes --port: the error now
// shows the words in the order that works (the command line moved, quoted for the shell), and still runs nothing.
test.concurrent.each([
  [['--port', '8080', 'serve'], 'mailbox serve --port 8080'],
  [['--once', 'heartbeat'], 'mailbox heartbeat --once'],
  [['--json', 'agent', 'list'], 'mailbox agent list --json'],
  [['--priority', 'high', 'send', 'AGENT:*', 'hi there', 'b'], "mailbox send 'AGENT:*' 'hi there' b --priority high"],
])('mailbox %j: the error says the command line with the option after the command, exit code 2', async (args, fixed) => {
  const run = await runCli(args, { MAILBOX_DATA_DIR: dataDir, MAILBOX_PORT: '0', MAILBOX_URL: 'http://127.0.0.1:9' });
  expect(run.stderr.trimEnd().split('\n')).toEqual([
    `error: unknown option '${args[0]}'`,
    `(options go after the command: ${fixed})`,
    '(run with --help for usage)',
  ]);
  expect(run.stdout).toBe('');
  expect(run.code).toBe(2);
  expect(fs.existsSync(dataDir)).toBe(false);
});

test.concurrent('an unknown option with no command after it: no command line is made up', async () => {
  const run = await runCli(['--port', '8080'], { MAILBOX_DATA_DIR: dataDir });
  expect(run.stderr.trimEnd().split('\n')).toEqual(["error: unknown option '--port'", '(run with --help for usage)']);
  expect(run.code).toBe(2);
});

test.concurrent('a command group named without its subcommand prints its help on stderr, exit code 2', async () => {
  const run = await runCli(['audit'], { MAILBOX_DATA_DIR: dataDir });
  expect(run.stderr).toMatch(/^Usage: mailbox audit /);
  expect(run.code).toBe(2);
});

test.concurrent('--help is still exit code 0, and a client command keeps exit code 1 for a usage error', async () => {
  expect((await runCli(['audit', 'verify', '--help'], {})).code).toBe(0);
  const client = await runCli(['send', '--prioriti', 'high', '@b', 's', 'b'], { MAILBOX_URL: 'http://127.0.0.1:9' });
  expect(client.stderr).toContain("error: unknown option '--prioriti'");
  expect(client.code).toBe(1);
});

// `mailbox help audit replay` printed the help of `audit` (commander's help command reads one word), as did `mailbox
// help task move` that of `task`: the reader looking for replay's --from or move's states did not find them.
test.concurrent.each([
  [['audit', 'replay'], 'Usage: mailbox audit replay [options]'],
  [['task', 'move'], 'Usage: mailbox task move [options]'],
  [['agent', 'add'], 'Usage: mailbox agent add [options] <identity>'],
  [['audit', 'verify'], 'Usage: mailbox audit verify [options]'],
])("mailbox help %j prints that subcommand's help, as its --help does, exit code 0", async (words, usage) => {
  const help = await runCli(['help', ...words], {});
  expect(help.stdout.split('\n')[0]).toMatch(new RegExp(`^${usage.replace(/[[\]]/g, '\\$&')}`));
  expect(help.stdout).toBe((await runCli([...words, '--help'], {})).stdout);
  expect(help.code).toBe(0);
});

// `mailbox help audit nosuch` printed the help of audit with exit code 0 (and `help agent nosuch` that of agent), `help
// nosuch` the whole help: a command that does not exist read as one documented there. One line naming it and the
// commands there are, exit code 2, as every word that is no command; nothing runs.
test.concurrent.each([
  [['audit', 'nosuch'], "'audit nosuch': the commands of 'mailbox audit' are replay, message, unwoken, agent and verify"],
  [['agent', 'nosuch'], "'agent nosuch': the commands of 'mailbox agent' are add, list, retire and token"],
  [['nosuch'], "'nosuch': the commands of 'mailbox' are serve, agent, send, inbox, read, unarchive, archive, delivery, "],
  [['nosuch', 'verify'], "'nosuch': the commands of 'mailbox' are serve, agent, "],
])('mailbox help %j: one line naming the unknown command and the valid ones, exit code 2', async (words, named) => {
  const run = await runCli(['help', ...words], { MAILBOX_DATA_DIR: dataDir });
  expect(run.stderr.trimEnd().split('\n')).toEqual([expect.stringContaining(`error: unknown command ${named}`)]);
  expect(run.stdout).toBe('');
  expect(run.code).toBe(2);
  expect(fs.existsSync(dataDir)).toBe(false);
});

// The same asked as `<words> --help` (or -h): `mailbox audit nosuch --help` printed the help of audit with exit code 0,
// `mailbox agent rotate --help` that of agent, `mailbox heartbaet --help` the whole help. Now the same line as `help`.
test.concurrent.each([
  [
    ['audit', 'nosuch', '--help'],
    "'audit nosuch': the commands of 'mailbox audit' are replay, message, unwoken, agent and verify",
  ],
  [['agent', 'rotate', '--help'], "'agent rotate': the commands of 'mailbox agent' are add, list, retire and token"],
  [['heartbaet', '-h'], "'heartbaet': the commands of 'mailbox' are serve, agent, send, inbox, read, unarchive, "],
  [['audit', 'verfy', '--json', '--help'], "'audit verfy': the commands of 'mailbox audit' are replay, message, "],
])('mailbox %j: one line naming the unknown command and the valid ones, exit code 2', async (args, named) => {
  const run = await runCli(args, { MAILBOX_DATA_DIR: dataDir });
  expect(run.stderr.trimEnd().split('\n')).toEqual([expect.stringContaining(`error: unknown command ${named}`)]);
  expect(run.stdout).toBe('');
  expect(run.code).toBe(2);
  expect(fs.existsSync(dataDir)).toBe(false);
});

// A command's own --help, its arguments and options before it included, still prints its help.
test.concurrent.each([
  [['audit', 'verify', '--help']],
  [['agent', 'add', '@a', '--help']],
  [['audit', 'replay', '--type', 'MessageSent', '-h']],
])("mailbox %j prints that command's help, exit code 0", async (args) => {
  const run = await runCli(args, { MAILBOX_DATA_DIR: dataDir });
  expect(run.stdout).toMatch(new RegExp(`^Usage: mailbox ${args.slice(0, 2).join(' ')} \\[options\\]`));
  expect(run.stderr).toBe('');
  expect(run.code).toBe(0);
});

// The version as other tools ask for it: `mailbox -v` and `mailbox version` were an unknown option or command and no
// more (`mailbox -v serve` was told to write `mailbox serve -v`). The error now says the words that work; nothing runs.
test.concurrent.each([[['-v']], [['version']], [['-v', 'serve']]])(
  'mailbox %j: the error says the version is mailbox --version, exit code 2, nothing run',
  async (args) => {
    const run = await runCli(args, { MAILBOX_DATA_DIR: dataDir, MAILBOX_PORT: '0' });
    expect(run.stderr.trimEnd().split('\n')).toEqual([
      args[0] === '-v' ? "error: unknown option '-v'" : "error: unknown command 'version'",
      '(the version: mailbox --version, or mailbox -V)',
      '(run with --help for usage)',
    ]);
    expect(run.stdout).toBe('');
    expect(run.code).toBe(2);
    expect(fs.existsSync(dataDir)).toBe(false);
  },
);

test.concurrent.each([['--version'], ['-V']])('mailbox %s prints the version, exit code 0', async (flag) => {
  const run = await runCli([flag], {});
  expect(run.stdout).toBe(`${packageVersion()}\n`);
  expect(run.code).toBe(0);
});
