/** Test fixtures: a mailbox on chosen adapters with a silent logger, and agents registered by the admin. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { createMailbox, type Mailbox, type MailboxClient } from '../../src/mailbox';
import type { MailboxConfigInput } from '../../src/config';
import { ADMIN_ACTOR } from '../../src/commands/roles';

export const ADMIN_TOKEN = 'test-admin-token-0123456789';
export const silentLogger = pino({ level: 'silent' });

export function tempDir(prefix = 'mailbox-test-'): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

export async function memoryMailbox(config: MailboxConfigInput = {}): Promise<Mailbox> {
  return createMailbox({ eventStoreUrl: 'memory:', adminToken: ADMIN_TOKEN, logLevel: 'silent', ...config }, { logger: silentLogger });
}

export async function registerAgents(mailbox: Mailbox, identities: string[]): Promise<Record<string, MailboxClient & { token: string }>> {
  const admin = mailbox.asActor(ADMIN_ACTOR);
  const clients: Record<string, MailboxClient & { token: string }> = {};
  for (const identity of identities) {
    const { token } = await admin.registerAgent({ identity });
    clients[identity] = { ...(await mailbox.as(token)), token };
  }
  return clients;
}

/** Every event in the log, for "zero events written" assertions. */
export async function allEvents(mailbox: Mailbox) {
  return mailbox.eventStore.readAll(null, 1_000_000);
}
