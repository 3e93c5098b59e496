/**
 * `mailbox heartbeat` refusing its settings at start: a flag or variable named as the user typed it, its valid form,
 * one line on stderr, exit 2 (split from heartbeatOnce.e2e: words the same JavaScript makes on any Node, so CI runs
 * this file on Node 20 only, as heartbeatStartRefusals.e2e; the runs themselves stay in heartbeatOnce.e2e).
 */
import fs from 'node:fs';
import { ensureBuilt, runCli } from '../support/builtCli';
import { tempDir } from '../support/fixtures';

let dataDir: string;
beforeAll(() => {
  ensureBuilt();
  dataDir = tempDir('mailbox-heartbeat-refusals-');
});
afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));

// A number or duration flag is said as a command line says it: the flag, the value as typed, what it is not, what to give.
// They were "--metrics-port: must be at most 65535, not 70000, not '70000'" (the value twice, no word of a port or off).
test.each([
  [
    ['--interval', 'abc'],
    "--interval: 'abc' is not a duration: give one such as 250ms, 90s, 10m, 1h, 1d or a number of milliseconds",
  ],
  [['--interval', '5'], "--interval: '5' is too short: give a duration of at least 10ms"],
  [['--idle', '-5'], "--idle: '-5' is not a duration: give one such as 250ms, 90s, 10m, 1h, 1d or a number of milliseconds"],
  [
    ['--cooldown', 'x'],
    "--cooldown: 'x' is not a duration: give one such as 250ms, 90s, 10m, 1h, 1d or a number of milliseconds",
  ],
  [
    ['--wake-grace', '2 m'],
    "--wake-grace: '2 m' is not a duration: give one such as 250ms, 90s, 10m, 1h, 1d or a number of milliseconds, " +
      'without spaces inside it: 2m',
  ],
  [['--stall-after', '0'], "--stall-after: '0' is too short: give a duration of at least 1ms"],
  [
    ['--metrics-port', 'abc'],
    "--metrics-port: 'abc' is not a port number: give an integer 0..65535 (0 picks any free port), written in plain " +
      'decimal digits, or off',
  ],
  [
    ['--metrics-port', '70000'],
    "--metrics-port: '70000' is not a port number: give an integer 0..65535 (0 picks any free port), or off",
  ],
  [
    ['--opt-out', '@b,c'],
    '--opt-out: must be an identity: @ followed by 1-64 of A-Z a-z 0-9 _ - (e.g. @neo-gpt); "c" is not one: did you mean "@c"? ' +
      '(the @ is part of the identity)',
  ],
])(
  'mailbox heartbeat %j names the flag typed and its valid form, never the settings field: one line, exit 2',
  async (args, said) => {
    // It said "--interval / MAILBOX_HEARTBEAT_INTERVAL: heartbeat settings: 'intervalMs' must be ..." (field intervalMs).
    const run = await runCli(['heartbeat', ...args], { MAILBOX_DATA_DIR: dataDir });
    expect({ code: run.code, stdout: run.stdout, lines: run.stderr.trimEnd().split('\n').length }).toEqual({
      code: 2,
      stdout: '',
      lines: 1,
    });
    // One line, as its refusals at start (a bad MAILBOX_PORT) and serve's: it was the JSON envelope.
    expect(run.stderr).toBe(`mailbox: ${said}\n`);
    expect(run.stderr).not.toMatch(/[a-z]Ms\b|heartbeat settings|optOut/); // one line: no stack either
    // With --json, the envelope (JSON where JSON was asked for).
    const json = await runCli(['heartbeat', ...args, '--json'], { MAILBOX_DATA_DIR: dataDir });
    expect({ code: json.code, stdout: json.stdout }).toEqual({ code: 2, stdout: '' });
    expect(JSON.parse(json.stderr)).toMatchObject({ code: 'VALIDATION_FAILED', message: said, field: args[0], option: args[0] });
  },
);

