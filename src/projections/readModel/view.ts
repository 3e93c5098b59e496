/**
 * The part of the views the read model's rules look at: a small read-only
 * lookup each store implements over its own storage. Rules never see more.
 */
import type { Priority } from '../../events/types';
import type { ChangeSink } from './changes';
import type { AgentLookup, LedgerLookup } from './ledger';
import type { TaskViewLookup } from './taskView';

/** A recipient's inbox entry as far as the rules care. */
export interface EntryState {
  /** The log position of the event that added it (a number: exact up to 2^53, see sortedPositions.ts). */
  readonly position: number;
  /** The message's fields the entry shows (stores share one object per message; rules read the priority). */
  readonly fields: { readonly priority: Priority };
  readonly readAt: string | null;
  readonly archivedAt: string | null;
  /** When it was first returned to the recipient (a list page or a get); null: never yet. */
  readonly seenAt: string | null;
}

export interface ReadModelView extends TaskViewLookup, LedgerLookup, AgentLookup {
  /** Whether the identity has any views yet (an inbox, an outbox or a receipt addressed to it). */
  hasViews(identity: string): boolean;
  /** The recipient's entry for the message, if it has one. */
  entry(recipient: string, messageId: string): EntryState | undefined;
  hasOutboxEntry(sender: string, messageId: string): boolean;
  /** Whether the identity was ever registered (retired or not). */
  isRegistered(identity: string): boolean;
  lastActivityAt(identity: string): string | null;
  /** Entries neither read nor archived. */
  unreadTotal(identity: string): number;
}

/**
 * A store: the lookup over its storage, and the sink that writes the decided
 * changes (each as it comes: a rule reads the view only before it emits).
 */
export interface ReadModelStorage extends ReadModelView, ChangeSink {}
