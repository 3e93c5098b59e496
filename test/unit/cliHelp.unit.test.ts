/** Help text a new user pastes from: the quick start includes the token step, examples are shell-safe, no dead options. */
import fs from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { TOOLS } from '../../src/adapters/mcp/tools';
import { buildProgram, COMMAND_MODULES } from '../../src/cli/main';
import { sendMessageSchema } from '../../src/commands/schemas';
import { taskEnvelopeSchema } from '../../src/commands/messageFields';
import { TASK_FLAG_EXAMPLE } from '../../src/cli/commands/taskFlagHelp';
import { HEARTBEAT_ENV } from '../../src/heartbeat/heartbeatSettings';

const ROOT = path.resolve(__dirname, '../..');

function helpOf(...path: string[]): string {
  let command: Command = buildProgram();
  for (const name of path) command = command.commands.find((c) => c.name() === name)!;
  let text = '';
  command.configureOutput({ writeOut: (s) => (text += s) });
  command.outputHelp();
  return text;
}

test('mailbox --help: the quick start registers agents and sets MAILBOX_TOKEN before sending', () => {
  const help = helpOf();
  const steps = ['mailbox serve', 'mailbox agent add @a', 'export MAILBOX_TOKEN=', 'mailbox send @b'].map((step) =>
    help.indexOf(step),
  );
  expect(steps.every((index) => index >= 0)).toBe(true);
  expect(steps).toEqual([...steps].sort((a, b) => a - b));
});

test("send --help quotes 'AGENT:*' (an unquoted * is a shell glob)", () => {
  const help = helpOf('send');
  expect(help).toContain("mailbox send 'AGENT:*'");
  expect(help).not.toMatch(/send AGENT:\*/);
});

// inbox's --limit said "page size (1-200)": how many a page holds without it was found by counting.
test("inbox --help and task list --help give --limit's default (50), as delivery's gives its own", () => {
  expect(helpOf('inbox')).toMatch(/--limit <n> +page size \(1-200, default 50\)\n/);
  expect(helpOf('task', 'list')).toMatch(/--limit <n> +page size \(1-200, default 50\)\n/);
  expect(helpOf('delivery')).toMatch(/--limit <n> +recipients per page \(1-1000, default 100\)/);
});

// send's --priority, inbox's --status and task claim's --lease said their values but not what a command without them does
// (a normal send, the inbox less what you archived, a claim with no lease): found by trying.
test('send --help, inbox --help and task claim --help say the default of --priority, --status and --lease', () => {
  const flat = (text: string): string => text.replace(/\s+/g, ' ');
  expect(flat(helpOf('send'))).toContain('--priority <priority> low, normal (the default) or high');
  expect(flat(helpOf('inbox'))).toContain('--status <status> unread, read, all (the default: not archived) or archived');
  expect(flat(helpOf('task', 'claim'))).toContain(
    '--lease <seconds> hold it for this many seconds unless renewed (default: no lease, yours until you finish it or move it back to Submitted)',
  );
});

// --task's help said only "A2A task envelope as JSON": which fields, and that any other is refused, were found by trial.
test('send --help lists every field --task takes, and its example is a valid envelope', () => {
  const help = helpOf('send');
  for (const field of Object.keys(taskEnvelopeSchema.shape)) expect(help).toMatch(new RegExp(`^  ${field} +\\S`, 'm'));
  expect(help).toContain(`--task '${TASK_FLAG_EXAMPLE}'`);
  expect(taskEnvelopeSchema.safeParse(JSON.parse(TASK_FLAG_EXAMPLE)).success).toBe(true);
});

test('mcp --help offers no --json (stdout is the protocol); audit verify --help lists no --url', () => {
  const mcp = helpOf('mcp');
  expect(mcp).toContain('--token');
  expect(mcp).not.toContain('--json');
  const verify = helpOf('audit', 'verify');
  expect(verify).toContain('--json');
  expect(verify).not.toContain('--url');
});

// verify's own help said only "exit 1 on drift": its 3 (unsettled under load) and 2 were in `mailbox audit --help` alone.
test('audit verify --help says what it compares and every exit code', () => {
  const verify = helpOf('audit', 'verify').replace(/\s+/g, ' ');
  expect(verify).toContain('events rebuilt, A agents, L listing entries, D delivery ledgers and H task history lines compared');
  for (const code of ['0 the views match the log', '1 drift', '2 usage', '3 could not settle']) expect(verify).toContain(code);
});

test('agent token --help says what it does', () => {
  expect(helpOf('agent', 'token')).toMatch(/new token[\s\S]*old\s+token stops working/);
});

test('projections status --help names every field it prints, leftoverGenerations with what drops them', () => {
  const help = helpOf('projections', 'status');
  const fields = ['file', 'namespace', 'viewsBuilt', 'activeGeneration', 'checkpoint', 'logHead', 'upToDate'];
  for (const field of [...fields, 'viewsLogIdentity', 'logIdentity', 'viewsOfThisLog', 'liveWriter', 'note'])
    expect(help).toMatch(new RegExp(`\\b${field}\\b`));
  expect(help).toMatch(/leftoverGenerations[^;]*killed[^;]*dropped by the next\s+`mailbox projections rebuild`/);
});

