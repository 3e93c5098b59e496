/**
 * What the read model's rules decide: concrete, store-neutral changes to the
 * views. A store applies them as they are (memory: objects; Redis: keys); it
 * decides nothing itself. See evolve.ts for the rules that produce them.
 */
import type { Priority } from '../../commands/messageFields';
import type { Role } from '../../commands/roles';
import type { InboxEntryFields, MessageSummary } from '../viewChanges';

export type ReadModelChange =
  | { kind: 'agentRegistered'; identity: string; role: Role; registeredAt: string }
  | { kind: 'agentRetired'; identity: string; retiredAt: string }
  | { kind: 'messageRecorded'; summary: MessageSummary }
  /** The identity appears in the views for the first time (it is listed by allHeartbeats from now on). */
  | { kind: 'identityHasViews'; identity: string }
  | { kind: 'outboxEntryAdded'; sender: string; position: bigint; entry: InboxEntryFields }
  | { kind: 'inboxEntryAdded'; recipient: string; position: bigint; entry: InboxEntryFields; isBroadcast: boolean; wakeSuppressed: boolean }
  /** The unread count of (identity, priority) moves by one; the total moves with it. */
  | { kind: 'unreadMoved'; identity: string; priority: Priority; by: 1 | -1 }
  | { kind: 'entryRead'; recipient: string; messageId: string; readAt: string }
  | { kind: 'entryArchived'; recipient: string; messageId: string; archivedAt: string }
  | { kind: 'lastActivityMoved'; identity: string; at: string };
