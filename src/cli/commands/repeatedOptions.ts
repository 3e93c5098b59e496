/**
 * An option that takes one value, given twice with different values, is refused: commander keeps the last and
 * drops the other without a word, so `mailbox send @b s b --priority high --priority low` sent a low-priority
 * message. The error names the option and both values (exit code 1, as commander's own usage errors). The same
 * value twice is that value. Options meant to be repeated (`--tag`, `--type`) parse with a `collecting` parser,
 * which appends; flags without a value are left alone.
 */
import type { EventEmitter } from 'node:events';
import type { Command, Option } from 'commander';

const COLLECTS = Symbol('collects');

type Collector<T> = ((value: string, previous: T) => T) & { [COLLECTS]?: true };

/** Marks an option parser as one that gathers every occurrence (`--tag a --tag b`), so repeating it is its use. */
export function collecting<T>(parse: (value: string, previous: T) => T): Collector<T> {
  return Object.assign(parse, { [COLLECTS]: true as const });
}

/** Each occurrence appended: `--tag a --tag b` is `['a', 'b']`. */
export const collect = collecting((value: string, previous: string[] = []) => [...previous, value]);

/** True for an option that holds one value, which a second occurrence would overwrite. */
const holdsOneValue = (option: Option): boolean =>
  (option.required || option.optional) &&
  !option.variadic &&
  (option.parseArg as Collector<unknown> | undefined)?.[COLLECTS] !== true;

export function repeatedOptionMessage(option: Option, first: unknown, second: unknown): string {
  return (
    `error: option '${option.flags}' was given twice ('${String(first)}', then '${String(second)}'); ` +
    'it takes one value: give it once.'
  );
}

/** Makes every single-valued option of `command` and of its subcommands refuse a second, different value. */
export function refuseRepeatedOptions(command: Command): Command {
  for (const option of command.options) {
    if (!holdsOneValue(option)) continue;
    const key = option.attributeName();
    // Before commander's own listener, which stores the value: here the stored one is still the earlier occurrence's.
    // (A Command is an EventEmitter; commander's typings declare only its `on`.)
    (command as unknown as EventEmitter).prependListener(`option:${option.name()}`, (value: unknown) => {
      const earlier: unknown = command.getOptionValue(key);
      if (command.getOptionValueSource(key) === 'cli' && earlier !== value) {
        command.error(repeatedOptionMessage(option, earlier, value), { code: 'mailbox.repeatedOption' });
      }
    });
  }
  for (const subcommand of command.commands) refuseRepeatedOptions(subcommand);
  return command;
}
