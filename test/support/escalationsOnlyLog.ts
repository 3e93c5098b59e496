/** A heartbeat test's log where only escalations are due (heartbeatOnce.e2e, heartbeatServerStopped.e2e). */
import pino from 'pino';
import { createMailbox } from '../../src/mailbox';
import { ADMIN_TOKEN, registerAgents, tempDir } from './fixtures';

/**
 * A log where only escalations are due: @a asked @b for a reply due in 1 s (now past) and wrote to @c; neither message
 * woke anyone; all three acted since (a send that wakes nobody), so no unread-set nudge is due. The mailbox is closed.
 */
export async function logWithEscalationsOnly(prefix: string): Promise<{ dir: string; toB: string; toC: string }> {
  const dir = tempDir(prefix);
  const mailbox = await createMailbox(
    { dataDir: dir, adminToken: ADMIN_TOKEN, logLevel: 'silent' },
    { logger: pino({ level: 'silent' }) },
  );
  const { '@a': a, '@b': b, '@c': c } = await registerAgents(mailbox, ['@a', '@b', '@c']);
  const { messageId: toB } = await a.send({ to: '@b', subject: 'answer me', body: 'x', expectsReplyBy: '1s' });
  const { messageId: toC } = await a.send({ to: '@c', subject: 'for c', body: 'x' });
  for (const agent of [b, c]) await agent.send({ to: '@a', subject: 'busy', body: '.', wakeSuppressed: true });
  await mailbox.close();
  await new Promise((resolve) => setTimeout(resolve, 1_100)); // past the reply's due time (the log's own clock)
  return { dir, toB, toC };
}
