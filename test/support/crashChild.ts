/**
 * Child process for the crash-durability test: opens a SQLite mailbox in the
 * directory given as argv[2], registers three agents, sends a direct message
 * and a broadcast, prints each acknowledged result as one JSON line, then
 * keeps running until the parent SIGKILLs it (no clean shutdown, ever).
 */
import { createMailbox } from '../../src/mailbox';
import { ADMIN_ACTOR } from '../../src/commands/roles';
import { silentLogger } from './fixtures';

const emit = (line: Record<string, unknown>) => process.stdout.write(`${JSON.stringify(line)}\n`);

async function main(): Promise<void> {
  const dir = process.argv[2];
  const mailbox = await createMailbox(
    { eventStoreUrl: `sqlite:${dir}/events.sqlite`, adminToken: 'crash-test-admin-token-0123456789', logLevel: 'silent' },
    { logger: silentLogger },
  );
  const admin = mailbox.asActor(ADMIN_ACTOR);
  const tokens: Record<string, string> = {};
  for (const identity of ['@a', '@b', '@c']) tokens[identity] = (await admin.registerAgent({ identity })).token;
  const a = await mailbox.as(tokens['@a']);
  const direct = await a.send({ to: '@b', subject: 'acknowledged direct', body: 'must survive', priority: 'high' });
  emit({ kind: 'direct', result: direct, tokens });
  const broadcast = await a.send({ to: 'AGENT:*', subject: 'acknowledged broadcast', body: 'must survive too' });
  emit({ kind: 'broadcast', result: broadcast });
  // Keep the process (and the open database) alive: only SIGKILL ends it.
  setInterval(() => undefined, 1_000);
}

main().catch((error) => {
  emit({ kind: 'error', message: error instanceof Error ? error.stack : String(error) });
  process.exit(1);
});
