/**
 * The set-up most e2e suites repeated: a test server started in beforeAll with agents registered (three by default,
 * so that receipts show per recipient), closed in afterAll; and the calls they each wrote again over it.
 */
import { randomUUID } from 'node:crypto';
import type { NewEvent } from '../../src/events/types';
import type { MailboxConfigInput } from '../../src/config';
import { startTestServer, type TestServer } from './httpServer';

export interface AgentsServer {
  /** The server (set in beforeAll). */
  readonly server: TestServer;
  /** identity -> token of the agents registered (set in beforeAll). */
  readonly t: Record<string, string>;
  /** POSTs `body` to `path` as `who` (a registered identity), expects `status`, and returns the answer's body. */
  post(who: string, path: string, body: object, status?: number): Promise<any>;
}

/** `beforeClose`: what must end before the server closes (clients of it), in afterAll. */
export function agentsServer(
  identities: string[] = ['@a', '@b', '@c'],
  { config = {}, beforeClose }: { config?: MailboxConfigInput; beforeClose?: () => Promise<void> } = {},
): AgentsServer {
  let server: TestServer | undefined;
  let t: Record<string, string> | undefined;
  const fixture: AgentsServer = {
    get server() {
      if (!server) throw new Error('the test server starts in beforeAll');
      return server;
    },
    get t() {
      if (!t) throw new Error('the agents are registered in beforeAll');
      return t;
    },
    async post(who, path, body, status = 200) {
      const answer = await fixture.server.call('POST', path, { token: fixture.t[who], body });
      expect([answer.status, answer.body]).toEqual([status, expect.anything()]);
      return answer.body;
    },
  };
  beforeAll(async () => {
    server = await startTestServer(config);
    t = await server.register(identities);
  });
  afterAll(async () => {
    await beforeClose?.();
    await server?.close();
  });
  return fixture;
}

/**
 * Appends `identity`'s retirement as a process that crashed right after appending it leaves it: AgentRetired alone,
 * none of what the retirement does next (its releases, its cancels).
 */
export async function appendRetirementAsCrashed(server: TestServer, identity: string): Promise<void> {
  const CRASHED_AT = '2026-01-01T00:00:00.000Z'; // any moment: nothing reads it
  const retirement = {
    eventId: randomUUID(),
    type: 'AgentRetired',
    data: { identity, retiredAt: CRASHED_AT },
    metadata: {
      commandId: 'crashed',
      correlationId: 'crashed',
      causationId: 'crashed',
      actor: 'admin',
      at: CRASHED_AT,
      schemaVersion: 1,
    },
  } as NewEvent;
  await server.mailbox.eventStore.append('mailbox-agents', [retirement], 'any');
}
