/**
 * Child process for the SQLite views crash test: opens a mailbox on the log in
 * argv[2] (its views file beside it), which projects the whole log, and stays
 * up until the parent SIGKILLs it, usually in the middle of that projection.
 */
import { createMailbox } from '../../src/mailbox';
import { silentLogger } from './fixtures';

async function main(): Promise<void> {
  const dir = process.argv[2];
  process.stdout.write('opening\n');
  await createMailbox(
    { eventStoreUrl: `sqlite:${dir}/events.sqlite`, adminToken: 'crash-test-admin-token-0123456789', logLevel: 'silent' },
    { logger: silentLogger },
  );
  process.stdout.write('caught up\n');
  setInterval(() => undefined, 1_000); // only SIGKILL ends it
}

main().catch((error) => {
  process.stdout.write(`error ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
