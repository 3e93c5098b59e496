/**
 * Child process for the claim-storm crash test (issue 12): a SQLite log with
 * Redis views (argv: dir, redis URL, namespace). Registers @a and 20 workers,
 * then sends broadcast tasks one after another and has every worker claim each
 * at once, printing one line per task; it keeps storming until SIGKILLed.
 */
import { createMailbox } from '../../src/mailbox';
import { ADMIN_ACTOR } from '../../src/commands/roles';
import { silentLogger } from './fixtures';

const emit = (line: Record<string, unknown>) => process.stdout.write(`${JSON.stringify(line)}\n`);

async function main(): Promise<void> {
  const [dir, redisUrl, namespace] = process.argv.slice(2);
  const mailbox = await createMailbox(
    {
      eventStoreUrl: `sqlite:${dir}/events.sqlite`,
      redisUrl,
      redisNamespace: namespace,
      adminToken: 'storm-test-admin-token-0123456789',
      logLevel: 'silent',
      taskSweepMs: 0,
    },
    { logger: silentLogger },
  );
  const admin = mailbox.asActor(ADMIN_ACTOR);
  const workers = Array.from({ length: 20 }, (_, i) => `@w${i}`);
  for (const identity of ['@a', ...workers]) await admin.registerAgent({ identity });
  const a = mailbox.asActor({ identity: '@a', role: 'agent' });
  const clients = workers.map((identity) => mailbox.asActor({ identity, role: 'agent' }));
  for (let n = 0; ; n++) {
    const { messageId } = await a.send({ to: 'AGENT:*', subject: `storm ${n}`, body: 'x', task: {} });
    const outcomes = await Promise.allSettled(clients.map((client) => client.claimTask(messageId, { leaseSeconds: 3600 })));
    emit({ kind: 'storm', taskId: messageId, won: outcomes.filter((o) => o.status === 'fulfilled').length });
  }
}

main().catch((error) => {
  emit({ kind: 'error', message: error instanceof Error ? error.stack : String(error) });
  process.exit(1);
});
