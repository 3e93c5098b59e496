/** The `mailbox` command. Each group of subcommands lives in its own module under ./commands. */
import { Command } from 'commander';
import { packageVersion } from '../packageVersion';
import { registerServeCommand } from './commands/serve';
import { registerAgentCommands } from './commands/agent';
import { registerMessageCommands } from './commands/messages';
import { registerDeliveryCommand } from './commands/delivery';
import { registerTaskCommands } from './commands/tasks';
import { registerWatchCommand } from './commands/watch';
import { registerMcpCommand } from './commands/mcp';
import { registerHeartbeatCommands } from './commands/heartbeat';
import { registerAuditCommands } from './commands/audit';
import { registerBackupCommand } from './commands/backup';
import { registerProjectionsCommands } from './commands/projections';
import { refuseRepeatedOptions } from './commands/repeatedOptions';
import { usageErrorsExitWith } from './commands/usageExitCode';
import { tuneCollector } from '../support/collectorTuning';

export function buildProgram(): Command {
  const program = new Command('mailbox')
    .description('agent-mailbox: an event-sourced mailbox for AI agent swarms')
    .showHelpAfterError('(run with --help for usage)')
    .version(packageVersion())
    .addHelpText(
      'after',
      '\nClient commands talk to a server: --url (MAILBOX_URL, default http://127.0.0.1:7420) and ' +
        "--token (MAILBOX_TOKEN).\n\nQuick start (admin commands read ./data/admin.token on the server's machine):\n" +
        '  mailbox serve                                  # in one terminal\n' +
        "  mailbox agent add @a                           # prints @a's token, once\n" +
        '  mailbox agent add @b\n' +
        "  export MAILBOX_TOKEN=<the token of @a>         # client commands act as the token's agent\n" +
        '  mailbox send @b "hi" "hello"\n' +
        '  MAILBOX_TOKEN=<the token of @b> mailbox inbox',
    );
  registerServeCommand(program);
  registerAgentCommands(program);
  registerMessageCommands(program);
  registerDeliveryCommand(program);
  registerTaskCommands(program);
  registerWatchCommand(program);
  registerMcpCommand(program);
  registerHeartbeatCommands(program);
  registerAuditCommands(program);
  registerProjectionsCommands(program);
  registerBackupCommand(program);
  // The operator's commands give exit code 1 a meaning (drift, a stalled pipeline, no event log): a usage error is 2.
  for (const command of program.commands) if (OPERATOR_COMMANDS.includes(command.name())) usageErrorsExitWith(command, 2);
  return refuseRepeatedOptions(program); // last: it walks every option registered above
}

/** Commands whose exit code 1 means something else than a usage error (their help lists their exit codes). */
const OPERATOR_COMMANDS = ['serve', 'heartbeat', 'audit', 'projections', 'backup'];

export async function main(argv: string[]): Promise<void> {
  tuneCollector(); // this process's V8 settings, before any work (support/collectorTuning.ts says why)
  await buildProgram().parseAsync(argv);
}