test('a bad MAILBOX_HEARTBEAT_* value is named by its variable, not by a flag the user did not type', async () => {
  const run = await runCli(['heartbeat'], { MAILBOX_DATA_DIR: dataDir, MAILBOX_HEARTBEAT_INTERVAL: 'abc' });
  // MAILBOX_HEARTBEAT_METRICS_PORT=70000 said the value twice: "must be at most 65535, not 70000, not '70000'".
  const port = await runCli(['heartbeat'], { MAILBOX_DATA_DIR: dataDir, MAILBOX_HEARTBEAT_METRICS_PORT: '70000' });
  expect([port.code, port.stderr]).toEqual([2, 'mailbox: MAILBOX_HEARTBEAT_METRICS_PORT: must be at most 65535, not 70000\n']);
  // One line, as a bad MAILBOX_PORT is (that one was a line, this one the JSON envelope).
  const portOfServer = await runCli(['heartbeat'], { MAILBOX_DATA_DIR: dataDir, MAILBOX_PORT: 'abc' });
  expect([portOfServer.code, portOfServer.stderr]).toEqual([
    2,
    expect.stringMatching(/^mailbox: MAILBOX_PORT='abc' is not valid: [^\n]*\n$/),
  ]);
  expect([run.code, run.stderr]).toEqual([
    2,
    "mailbox: MAILBOX_HEARTBEAT_INTERVAL: must be a duration such as 250ms, 90s, 10m, 1h, 1d or a number of milliseconds, not 'abc'\n",
  ]);
  const json = await runCli(['heartbeat', '--json'], { MAILBOX_DATA_DIR: dataDir, MAILBOX_HEARTBEAT_INTERVAL: 'abc' });
  expect(JSON.parse(json.stderr)).toMatchObject({ code: 'VALIDATION_FAILED', field: 'MAILBOX_HEARTBEAT_INTERVAL' });
});

test('a MAILBOX_HEARTBEAT_PROJECTOR that is none of its values names the value once', async () => {
  // b20415c made an enum's refusal name the value ('not "xyz"'), and the CLI added its own: 'not "xyz", not \'xyz\''.
  const run = await runCli(['heartbeat'], { MAILBOX_DATA_DIR: dataDir, MAILBOX_HEARTBEAT_PROJECTOR: 'xyz' });
  expect([run.code, run.stderr]).toEqual([
    2,
    'mailbox: MAILBOX_HEARTBEAT_PROJECTOR: must be one of "auto", "on", "off", not "xyz"\n',
  ]);
});

/** Runs `heartbeat --once` with a malformed duration and expects its refusal: exit 2, the option named, the message's end. */
async function expectDurationRefused(args: readonly string[], env: Record<string, string>, option: string, ending: string) {
  const run = await runCli(['heartbeat', '--once', ...args], { MAILBOX_DATA_DIR: dataDir, ...env });
  expect({ code: run.code, stdout: run.stdout }).toEqual({ code: 2, stdout: '' });
  // A flag is said with its value first (`--interval: ' 90s' is not a duration: give one such as ...`), a variable as before.
  const forms = '250ms, 90s, 10m, 1h, 1d or a number of milliseconds';
  const message = option.startsWith('--')
    ? `${option}: '${args[1]}' is not a duration: give one such as ${forms}, ${ending.replace(/, not '[^]*'$/, '')}`
    : expect.stringContaining(`must be a duration such as ${forms}, ${ending}`);
  expect(run.stderr).toEqual(expect.stringMatching(/^mailbox: [^\n]*\n$/));
  expect(run.stderr.slice('mailbox: '.length, -1)).toEqual(message);
  expect(run.stderr.startsWith(`mailbox: ${option}: `)).toBe(true); // the flag or variable as typed
}

