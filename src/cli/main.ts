/** The `mailbox` command. Each group of subcommands lives in its own module under ./commands. */
import { Command, Help } from 'commander';
import { packageVersion } from '../packageVersion';
import type * as ServeCommand from './commands/serve';
import type * as AgentCommands from './commands/agent';
import type * as MessageCommands from './commands/messages';
import type * as DeliveryCommand from './commands/delivery';
import type * as TaskCommands from './commands/tasks';
import type * as WatchCommand from './commands/watch';
import type * as McpCommand from './commands/mcp';
import type * as HeartbeatCommands from './commands/heartbeat';
import type * as AuditCommands from './commands/audit';
import type * as BackupCommand from './commands/backup';
import type * as ProjectionsCommands from './commands/projections';
import { refuseRepeatedOptions } from './commands/repeatedOptions';
import { usageErrorsExitWith } from './commands/usageExitCode';
import { addHelpExamples } from './commands/helpExamples';
import { hintOptionsBeforeCommand } from './commands/optionBeforeCommand';
import { suggestMeantOptions } from './commands/unknownOptions';
import { teachChoices } from './commands/choiceValues';
import { tuneCollector } from '../support/collectorTuning';

/* eslint-disable @typescript-eslint/no-require-imports -- each command's module is loaded only when it is needed */
/**
 * The command modules, in the order --help lists their commands, each loaded when needed: a command loads its own
 * module only (`mailbox send` neither the server, the audit tools nor the MCP SDK), --help and unknown words all of
 * them. The names are the commands each module registers (test/unit/cliHelp checks them against the modules).
 */
export const COMMAND_MODULES: ReadonlyArray<{ names: readonly string[]; register: () => (program: Command) => void }> = [
  { names: ['serve'], register: () => (require('./commands/serve') as typeof ServeCommand).registerServeCommand },
  { names: ['agent'], register: () => (require('./commands/agent') as typeof AgentCommands).registerAgentCommands },
  {
    names: ['send', 'inbox', 'read', 'unarchive', 'archive'],
    register: () => (require('./commands/messages') as typeof MessageCommands).registerMessageCommands,
  },
  { names: ['delivery'], register: () => (require('./commands/delivery') as typeof DeliveryCommand).registerDeliveryCommand },
  { names: ['task'], register: () => (require('./commands/tasks') as typeof TaskCommands).registerTaskCommands },
  { names: ['watch'], register: () => (require('./commands/watch') as typeof WatchCommand).registerWatchCommand },
  { names: ['mcp'], register: () => (require('./commands/mcp') as typeof McpCommand).registerMcpCommand },
  {
    names: ['heartbeat'],
    register: () => (require('./commands/heartbeat') as typeof HeartbeatCommands).registerHeartbeatCommands,
  },
  { names: ['audit'], register: () => (require('./commands/audit') as typeof AuditCommands).registerAuditCommands },
  {
    names: ['projections'],
    register: () => (require('./commands/projections') as typeof ProjectionsCommands).registerProjectionsCommands,
  },
  { names: ['backup'], register: () => (require('./commands/backup') as typeof BackupCommand).registerBackupCommand },
];
/* eslint-enable @typescript-eslint/no-require-imports */

/** The module of the command `word` names (argv[2]: `mailbox <command> ...`); undefined for an option, help or a typo. */
const commandModuleOf = (word: string | undefined) => COMMAND_MODULES.find((module) => module.names.includes(word ?? ''));

/**
 * The program for `argv` (process.argv): with only the named command's module when argv names one, else with every
 * command (--help, --version, `help <command>`, a misspelt command and its suggestion). Without argv: every command.
 */
export function buildProgram(argv: readonly string[] = []): Command {
  const program = new Command('mailbox')
    .description('agent-mailbox: an event-sourced mailbox for AI agent swarms')
    .configureHelp({ subcommandTerm: listedTerm })
    .showHelpAfterError('(run with --help for usage)')
    .version(packageVersion())
    .addHelpText(
      'after',
      '\nClient commands talk to a server: --url (MAILBOX_URL, default http://127.0.0.1:7420) and ' +
        '--token (MAILBOX_TOKEN). Their exit codes: 0 done, 1 refused or failed (the reason on stderr, or the ' +
        "envelope with --json), usage errors included; the operator's commands (serve, heartbeat, audit, projections, " +
        "backup) list theirs in their --help (a usage error is 2).\n\nQuick start (admin commands read ./data/admin.token on the server's machine):\n" +
        '  mailbox serve                                  # in one terminal\n' +
        "  mailbox agent add @a                           # prints @a's token, once\n" +
        '  mailbox agent add @b\n' +
        "  export MAILBOX_TOKEN=<the token of @a>         # client commands act as the token's agent\n" +
        '  mailbox send @b "hi" "hello"\n' +
        '  MAILBOX_TOKEN=<the token of @b> mailbox inbox',
    );
  const named = commandModuleOf(argv[2]);
  for (const module of named ? [named] : COMMAND_MODULES) module.register()(program);
  addHelpExamples(program); // after every command's own help text
  // The operator's commands give exit code 1 a meaning (drift, a stalled pipeline, no event log): a usage error is 2.
  for (const command of program.commands) if (OPERATOR_COMMANDS.includes(command.name())) usageErrorsExitWith(command, 2);
  // A word that is no command (`mailbox heartbaet --once`, `mailbox audit-verify`) or an option before any command: the
  // operator's command it was meant to be gives 1 a meaning (a cron job read a typo as a stalled pipeline), so 2 too.
  // The client commands' own usage errors keep 1.
  usageErrorsExitWith(program, 2, { subcommands: false });
  hintOptionsBeforeCommand(program, argv); // `mailbox --port 8080 serve`: says `mailbox serve --port 8080`
  suggestMeantOptions(program); // `mailbox send --prio high`: says --priority, which commander's edit distance did not
  teachChoices(program); // `mailbox inbox --status unreed`: one line, the values taken and "did you mean --status unread?"
  return refuseRepeatedOptions(program); // last: it walks every option registered above
}

