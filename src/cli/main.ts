/** The `mailbox` command. Each group of subcommands lives in its own module under ./commands. */
import { Command } from 'commander';
import { registerServeCommand } from './commands/serve';
import { registerHeartbeatCommands } from './commands/heartbeat';
import { registerAuditCommands } from './commands/audit';
import { registerProjectionsCommands } from './commands/projections';

export function buildProgram(): Command {
  const program = new Command('mailbox')
    .description('agent-mailbox: an event-sourced mailbox for AI agent swarms')
    .showHelpAfterError('(run with --help for usage)')
    .version(require('../../../package.json').version);
  registerServeCommand(program);
  registerHeartbeatCommands(program);
  registerAuditCommands(program);
  registerProjectionsCommands(program);
  return program;
}

export async function main(argv: string[]): Promise<void> {
  await buildProgram().parseAsync(argv);
}