test('a duration with spaces around it is refused with the forms, as any malformed duration (it was trimmed and taken)', async () => {
  await expectDurationRefused(['--interval', ' 90s'], {}, '--interval', "without spaces around it, not ' 90s'");
  await expectDurationRefused(['--idle', '10m '], {}, '--idle', "without spaces around it, not '10m '");
  await expectDurationRefused(
    [],
    { MAILBOX_HEARTBEAT_COOLDOWN: '\t15m' },
    'MAILBOX_HEARTBEAT_COOLDOWN',
    "without spaces around it, not '\t15m'",
  );
});

test('a duration with spaces inside it is refused naming the flag or variable and showing it written whole (it was taken)', async () => {
  await expectDurationRefused(['--interval', '90 s'], {}, '--interval', "without spaces inside it: 90s, not '90 s'");
  await expectDurationRefused(['--idle', '1.5\th'], {}, '--idle', "without spaces inside it: 1.5h, not '1.5\th'");
  await expectDurationRefused(
    [],
    { MAILBOX_HEARTBEAT_WAKE_GRACE: '60 ms' },
    'MAILBOX_HEARTBEAT_WAKE_GRACE',
    "without spaces inside it: 60ms, not '60 ms'",
  );
});

test('an agents file that names an agent twice is refused at start, naming it (not the last entry silently kept)', async () => {
  const file = `${dataDir}/agents-twice.json`;
  fs.writeFileSync(file, '{"@b": {"optOut": true}, "@c": {}, "@b": {"webhook": "http://127.0.0.1:9/nudge"}}');
  const run = await runCli(['heartbeat', '--once', '--agents-file', file], { MAILBOX_DATA_DIR: dataDir });
  expect(run.code).toBe(2);
  expect(run.stdout).toBe('');
  expect(run.stderr).toContain(`--agents-file ${file} names '@b' twice; give each agent (and each of its settings) once`);
});

test.each([
  ['missing', 'agents-missing.json', 'there is no such file'],
  ['a directory', '', 'it is a directory, not a file'],
])('an agents file that is %s is refused at start in one line naming the flag and the path', async (_what, name, reason) => {
  const file = name ? `${dataDir}/${name}` : tempDir('mailbox-agents-dir-');
  const run = await runCli(['heartbeat', '--once', '--agents-file', file], { MAILBOX_DATA_DIR: dataDir });
  expect([run.code, run.stdout, run.stderr]).toEqual([
    2,
    '',
    `mailbox: --agents-file ${file} cannot be read: ${reason}; give the path of a readable JSON file, e.g. ` +
      '{"@agent": {"optOut": true, "webhook": "https://..."}}, and start again\n',
  ]);
});

test('an agents file that is not UTF-8 is refused at start, naming the byte (not read with U+FFFD in its place)', async () => {
  const file = `${dataDir}/agents-latin1.json`;
  const text = '{"@b": {"webhook": "http://127.0.0.1:9/caf\xe9"}, "@c": {"optOut": true}}';
  fs.writeFileSync(file, Buffer.from(text, 'latin1'));
  const run = await runCli(['heartbeat', '--once', '--agents-file', file], { MAILBOX_DATA_DIR: dataDir });
  expect(run.code).toBe(2);
  expect(run.stdout).toBe('');
  const message =
    `--agents-file ${file} is not UTF-8: byte 0xE9 at offset ${text.indexOf('\xe9')} is not part of a UTF-8 character; ` +
    'convert it (e.g. iconv -f latin1 -t utf-8) and start again';
  expect(run.stderr).toBe(`mailbox: ${message}\n`);
  const json = await runCli(['heartbeat', '--once', '--agents-file', file, '--json'], { MAILBOX_DATA_DIR: dataDir });
  expect([json.code, JSON.parse(json.stderr)]).toEqual([
    2,
    { error: 'Invalid configuration', code: 'VALIDATION_FAILED', message, field: '--agents-file', offset: text.indexOf('\xe9') },
  ]);
});
