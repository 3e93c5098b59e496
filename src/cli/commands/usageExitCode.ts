/**
 * Commander ends a usage error (an unknown option or subcommand, a missing or extra argument, a value not among the
 * choices, an option given twice) with exit code 1. The operator's commands give 1 a meaning of their own, which a
 * script acts on: `audit` drift or not found, `heartbeat --once` a stalled pipeline, `projections` and `backup` no
 * event log. For them a usage error exits with `exitCode` (2: usage or configuration, as their help says), so that
 * `mailbox audit verify --jsn` in CI is not read as drift, nor a typo in a cron job's `heartbeat --once` as a stall.
 */
import type { Command } from 'commander';

export function usageErrorsExitWith(command: Command, exitCode: number, { subcommands = true } = {}): Command {
  const error = command.error.bind(command);
  command.error = (message, options) => error(message, { ...options, exitCode });
  // A command group named without a subcommand (`mailbox audit`) prints its help as an error; commander takes
  // process.exitCode for it when one is set, else 1.
  const help = command.help.bind(command);
  command.help = ((context?: { error: boolean }) => {
    if (context?.error === true && !process.exitCode) process.exitCode = exitCode;
    return help(context);
  }) as Command['help'];
  if (subcommands) for (const subcommand of command.commands) usageErrorsExitWith(subcommand, exitCode);
  return command;
}
