/** Public library API. */
import 'reflect-metadata';

export { createMailbox, Mailbox, type MailboxClient, type MailboxAnswer, type MailboxArguments } from './mailbox';
/** What the client's methods take and answer, by name (MailboxAnswer<'method'> names any of them). */
export type {
  CommandOptions,
  SendResult,
  ReadResult,
  BulkReadResult,
  ReadAllResult,
  ArchiveResult,
  UnarchiveResult,
  Registration,
  Retirement,
  TokenRotation,
} from './application/mailboxCommands';
export type { MessageDetail, InboxCount, HeartbeatAnswer } from './application/mailboxQueries';
export type { MessagePage, ListedMessage, AgentView } from './projections/projectionStore';
export type { DeliveryLedger } from './application/deliveryQueries';
export type { TaskResult } from './application/taskCommands';
export type { TaskPage, ListedTask } from './application/taskQueries';
export type { A2aTask } from './application/taskA2a';
export type { WatchListener, WatchOptions } from './watchListener';
/** What the client's methods take (checked at run time as before: a JavaScript caller gets the same refusals). */
export type {
  SendRequest,
  MarkReadRequest,
  ReadAllFilters,
  ListMessagesQuery,
  RegisterAgentRequest,
  UpdateTaskRequest,
  ListTasksQuery,
  TaskEnvelopeRequest,
  TaskArtifactRequest,
  TaskPart,
  TaskStateSpelling,
  TaskStatesText,
} from './libraryInputs';
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
