/**
 * What the heartbeat's once-per-message escalations share (issue 13): the
 * claim, an event that creates the message's own escalation stream (expected
 * revision 'no_stream'; this daemon's ids, so another daemon's append of the
 * same claim conflicts instead of passing as a retry), and the nudge about a
 * message, built from the recipient's heartbeat counts.
 */
import { ConcurrencyConflict, isMailboxError, needsOperator } from '../errors';
import type { EventStore } from '../events/eventStore';
import { deterministicEventId, newCommandId } from '../events/eventIds';
import type { NewEvent, ReplyOverdue, WakeEscalated } from '../events/types';
import { CURRENT_SCHEMA_VERSION } from '../events/upcasters';
import type { ProjectionStore } from '../projections/projectionStore';
import type { DeliveryRow } from '../projections/readModel/ledger';
import type { Nudge } from './nudgeDecider';

/**
 * Appends the claim; false when the stream exists already (another daemon, or an earlier run, claimed it).
 *
 * The stream is read first. EventStoreDB takes a write expecting no stream on a soft-deleted stream and undeletes it,
 * hiding the claim made there before: a message escalated twice, its first claim gone. No expected revision refuses
 * that and takes a new stream, so the claim looks first: the read finds a soft-deleted stream (the adapter reads its
 * metadata when it finds none) and refuses, Operator action needed naming it, with nothing written. A claim is made
 * once per escalated message, off every request's path: the read costs nothing that matters, and an existing claim it
 * finds spares the append. A delete between the read and the write is caught from the write's result (the adapter).
 */
export async function claimOnce(
  store: EventStore,
  streamName: string,
  event: WakeEscalated | ReplyOverdue,
  messageId: string,
  at: string,
): Promise<boolean> {
  const commandId = newCommandId();
  const stored = {
    eventId: deterministicEventId(commandId, 0),
    type: event.type,
    data: event.data,
    metadata: {
      commandId,
      correlationId: messageId,
      causationId: messageId,
      actor: 'system:heartbeat',
      at,
      schemaVersion: CURRENT_SCHEMA_VERSION,
    },
  } as NewEvent;
  if ((await store.readStream(streamName)).length > 0) return false;
  try {
    await store.append(streamName, [stored], 'no_stream');
    return true;
  } catch (error) {
    if (error instanceof ConcurrencyConflict) return false;
    throw error;
  }
}

/** A claim the store refused for what no retry mends: its stream deleted under the mailbox (EventStoreDB). */
export interface ClaimRefused {
  messageId: string;
  stream: string;
  error: string;
  operatorAction: string;
}

/**
 * The refusal, when claimOnce failed for what only an operator mends on the claim's stream (Operator action needed
 * naming it: deleted under the mailbox), else null (the caller throws the error, as before). Such a message is not escalated and
 * the tick goes on with the others: one deleted stream held every escalation after it back, each tick.
 */
export function claimRefused(error: unknown, messageId: string, stream: string): ClaimRefused | null {
  // That stream's alone: a refusal of the whole store (its credentials) fails the tick, as before.
  if (!isMailboxError(error) || !needsOperator(error) || error.envelope.stream !== stream) return null;
  return { messageId, stream, error: error.message, operatorAction: String(error.envelope.operatorAction) };
}

/** Remembered messages, at most (then the memory starts afresh: a repeat costs a read, or one more line). */
const REMEMBERED = 10_000;

/**
 * The claims one escalation of a running daemon makes (unwoken, reply overdue): those it made (the views may not show
 * them yet: the next claim would conflict anyway), and those refused, said once each by `sayRefused`.
 */
export class EscalationClaims {
  private readonly claimed = new Set<string>();
  private readonly saidRefused = new Set<string>();

  constructor(
    private readonly store: EventStore,
    private readonly sayRefused: (refusal: ClaimRefused) => void,
  ) {}

  /** Whether this daemon claimed the message's escalation already. */
  made(messageId: string): boolean {
    return this.claimed.has(messageId);
  }

