/** `mailbox serve`: runs the mailbox with the configuration from the environment. */
import type { Command } from 'commander';
import { configFromEnv } from '../../config';
import { createMailbox } from '../../mailbox';

export function registerServeCommand(program: Command): void {
  program.command('serve')
    .description('run the mailbox (configured by MAILBOX_* environment variables; see README)')
    .action(async () => {
      const config = configFromEnv();
      const mailbox = await createMailbox(config);
      const head = await mailbox.eventStore.headPosition();
      console.log(`mailbox core running (log head ${head ?? 'empty'}); press Ctrl-C to stop`);
      const stop = async () => {
        await mailbox.close();
        process.exit(0);
      };
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
    });
}
