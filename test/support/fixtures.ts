/** Test fixtures: a mailbox on chosen adapters with a silent logger, and agents registered by the admin. */
import { randomUUID } from 'node:crypto';
import pino from 'pino';
import { createMailbox, type Mailbox, type MailboxClient } from '../../src/mailbox';
import type { MailboxConfigInput } from '../../src/config';
import type { ContainerOverrides } from '../../src/compositionRoot';
import { ADMIN_ACTOR } from '../../src/commands/roles';
import type { NewEvent } from '../../src/events/types';

export const ADMIN_TOKEN = 'test-admin-token-0123456789abcdef';
export const silentLogger = pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });

import { tempDir } from './tempDirs';

export { tempDir, scratchBase, createdTempDirs, removeTempDirs } from './tempDirs';

export async function memoryMailbox(config: MailboxConfigInput = {}, overrides: ContainerOverrides = {}): Promise<Mailbox> {
  return createMailbox(
    { eventStoreUrl: 'memory:', adminToken: ADMIN_TOKEN, logLevel: 'silent', ...config },
    { logger: silentLogger, ...overrides },
  );
}

export async function registerAgents(
  mailbox: Mailbox,
  identities: string[],
): Promise<Record<string, MailboxClient & { token: string }>> {
  const admin = mailbox.asActor(ADMIN_ACTOR);
  const clients: Record<string, MailboxClient & { token: string }> = {};
  for (const identity of identities) {
    const { token } = await admin.registerAgent({ identity });
    clients[identity] = { ...(await mailbox.as(token)), token };
  }
  return clients;
}

/** Every event in the log, for "zero events written" assertions. */
/**
 * Every event in the log, after the seen marks noted so far are written: a listing's marks are written
 * after it returns (issue 13), and must not land between a test's before and after counts.
 */
export async function allEvents(mailbox: Mailbox) {
  // What earlier steps left to be written off the request path (seen marks, observed wakes) is written first, so a
  // count taken before a refusal and one taken after it differ only by what the refusal wrote.
  await mailbox.seenMarks.flush();
  await mailbox.wakeRecorder.flush();
  return mailbox.eventStore.readAll(null, 1_000_000);
}

/** An agent's registration as the log holds it, for a test that appends to the log directly (no command, no wait). */
export const registrationEvent = (identity: string): NewEvent =>
  ({
    eventId: randomUUID(),
    type: 'AgentRegistered',
    data: { identity, role: 'agent', tokenHash: `hash-${identity}`, registeredAt: '2025-01-01T00:00:00.000Z' },
    metadata: {
      commandId: 'c',
      correlationId: 'c',
      causationId: 'c',
      actor: '@admin',
      at: '2025-01-01T00:00:00.000Z',
      schemaVersion: 1,
    },
  }) as NewEvent;

/**
 * A data dir on the embedded default (SQLite log and views file), closed: three agents (@a, @b, @c), a message from @a
 * to @b and @c, and @b's read of it. For the CLI's commands on a small real log.
 */
export async function threeAgentsDataDir(prefix: string): Promise<string> {
  const dataDir = tempDir(prefix);
  const mailbox = await createMailbox(
    { dataDir, adminToken: ADMIN_TOKEN, logLevel: 'silent' },
    { logger: pino({ level: 'silent' }) },
  );
  const { '@a': a, '@b': b } = await registerAgents(mailbox, ['@a', '@b', '@c']);
  const sent = await a.send({ to: ['@b', '@c'], subject: 's', body: 'x' });
  await b.markRead({ messageId: sent.messageId });
  await mailbox.close();
  return dataDir;
}
