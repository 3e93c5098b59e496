/** What the HTTP routes share: the library layer and this server's own instruments. */
import type { Logger } from 'pino';
import { MAX_READABLE_REQUEST_BYTES, type MailboxConfig } from '../../config';
import type { MailboxServices } from '../../application/mailboxServices';
import type { MailboxMetrics } from './metrics';
import type { WakeLatencyTracker } from './wakeLatency';
import type { OpenStreams } from './openStreams';
import type { WakeStreams } from './wakeStreams';

export interface HttpContext {
  mailbox: MailboxServices;
  config: MailboxConfig;
  logger: Logger;
  metrics: MailboxMetrics;
  wakeLatency: WakeLatencyTracker;
  wakeStreams: WakeStreams;
  /** The open GET /v1/audit/stream streams of each auditor (this node's), capped as the wake streams are. */
  auditStreams: WakeStreams;
  /** Every open audit stream (the admin's too), ended when the server shuts down. */
  openAuditStreams: OpenStreams;
  /** The largest request accepted, in bytes (bodies beyond it get 413 before they are parsed). */
  requestLimit: number;
}

export const requestLimitOf = (config: MailboxConfig): number =>
  config.maxRequestBytes ?? Math.min(config.maxBodyBytes * 4 + 64 * 1024, MAX_READABLE_REQUEST_BYTES);