// MAILBOX_HEARTBEAT_WEBHOOK_ATTEMPTS and _WEBHOOK_TIMEOUT were read but documented nowhere (neither --help nor
// docs/operators.md); MAILBOX_HEARTBEAT_HOOK_TIMEOUT and MAILBOX_WAKE_SLA_MS were not in --help either.
test('heartbeat --help and docs/operators.md name every variable the heartbeat reads', () => {
  const help = helpOf('heartbeat').replace(/\s+/g, ' ');
  const operators = fs.readFileSync(path.join(ROOT, 'docs/operators.md'), 'utf8');
  const variables = [...Object.values(HEARTBEAT_ENV), 'MAILBOX_HEARTBEAT_AGENTS_FILE'];
  expect(variables).toEqual(expect.arrayContaining(['MAILBOX_HEARTBEAT_WEBHOOK_ATTEMPTS', 'MAILBOX_HEARTBEAT_WEBHOOK_TIMEOUT']));
  expect(variables.filter((variable) => !help.includes(variable))).toEqual([]);
  expect(variables.filter((variable) => !operators.includes(`\`${variable}\``))).toEqual([]);
  expect(help).toContain('MAILBOX_HEARTBEAT_WEBHOOK_ATTEMPTS (tries per webhook nudge, 1-20, default 5)');
  expect(help).toContain("MAILBOX_HEARTBEAT_WEBHOOK_TIMEOUT (each try's deadline, a duration, default 5s)");
});

test('README: MAILBOX_REQUEST_TIMEOUT_MS=0 turns the request deadline off, as the server does', () => {
  const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const row = readme.split('\n').find((line) => line.startsWith('| `MAILBOX_REQUEST_TIMEOUT_MS` |'));
  expect(row).toContain('`0` turns it off');
});

// docs/mcp.md's add_message row omitted expectsReplyBy, which the tool takes.
test("docs/mcp.md's add_message row names every argument the tool takes", () => {
  const mcp = fs.readFileSync(path.join(ROOT, 'docs/mcp.md'), 'utf8');
  const row = mcp.split('\n').find((line) => line.startsWith('| `add_message` |'))!;
  expect(TOOLS.find((tool) => tool.name === 'add_message')!.schema).toBe(sendMessageSchema);
  const taken = Object.keys(sendMessageSchema.shape);
  expect(taken).toContain('expectsReplyBy');
  expect(taken.filter((name) => !row.includes(`\`${name}\``))).toEqual([]);
});

// A command loads its own module only (src/cli/main.ts: `mailbox send` loaded the server, the audit tools, the MCP SDK
// and ioredis before it read its arguments). Each command is the one the whole program has: same help, subcommands
// and options, and no module is left out of --help.
test('each command, built alone for its argv, is the command of the whole program', () => {
  const helpText = (command: Command): string => {
    let text = '';
    command.configureOutput({ writeOut: (s) => (text += s) });
    command.outputHelp();
    return text + command.commands.map(helpText).join('');
  };
  const whole = buildProgram();
  const names = whole.commands.map((command) => command.name());
  expect(COMMAND_MODULES.flatMap((module) => module.names)).toEqual(names); // every command, in --help's order
  for (const name of names) {
    const alone = buildProgram(['node', 'mailbox', name, '--help']);
    const module = COMMAND_MODULES.find((candidate) => candidate.names.includes(name))!;
    expect(alone.commands.map((command) => command.name())).toEqual(module.names);
    expect(helpText(alone.commands.find((command) => command.name() === name)!)).toBe(
      helpText(whole.commands.find((command) => command.name() === name)!),
    );
  }
  for (const argv of [[], ['--help'], ['--version'], ['help', 'send'], ['sned', '@b']])
    expect(buildProgram(['node', 'mailbox', ...argv]).commands.map((command) => command.name())).toEqual(names);
});

// Only send, agent add, agent token, task move and mcp showed an example: serve, heartbeat, audit, projections, backup,
// inbox, watch... listed their options and stopped there.
test('every command and command group ends its --help with an example of itself', () => {
  const paths = (command: Command, path: string[] = []): string[][] =>
    command.commands.flatMap((sub) => [[...path, sub.name()], ...paths(sub, [...path, sub.name()])]);
  const all = paths(buildProgram()).filter((path) => path[path.length - 1] !== 'help');
  expect(all.length).toBeGreaterThan(25);
  const without = all.filter((path) => {
    const help = helpOf(...path);
    const example = /\nExamples?( client configuration)?:?\s*\n?([\s\S]*)$/.exec(help)?.[2] ?? '';
    return !example.includes(path[0] === 'mcp' ? '"mcp"' : `mailbox ${path.join(' ')}`);
  });
  expect(without.map((path) => path.join(' '))).toEqual([]);
});

