/**
 * An option written before the command (`mailbox --port 8080 serve`, `mailbox --json inbox`) is unknown to `mailbox`
 * itself, which takes only --help and --version: commander said "unknown option '--port'" and no more, while `serve`
 * takes --port. The error now shows the same words in the order that works: `mailbox serve --port 8080`.
 */
import type { Command } from 'commander';

/** Quoted for a POSIX shell when it needs to be (a space, a `*`, a quote...). */
const shellWord = (word: string): string => (/^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`);

/**
 * The command line `argv` (process.argv) with the words before its command moved after it, or null when no command
 * follows them (a typo, only options): the hint for an unknown option of the program.
 */
export function commandFirst(program: Command, argv: readonly string[]): string | null {
  const words = argv.slice(2);
  const names = new Set(program.commands.map((command) => command.name()));
  const at = words.findIndex((word) => names.has(word));
  if (at <= 0 || !words[0].startsWith('-')) return null;
  return ['mailbox', ...words.slice(at), ...words.slice(0, at)].map(shellWord).join(' ');
}

/**
 * The version asked for as other tools spell it: `mailbox -v` (node, npm) and `mailbox version` (go, docker) were an
 * unknown option or command and no more, and `mailbox -v serve` was told to write `mailbox serve -v`, which serve
 * refuses too. The error says the words mailbox takes. Not taken for them: -v may mean --verbose to the one who typed
 * it, and a version printed with exit code 0 would read as a command that ran.
 */
const VERSION_WORDS = ["error: unknown option '-v'", "error: unknown command 'version'"];
const VERSION_HINT = '(the version: mailbox --version, or mailbox -V)';

/**
 * Makes the program's "unknown option" error name the command line that works, when a command follows the option,
 * and the unknown words for the version say the ones that work.
 */
export function hintOptionsBeforeCommand(program: Command, argv: readonly string[]): Command {
  const error = program.error.bind(program);
  program.error = (message, options) => {
    if (VERSION_WORDS.some((words) => message.split('\n')[0] === words)) return error(`${message}\n${VERSION_HINT}`, options);
    const fixed = options?.code === 'commander.unknownOption' ? commandFirst(program, argv) : null;
    return error(fixed === null ? message : `${message}\n(options go after the command: ${fixed})`, options);
  };
  return program;
}
