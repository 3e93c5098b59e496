/**
 * An option that takes one of a few values (`inbox --status`, `agent add --role`, `task list --view`, `heartbeat
 * --projector`) given another was refused in commander's words, "error: option '--status <status>' argument 'unreed'
 * is invalid. Allowed choices are unread, read, all, archived." and a second line sending the reader to --help: no word
 * of the value meant, where every other refusal of a value names it ('--lease ... not '10m': did you mean 600?').
 * Such a value is now refused in one line naming the command, the option, the values it takes and the one most likely
 * meant (another case, a near miss, the start of one, or a word used for one), never taken in its place; the exit code
 * is the command's usage-error code (1 for client commands, 2 for the operator's: usageExitCode.ts), nothing is run.
 */
import type { Command, Option } from 'commander';
import { editDistance } from '../../commands/suggestions';
import { synonymOf } from '../../commands/teachingMessages';

/** Words for the values of the CLI's own options (beyond those of the mailbox's fields, teachingMessages' synonyms). */
const WORDS: Readonly<Record<string, string>> = {
  yes: 'on',
  true: 'on',
  enabled: 'on',
  enable: 'on',
  always: 'on',
  no: 'off',
  false: 'off',
  disabled: 'off',
  disable: 'off',
  never: 'off',
  default: 'auto',
  reader: 'auditor',
  readonly: 'auditor',
  'read-only': 'auditor',
};

/** The value among `choices` that `value` most likely means, or undefined; never taken, only said. */
export function choiceMeant(value: string, choices: readonly string[]): string | undefined {
  const lower = value.trim().toLowerCase();
  if (lower === '') return undefined;
  const sameWord = choices.find((choice) => choice.toLowerCase() === lower);
  if (sameWord !== undefined) return sameWord;
  const word = [WORDS[lower], synonymOf(lower)].find((meant) => meant !== undefined && choices.includes(meant));
  if (word !== undefined) return word;
  const budget = Math.max(1, Math.min(2, Math.floor(lower.length / 3)));
  const near = choices
    .map((choice) => ({ choice, distance: editDistance(lower, choice.toLowerCase()) }))
    .filter(({ distance }) => distance <= budget)
    .sort((a, b) => a.distance - b.distance);
  if (near.length > 0 && (near.length === 1 || near[0].distance < near[1].distance)) return near[0].choice;
  const starts = lower.length >= 2 ? choices.filter((choice) => choice.toLowerCase().startsWith(lower)) : [];
  return starts.length === 1 ? starts[0] : undefined;
}

/** The values, as a sentence lists them: "unread, read, all or archived". */
const listed = (choices: readonly string[]): string =>
  choices.length === 1 ? choices[0] : `${choices.slice(0, -1).join(', ')} or ${choices[choices.length - 1]}`;

/** The value as typed, cut when long (a body given to the wrong option). */
const typed = (value: string): string => `'${value.length > 40 ? `${value.slice(0, 40)}...` : value}'`;

/** The words after `mailbox` that name `command`: `inbox`, `task list`. */
function commandPath(command: Command): string {
  const names: string[] = [];
  for (let at: Command | null = command; at?.parent; at = at.parent) names.unshift(at.name());
  return ['mailbox', ...names].join(' ');
}

/** The one line refusing `value` for `option` of `command`. */
export function choiceRefusal(command: Command, option: Option, value: string, choices: readonly string[]): string {
  const meant = choiceMeant(value, choices);
  const flag = option.long ?? option.short ?? option.name();
  return (
    `error: ${commandPath(command)}: '${flag}' takes ${listed(choices)}, not ${typed(value)}` +
    (meant === undefined ? '' : `: did you mean ${flag} ${meant}?`)
  );
}

/** Makes every option with choices, of `program`'s commands and their subcommands, refuse a value as choiceRefusal says. */
export function teachChoices(program: Command): Command {
  const walk = (command: Command) => {
    for (const option of command.options) {
      const choices = option.argChoices;
      if (choices === undefined || option.variadic) continue;
      option.argParser((value: string) => {
        if (choices.includes(value)) return value;
        // One line: the values are in it, so no second line sending the reader to --help.
        command.showHelpAfterError(false);
        return command.error(choiceRefusal(command, option, value, choices), { code: 'commander.invalidArgument' });
      });
    }
    for (const subcommand of command.commands) walk(subcommand);
  };
  walk(program);
  return program;
}
