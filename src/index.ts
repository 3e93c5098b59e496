/** Public library API. */
import 'reflect-metadata';

export { createMailbox, Mailbox, type MailboxClient } from './mailbox';
export type { WatchListener, WatchOptions } from './watchListener';
export type { WakeStreamEvent } from './application/mailboxQueries';
export { configFromEnv, parseConfig, type MailboxConfig, type MailboxConfigInput } from './config';
export { MailboxError, type ErrorEnvelope, type ErrorCode } from './errors';
export { ADMIN_ACTOR, type Actor, type Role } from './commands/roles';
export { BROADCAST, IDENTITY_PATTERN, VALID_RECIPIENT_SHAPES } from './commands/recipients';
export type { EventStore } from './events/eventStore';
export type { ProjectionStore } from './projections/projectionStore';
export type { WakeBus } from './projections/wakeBus';
export type { WakeEvent } from './projections/viewChanges';
export { startHeartbeat, type Heartbeat, type StartHeartbeatOptions } from './heartbeat/startHeartbeat';
export { verifyProjections, type VerifyReport } from './audit/verify/verifyProjections';
export { eventStoreSource } from './audit/logSource';
