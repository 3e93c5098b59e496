/**
 * A memory mailbox on an injected clock with its HTTP API on a free loopback port: what the delivery ledger's e2e
 * tests (the unwoken alarm, reply obligations, escalations) each set up the same way. The test keeps the time and
 * moves it (`now` below reads it at each call); rate limits are off and the mailbox logs nothing.
 */
import pino from 'pino';
import type { HttpServer } from '../../src/adapters/http/httpServer';
import type { MailboxConfigInput } from '../../src/config';
import { createMailbox, type Mailbox } from '../../src/mailbox';
import { buildApiServer } from '../../src/server';
import { ADMIN_TOKEN } from './fixtures';

export interface ClockedApiServer {
  mailbox: Mailbox;
  http: HttpServer;
  url: string;
  /** Closes the HTTP server, then the mailbox. */
  close(): Promise<void>;
}

export async function startClockedApiServer(now: () => Date, config: MailboxConfigInput = {}): Promise<ClockedApiServer> {
  const silent = pino({ level: 'silent' });
  const mailbox = await createMailbox(
    { eventStoreUrl: 'memory:', adminToken: ADMIN_TOKEN, logLevel: 'silent', rateLimitPerSecond: 0, ...config },
    { logger: silent, clock: { now } },
  );
  const http = buildApiServer(mailbox, silent);
  const url = await http.listen('127.0.0.1', 0);
  return {
    mailbox,
    http,
    url,
    close: async () => {
      await http.close();
      await mailbox.close();
    },
  };
}