// The operator's commands each said their exit codes in --help; the client commands' (0, or 1 for any refusal, usage
// errors included) were said only in the README, and `mailbox --help` named no exit code at all.
test('mailbox --help says the client commands exit codes, and where the operator commands say theirs', () => {
  const help = helpOf().replace(/\s+/g, ' ');
  expect(help).toContain('Their exit codes: 0 done, 1 refused or failed');
  expect(help).toContain('usage errors included');
  expect(help).toContain('(serve, heartbeat, audit, projections, backup) list theirs in their --help (a usage error is 2)');
  for (const operator of ['serve', 'heartbeat', 'audit', 'projections', 'backup'])
    expect(helpOf(operator)).toMatch(/[Ee]xit code/);
});

// Only `agent add --help` said where the admin token comes from, and as ./data/admin.token: retire and token said
// nothing, and MAILBOX_DATA_DIR (which moves the file, and which the CLI reads) went unsaid.
test.each(['add', 'retire', 'token'])(
  'agent %s --help says where the admin token comes from, MAILBOX_DATA_DIR included',
  (name) => {
    const help = helpOf('agent', name);
    for (const source of [
      '--token',
      'MAILBOX_TOKEN',
      'MAILBOX_ADMIN_TOKEN',
      'MAILBOX_ADMIN_TOKEN_FILE',
      '$MAILBOX_DATA_DIR/admin.token',
    ])
      expect(help).toContain(source);
    expect(help).toContain('./data/admin.token by default');
  },
);

// mailbox --help listed `send [options] [recipientsSubjectBody...]`, the name of the one variadic argument its action
// splits, while send --help says `<to...> <subject> [body]`: the list now shows a usage written by hand.
test('mailbox --help lists send with its usage as send --help says it, and the other commands as before', () => {
  const help = helpOf();
  expect(help).toContain('  send [options] <to...> <subject> [body]  ');
  expect(help).not.toContain('recipientsSubjectBody');
  expect(help).toMatch(/\n {2}archive \[options\] <messageId\.\.\.> +archive messages/);
  expect(help).toMatch(/\n {2}agent +register, list and retire agents, and issue one a new token/);
});

// Only `audit verify` and the groups' --help said the exit codes: `audit message --help` did not say that a message the
// log does not hold exits 1, nor `projections rebuild --help` that views of another log exit 2.
test.each([
  [['audit', 'replay'], '1 no event log or --from past its head'],
  [['audit', 'message'], '1 the log holds no such message (or there is no event log), or its story shows an anomaly'],
  [['audit', 'unwoken'], '1 some (listed), or no event log'],
  [['audit', 'agent'], '1 the log holds nothing about that identity'],
  [['projections', 'rebuild'], '1 no event log, 2 usage or configuration error, views of another log'],
  [['projections', 'status'], '1 no event log, 2 usage or configuration error, views of another log'],
])('mailbox %j --help says its exit codes', (words, one) => {
  const help = helpOf(...words).replace(/\s+/g, ' ');
  expect(help).toMatch(/Exit codes: 0 [^,]+, 1 /);
  expect(help).toContain(one);
  expect(help).toMatch(/, 2 usage/);
});

// A rebuild that gave up (the views unreachable for a minute in a row) or lost its views exits 2 naming the remedy;
// its --help named neither, so an operator reading it took exit 2 for a broken command.
test('mailbox projections rebuild --help says a rebuild that gave up or lost its views exits 2, to be run again', () => {
  expect(helpOf('projections', 'rebuild').replace(/\s+/g, ' ')).toContain(
    'the views lost or unreachable for a minute in a row while it rebuilt (nothing switched; its line says so: run it again once they answer)',
  );
});

// `audit message --json` was described as "one JSON document per line", as a stream's is: it prints one document.
test.each([
  [['audit', 'message'], '--json the story as one JSON document'],
  [['audit', 'replay'], '--json one JSON document per line'],
  [['audit', 'agent'], '--json one JSON document per line'],
])('mailbox %j --help says what --json prints', (words, line) => {
  expect(helpOf(...words).replace(/\s+/g, ' ')).toContain(line);
});

// `projections rebuild --help` showed its defaults as text, (default: "5000"), where every other number in the help
// reads as one: every command's --help shows a number unquoted.
test("no command's --help shows a number quoted as its default; rebuild's read (default: 5000) and (default: 2000)", () => {
  const quoted: string[] = [];
  const walk = (command: Command, words: string[]): void => {
    for (const sub of command.commands) {
      const help = helpOf(...words, sub.name());
      for (const line of help.split('\n'))
        if (/default: "\d/.test(line)) quoted.push(`${[...words, sub.name()].join(' ')}: ${line}`);
      walk(sub, [...words, sub.name()]);
    }
  };
  walk(buildProgram(), []);
  expect(quoted).toEqual([]);
  const rebuild = helpOf('projections', 'rebuild').replace(/\s+/g, ' ');
  expect(rebuild).toContain('(readers cache the active one ~1 s) (default: 5000)');
  expect(rebuild).toContain('switching without it (default: 2000)');
});
