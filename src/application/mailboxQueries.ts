/** The read side: views from the projection store, message bodies and the audit log from the event store. */
import { inject, injectable } from 'tsyringe';
import { messageNotFound } from '../commands/receipts';
import type { Actor } from '../commands/roles';
import { archiveSchema } from '../commands/schemas';
import { parseInput } from '../commands/validation';
import { MailboxError } from '../errors';
import type { EventStore } from '../events/eventStore';
import { messageStream } from '../events/streams';
import type { StoredEvent } from '../events/types';
import { upcast } from '../events/upcasters';
import { parseListQuery } from '../projections/listQuery';
import type { AgentView, HeartbeatCounts, MessagePage, ProjectionStore, UnreadCount } from '../projections/projectionStore';
import type { WakeEvent } from '../projections/viewChanges';
import type { Unsubscribe, WakeBus } from '../projections/wakeBus';
import { TOKENS } from '../tokens';
import { requireRole } from './authorization';
import type { CommandHandler } from './commandHandler';
import { messageModel } from './mailboxCommands';

export interface MessageDetail {
  messageId: string; from: string; to: string; subject: string; body: string; priority: string; sentAt: string;
  threadId: string; inReplyTo: string | null; tags: string[]; task: unknown;
  readAt: string | null; archivedAt: string | null;
  receipts?: Array<{ recipient: string; readAt: string | null; archivedAt: string | null }>;
}

export type WakeStreamEvent = { event: 'sync'; data: { unreadCount: number; byPriority: UnreadCount['byPriority'] } }
  | { event: 'wake'; data: WakeEvent };

/** Events as JSON: bigints become strings so that positions survive any JSON parser exactly. */
export const eventToJson = (event: StoredEvent) => ({
  position: event.position.toString(), streamName: event.streamName, revision: event.revision.toString(),
  eventId: event.eventId, type: event.type, data: event.data, metadata: event.metadata,
});

@injectable()
export class MailboxQueries {
  constructor(
    @inject(TOKENS.ProjectionStore) private readonly projections: ProjectionStore,
    @inject(TOKENS.EventStore) private readonly store: EventStore,
    @inject(TOKENS.WakeBus) private readonly wakeBus: WakeBus,
    @inject(TOKENS.CommandHandler) private readonly handler: CommandHandler,
  ) {}

  async listMessages(actor: Actor, query: unknown): Promise<MessagePage> {
    requireRole(actor, ['agent'], 'Listing messages');
    return this.projections.listMessages(actor.identity, parseListQuery(query));
  }

  async unreadCount(actor: Actor): Promise<UnreadCount> {
    requireRole(actor, ['agent'], 'Counting unread messages');
    return this.projections.unreadCount(actor.identity);
  }

  async listAgents(): Promise<{ agents: AgentView[] }> {
    return { agents: await this.projections.listAgents() };
  }

  async heartbeats(actor: Actor): Promise<{ agents: HeartbeatCounts[] }> {
    requireRole(actor, ['admin', 'auditor'], 'Reading heartbeat counts');
    return { agents: await this.projections.allHeartbeats() };
  }

  async getMessage(actor: Actor, input: unknown): Promise<MessageDetail> {
    const { messageId } = parseInput(archiveSchema, input, 'get_message');
    const { state } = await this.handler.load(messageStream(messageId), messageModel);
    const sent = state.sent;
    if (!sent) throw messageNotFound(messageId);
    const own = state.recipients.get(actor.identity);
    const isSender = sent.from === actor.identity && actor.role === 'agent';
    if (!own && !isSender && actor.role === 'agent') throw messageNotFound(messageId); // no existence oracle
    if (!own && !isSender && actor.role !== 'auditor') {
      throw new MailboxError('FORBIDDEN', 'Forbidden',
        `Message ${messageId} is visible only to its sender, its recipients and auditors.`, { messageId });
    }
    const detail: MessageDetail = {
      messageId, from: sent.from, to: sent.to, subject: sent.subject, body: sent.body, priority: sent.priority,
      sentAt: sent.sentAt, threadId: sent.threadId, inReplyTo: sent.inReplyTo, tags: sent.tags, task: sent.task,
      readAt: own?.readAt ?? null, archivedAt: own?.archivedAt ?? null,
    };
    if (isSender || actor.role === 'auditor') {
      detail.receipts = [...state.recipients].map(([recipient, r]) => ({ recipient, readAt: r.readAt, archivedAt: r.archivedAt }));
    }
    return detail;
  }

  async auditEvents(actor: Actor, after: bigint | null, limit: number) {
    requireRole(actor, ['auditor', 'admin'], 'Reading the event log');
    const page = await this.store.readAll(after, Math.min(Math.max(limit, 1), 1000));
    const events = page.map((event) => eventToJson(upcast(event)));
    return { events, nextAfter: events.length ? events[events.length - 1].position : after?.toString() ?? null };
  }

  /** Subscribes first, then reads the count: a wake racing the sync is delivered after it, never lost. */
  async openWakeStream(actor: Actor, emit: (event: WakeStreamEvent) => void): Promise<Unsubscribe> {
    requireRole(actor, ['agent'], 'Watching wake events');
    let buffered: WakeEvent[] | null = [];
    const unsubscribe = await this.wakeBus.subscribe(actor.identity, (wake) =>
      buffered ? buffered.push(wake) : emit({ event: 'wake', data: wake }));
    const count = await this.projections.unreadCount(actor.identity).catch(async (error: unknown) => {
      await unsubscribe(); // a stream that never opened must not keep its subscription
      throw error;
    });
    emit({ event: 'sync', data: { unreadCount: count.unread, byPriority: count.byPriority } });
    const pending = buffered;
    buffered = null;
    for (const wake of pending) emit({ event: 'wake', data: wake });
    return unsubscribe;
  }
}
