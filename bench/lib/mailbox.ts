/** The embedded default (SQLite log + SQLite views file written on its thread + in-process wake bus) as benchmarks open it. */
import pino from 'pino';
import { createMailbox, type Mailbox, type MailboxClient } from '../../src/mailbox';
import type { MailboxConfigInput } from '../../src/config';
import { ADMIN_ACTOR } from '../../src/commands/roles';

export const BENCH_ADMIN_TOKEN = 'bench-admin-token-0123456789abcdef';

/** BENCH_VIEWS=memory|sqlite: every bench's embedded mailbox keeps its views there (A/B runs; a bench's own choice wins). */
const chosenViews = process.env.BENCH_VIEWS;
const benchViews: { views?: 'memory' | 'sqlite' } =
  chosenViews === 'memory' || chosenViews === 'sqlite' ? { views: chosenViews } : {};

/** createMailbox on a SQLite file in `dataDir`, logging silenced. */
export function openEmbeddedMailbox(dataDir: string, config: MailboxConfigInput = {}): Promise<Mailbox> {
  return createMailbox(
    { dataDir, adminToken: BENCH_ADMIN_TOKEN, logLevel: 'silent', ...benchViews, ...config },
    { logger: pino({ level: 'silent' }) },
  );
}

/** `@agent-00042` style identities, zero-padded so that they sort like numbers. */
export const agentIdentity = (index: number): string => `@agent-${String(index).padStart(5, '0')}`;

/**
 * Registers agents through the admin command (each one durable, as in production)
 * and returns clients acting as them. Authentication is measured by the HTTP benches.
 */
export async function registerAgents(mailbox: Mailbox, identities: readonly string[]): Promise<MailboxClient[]> {
  const admin = mailbox.asActor(ADMIN_ACTOR);
  const clients: MailboxClient[] = [];
  for (const identity of identities) {
    await admin.registerAgent({ identity });
    clients.push(mailbox.asActor({ identity, role: 'agent' }));
  }
  return clients;
}

/** Clients for agents that already exist in the store (e.g. from a synthetic log). */
export const clientsFor = (mailbox: Mailbox, identities: readonly string[]): MailboxClient[] =>
  identities.map((identity) => mailbox.asActor({ identity, role: 'agent' }));
