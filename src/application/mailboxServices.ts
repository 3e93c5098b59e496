/**
 * What a running mailbox offers the surfaces that serve it (HTTP, MCP): the
 * command and query sides plus what readiness and metrics look at. The
 * library's Mailbox implements it; adapters depend on this, never on the
 * composition that builds it.
 */
import type { MailboxConfig } from '../config';
import type { EventStore } from '../events/eventStore';
import type { ProjectionRunner } from '../projections/projectionRunner';
import type { ProjectionStore } from '../projections/projectionStore';
import type { Authenticator } from './authenticator';
import type { MailboxCommands } from './mailboxCommands';
import type { MailboxQueries } from './mailboxQueries';
import type { SharedLimits } from './sharedLimits';
import type { TaskCommands } from './taskCommands';
import type { TaskQueries } from './taskQueries';
import type { RejectionLog } from './rejectionLog';
import type { DeliveryQueries } from './deliveryQueries';
import type { WakeRecorder } from './wakeRecorder';
import type { SeenMarks } from './seenMarks';
import type { StreamRefusal } from './refusedStreams';
import type { Clock } from './runtime';

export interface MailboxServices {
  readonly config: MailboxConfig;
  readonly commands: MailboxCommands;
  readonly queries: MailboxQueries;
  readonly tasks: TaskCommands;
  readonly taskQueries: TaskQueries;
  readonly authenticator: Authenticator;
  readonly runner: ProjectionRunner;
  readonly eventStore: EventStore;
  readonly projections: ProjectionStore;
  /** Request limits shared by every API node; absent or null: this process's own. */
  readonly sharedLimits?: SharedLimits | null;
  /** Recent rejected commands (they write no events): the console's Rejections panel. */
  readonly rejections: RejectionLog;
  /** The delivery ledger (issue 13). */
  readonly deliveries: DeliveryQueries;
  /** The mailbox's clock (injected in tests): time-based views (the unwoken alarm) are judged by it. */
  readonly clock?: Clock;
  /** Where the wake streams record the wakes they handed out (the ledger's `woken`). */
  readonly wakeRecorder: WakeRecorder;
  /** The seen marks waiting to be written (absent: a surface that notes none). */
  readonly seenMarks?: SeenMarks;
}

/** The streams the background writers keep writing to and the store refuses for what only an operator mends. */
export function refusedStreams(mailbox: MailboxServices): StreamRefusal[] {
  const ledger = mailbox.wakeRecorder.refusal();
  return [...(ledger === null ? [] : [ledger]), ...(mailbox.seenMarks?.refusals() ?? [])];
}