/**
 * A command in --help's list: as commander lists it (name, [options], its arguments' names), unless its usage was
 * written by hand because its arguments are not what it registers: send's one variadic, split by its action into
 * recipients, subject and body, was listed as `send [options] [recipientsSubjectBody...]`, its usage says
 * `<to...> <subject> [body]`.
 */
function listedTerm(command: Command): string {
  const term = new Help().subcommandTerm(command);
  const args = command.registeredArguments.map((argument) => (argument.required ? `<${argument.name()}` : `[${argument.name()}`));
  return args.every((arg) => command.usage().includes(arg)) ? term : `${command.name()} ${command.usage()}`;
}

/** Commands whose exit code 1 means something else than a usage error (their help lists their exit codes). */
const OPERATOR_COMMANDS = ['serve', 'heartbeat', 'audit', 'projections', 'backup'];

/**
 * `mailbox help audit replay` as `mailbox audit replay --help`: commander's help command reads one word, and printed
 * the help of `audit` (of `task` for `help task move`), where replay's --from or move's states are not. One word (`help
 * audit`) and an option among the words are left to commander.
 */
export function helpOfSubcommand(argv: readonly string[]): string[] {
  const words = argv.slice(3);
  if (argv[2] !== 'help' || words.length < 2 || words.some((word) => word.startsWith('-'))) return [...argv];
  return [...argv.slice(0, 2), ...words, '--help'];
}

/**
 * `mailbox help audit nosuch` printed the help of audit with exit code 0 (nosuch --help there is audit's --help), as did
 * `help agent nosuch`, and `help nosuch` printed the whole help on stderr: a script or a reader took a command that
 * does not exist for one documented there. A word that names no command of the one before it is a usage error: one
 * line naming it and the commands there are, exit code 2 as every word that is no command (buildProgram). The words
 * after a command without subcommands are its arguments (`help agent add @a`: add's help); an option among the words
 * and `help help` are left to commander, as helpOfSubcommand leaves them.
 */
export function refuseUnknownHelpTopic(program: Command, argv: readonly string[]): void {
  const words = helpTopic(argv);
  if (words === null) return;
  let command = program;
  for (const [index, word] of words.entries()) {
    const commands = command.commands.filter((subcommand) => subcommand.name() !== 'help');
    if (commands.length === 0 || word === 'help') return;
    const named = commands.find((subcommand) => subcommand.name() === word || subcommand.aliases().includes(word));
    if (named) {
      command = named;
      continue;
    }
    const names = commands.map((subcommand) => subcommand.name());
    const group = ['mailbox', ...words.slice(0, index)].join(' ');
    program.showHelpAfterError(false); // the line says the commands: no second line sending the reader to --help
    program.error(
      `error: unknown command '${words.slice(0, index + 1).join(' ')}': the commands of '${group}' are ` +
        `${names.slice(0, -1).join(', ')} and ${names[names.length - 1]} (mailbox help ${[...words.slice(0, index), '<command>'].join(' ')})`,
      { code: 'commander.unknownCommand' },
    );
  }
}

/**
 * The words naming the command whose help `argv` asks for, or null when it asks for none: after `help` (with no option
 * among them), or before the first option of a line holding --help or -h. `mailbox audit nosuch --help` printed the help
 * of audit with exit code 0, as `help audit nosuch` did, and `mailbox heartbaet --help` the whole help.
 */
function helpTopic(argv: readonly string[]): string[] | null {
  if (argv[2] === 'help') {
    const words = argv.slice(3);
    return words.some((word) => word.startsWith('-')) ? null : words;
  }
  const words = argv.slice(2);
  if (!words.some((word) => word === '--help' || word === '-h')) return null;
  return words.slice(
    0,
    words.findIndex((word) => word.startsWith('-')),
  );
}

export async function main(argv: string[]): Promise<void> {
  tuneCollector(); // this process's V8 settings, before any work (support/collectorTuning.ts says why)
  const args = helpOfSubcommand(argv);
  const program = buildProgram(args);
  refuseUnknownHelpTopic(program, argv);
  await program.parseAsync(args);
}

/* eslint-disable @typescript-eslint/no-require-imports -- the launcher is plain JavaScript, outside the sources */
/**
 * Run as a file (`node dist/src/cli/main.js --help`, as one may guess from the layout): it only defined `main` and
 * exited 0 without a word. It runs as `mailbox` does, through the launcher (bin/mailbox.js: reflect-metadata first, and
 * a start-up error as one line), which calls this module's `main`.
 */
if (require.main === module) require(require('node:path').join(__dirname, '..', '..', '..', 'bin', 'mailbox.js'));