  /**
   * Claims it (claimOnce): true when this daemon made the claim; false when it was made before (another daemon, an
   * earlier run) or refused for what only an operator mends (added to `refused`, said once per message); any other
   * failure is thrown, as before (a refusal of the whole store fails the tick).
   */
  async claim(
    stream: string,
    event: WakeEscalated | ReplyOverdue,
    messageId: string,
    at: string,
    refused: ClaimRefused[],
  ): Promise<boolean> {
    let claimed: boolean;
    try {
      claimed = await claimOnce(this.store, stream, event, messageId, at);
    } catch (error) {
      const refusal = claimRefused(error, messageId, stream);
      if (refusal === null) throw error;
      refused.push(refusal);
      if (remember(this.saidRefused, messageId)) this.sayRefused(refusal);
      return false;
    }
    if (claimed) remember(this.claimed, messageId);
    return claimed;
  }
}

/** Adds `key` (the set starting afresh at REMEMBERED): false when it was there already. */
function remember(keys: Set<string>, key: string): boolean {
  if (keys.has(key)) return false;
  if (keys.size >= REMEMBERED) keys.clear();
  keys.add(key);
  return true;
}

/**
 * A nudge about the messages `messageIds` (`reason`; one or more, never none), sent once whatever the unread set's
 * cooldown. Its id is the first message's: each message is escalated once, in one nudge per recipient.
 */
export async function nudgeAbout(
  projections: ProjectionStore,
  recipient: string,
  reason: NonNullable<Nudge['reason']>,
  messageIds: readonly string[],
  now: number,
): Promise<Nudge> {
  const messageId = messageIds[0];
  const counts = await projections.heartbeat(recipient);
  return {
    type: 'heartbeat/nudge',
    nudgeId: `${reason}:${messageId}:${recipient}`,
    identity: recipient,
    unread: counts.unread,
    unreadCount: counts.unread,
    tasksWaiting: counts.tasksWaiting,
    byPriority: { ...counts.byPriority },
    oldestUnreadAt: counts.oldestUnreadAt,
    newestUnreadId: null,
    lastActivityAt: counts.lastActivityAt,
    idleForMs: counts.lastActivityAt === null ? null : now - Date.parse(counts.lastActivityAt),
    at: new Date(now).toISOString(),
    reason,
    messageId,
    messageIds: [...messageIds],
    messageCount: messageIds.length,
  };
}

/** Every recipient row of the message's ledger that `keep` keeps, in identity order. */
export async function recipientsWhere(
  projections: ProjectionStore,
  messageId: string,
  keep: (row: DeliveryRow) => boolean,
): Promise<string[]> {
  const recipients: string[] = [];
  let after: string | null = null;
  do {
    const page = await projections.deliveryLedger(messageId, { after, limit: 1000 });
    if (!page) return recipients;
    for (const row of page.rows) if (keep(row)) recipients.push(row.recipient);
    after = page.nextAfter;
  } while (after !== null);
  return recipients;
}

/**
 * Who of an escalation's recipients its nudges can reach, and how its log line says so. The claim lists every
 * recipient it is about; only the registered, non-retired, non-opted-out ones are nudged. The line said "escalating
 * through their nudge targets" (or "nudging who has not answered") for a message whose one recipient was retired,
 * when nobody was told.
 */
export function whoIsTold(
  recipients: readonly string[],
  nudgeable: (identity: string) => boolean,
): { nudged: string[]; notNudged: string[]; told: string } {
  const nudged = recipients.filter((identity) => nudgeable(identity));
  const notNudged = recipients.filter((identity) => !nudgeable(identity));
  const passedOver = `${named(notNudged)} (retired, opted out or not registered)`;
  const told =
    nudged.length === 0
      ? `nobody is nudged: ${passedOver}, so nobody is told`
      : notNudged.length === 0
        ? `nudging ${named(nudged)}`
        : `nudging ${named(nudged)}; not ${passedOver}`;
  return { nudged, notNudged, told };
}

/** Identities the line names: a broadcast's escalation may concern a thousand; the fields keep them all. */
const NAMED_IN_LINE = 5;

export function named(identities: readonly string[]): string {
  if (identities.length <= NAMED_IN_LINE) return identities.join(', ');
  return `${identities.slice(0, NAMED_IN_LINE).join(', ')} and ${identities.length - NAMED_IN_LINE} more`;
}
