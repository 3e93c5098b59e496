/** The read side: views from the projection store, message bodies and the audit log from the event store. */
import { inject, injectable } from 'tsyringe';
import { HISTORY_ENTRY_HINT, historyEntryNotMessage, messageNotFound, messageNotInLog } from '../commands/receipts';
import type { Actor } from '../commands/roles';
import { oneMessageSchema } from '../commands/schemas';
import { parseInput } from '../commands/validation';
import type { EventStore } from '../events/eventStore';
import { messageStream, taskStream } from '../events/streams';
import type { Addressee } from '../events/addressing';
import type { MessageSent, StoredEvent, TaskEvent } from '../events/types';
import { foldTask, initialTaskLog, taskAsOf as taskLogAsOf, taskOf } from '../commands/tasks/taskState';
import { taskAsOf } from '../projections/readModel/taskRules';
import { withheldTokenHash } from '../support/tokenHashWithheld';
import type { AgentView, HeartbeatCounts, MessagePage, ProjectionStore, UnreadCount } from '../projections/projectionStore';
import type { TaskEnvelope } from '../commands/messageFields';
import type { WakeEvent } from '../projections/viewChanges';
import type { ProjectionRunner } from '../projections/projectionRunner';
import type { Unsubscribe, WakeBus } from '../projections/wakeBus';
import type { MailboxConfig } from '../config';
import { TOKENS } from '../tokens';
import { requireRole } from './authorization';
import type { AgentDirectory } from './agentDirectory';
import { caseVariantFilterRefusal, unregisteredFilterRefusal } from './caseVariantFilter';
import { CursorCodec, type CursorBinding } from './cursorCodec';
import { historyEntryTask } from './historyEntries';
import { listingOf, parseListQuery, viewQuery } from './listQueryParser';
import { messageModel } from './mailboxCommands';
import { pastTheHead } from './auditStream';
import { SeenMarks } from './seenMarks';
import type { Clock } from './runtime';
import { StreamLoader } from './streamLoader';
import { SWEEPER_ACTOR } from './taskCommands';

export interface MessageDetail {
  messageId: string;
  from: string;
  to: Addressee;
  subject: string;
  body: string;
  priority: string;
  sentAt: string;
  threadId: string;
  inReplyTo: string | null;
  tags: string[];
  task: TaskNow | null;
  readAt: string | null;
  archivedAt: string | null;
  receipts?: Array<{ recipient: string; readAt: string | null; archivedAt: string | null }>;
}

/**
 * A task's envelope as a message carrying it answers it: as sent, key for key, but its `state` the task's state now (as
 * get_task says it). The envelope as sent said "Submitted" for ever: a reader of a completed task's message concluded
 * nobody had taken it. Who holds it and since when is get_task's to say (nothing is added: an envelope sent back as
 * read is still one the mailbox takes, and equals what was sent until the task moves).
 */
export type TaskNow = TaskEnvelope;

/** How a listing or a get is answered: `shown` false when it reaches the caller without a body (HTTP HEAD). */
export interface ListingOptions {
  shown?: boolean;
}

export interface InboxCount {
  unreadCount: number;
  /** Of the unread, those never returned to you yet (in no list page or get): what a read-all would withhold. */
  unseenCount: number;
  byPriority: UnreadCount['byPriority'];
  /** The same number as unreadCount: the name DESIGN's contract gives `GET /v1/inbox/count`, kept beside it. */
  unread: number;
}

/** One agent's heartbeat counts as the API answers them. */
export type HeartbeatAnswer = Omit<HeartbeatCounts, 'unseen' | 'tasksWaitingSince'> & {
  unreadCount: number;
  unseenCount: number;
};

const inboxCount = ({ unread, unseen, byPriority }: UnreadCount): InboxCount => ({
  unreadCount: unread,
  unseenCount: unseen,
  byPriority,
  unread,
});

/** What an open wake stream carries, on every surface: the unread count (`sync`) first, then one `wake` per message. */
export type WakeStreamUpdate =
  { event: 'sync'; data: { unreadCount: number; byPriority: UnreadCount['byPriority'] } } | { event: 'wake'; data: WakeEvent };

/**
 * What the library's watch tells its listener: the stream's updates, then, once, `closed` if mailbox.close() ends the
 * stream, or `revoked` if its agent is retired or its token rotated ('agent retired', 'token rotated'; as an HTTP wake
 * stream's last `event: revoked`). Its stop function ends it without a word. Over HTTP a stopping server says so in
 * `event: shutdown`.
 */
export type WakeStreamEvent =
  | WakeStreamUpdate
  | { event: 'closed'; data: { reason: string } }
  | { event: 'revoked'; data: { identity: string; reason: string } };

/**
 * Events as JSON: bigints become strings so that positions survive any JSON parser exactly. A stored token hash is
 * withheld (the field reads '<the token hash, not shown>'): a credential verifier no auditor needs.
 */
export const eventToJson = (event: StoredEvent) => ({
  position: event.position.toString(),
  streamName: event.streamName,
  revision: event.revision.toString(),
  eventId: event.eventId,
  type: event.type,
  data: withheldTokenHash(event.data),
  metadata: event.metadata,
});

/** Messages read back recently (get_message); a miss costs one stream read, never correctness. */
const READ_SIDE_CACHE = { maxEntries: 5_000, maxBytes: 16 * 1024 * 1024 };

/** How soon a wake stream tries again to read the unread view for its resync (see openWakeStream). */
const RESYNC_RETRY_MS = 250;

@injectable()
export class MailboxQueries {
  /** The read side's own reader of message streams: get_message never goes through the command path. */
  private readonly messages: StreamLoader;
  private readonly cursors: CursorCodec;
  private readonly awaitProjectionMs: number;

  constructor(
    @inject(TOKENS.ProjectionStore) private readonly projections: ProjectionStore,
    @inject(TOKENS.EventStore) private readonly store: EventStore,
    @inject(TOKENS.WakeBus) private readonly wakeBus: WakeBus,
    @inject(TOKENS.Config) config: MailboxConfig,
    @inject(SeenMarks) private readonly seen: SeenMarks,
    @inject(TOKENS.AgentDirectory) private readonly directory: AgentDirectory,
    @inject(TOKENS.ProjectionRunner) private readonly runner: ProjectionRunner,
    @inject(TOKENS.Clock) private readonly clock: Clock,
  ) {
    this.awaitProjectionMs = config.awaitProjectionMs;
    this.messages = new StreamLoader(store, READ_SIDE_CACHE);
    this.cursors = CursorCodec.fromAdminToken(config.adminToken);
  }

  /**
   * `shown`: false when the page is not shown to the caller (HTTP HEAD: the answer has no body), so that nothing in it
   * becomes seen; a HEAD of the inbox cleared its unseen count.
   */
  async listMessages(actor: Actor, query: unknown, { shown = true }: ListingOptions = {}): Promise<MessagePage> {
    requireRole(actor, ['agent'], 'Listing messages');
    const parsed = parseListQuery(query);
    // The cursor is checked before any read: one issued for another caller or listing is refused, not reinterpreted.
    const binding: CursorBinding = { caller: actor.identity, kind: 'messages', listing: listingOf(parsed) };
    const before = parsed.cursor === undefined ? null : this.cursors.decode(binding, parsed.cursor);
    const page = await this.projections.listMessages(actor.identity, viewQuery(parsed, before));
    // An empty first page filtered by an identity that only a registered agent's case differs from can never fill: no
    // agent can be registered as @Alice beside @alice. Said, as a send to @Alice is, rather than answered "no messages".
    if (page.messages.length === 0 && before === null) await this.refuseCaseVariantFilter(parsed);
    if (parsed.box === 'inbox' && shown) this.noteSeen(actor.identity, page.messages);
    const now = this.clock.now().toISOString();
    const messages = await Promise.all(
      page.messages.map(async (message) =>
        message.task ? { ...message, task: (await this.taskNow(message.messageId, message.task, now)) ?? message.task } : message,
      ),
    );
    return {
      messages,
      nextCursor: page.nextBefore === null ? null : this.cursors.encode(binding, page.nextBefore),
      unreadCount: page.unreadCount,
    };
  }

  /** The live flow filtered by `agent` (auditor or admin): refused when no agent of that name was ever registered. */
  async refuseUnregisteredFlowAgent(actor: Actor, command: string, agent: string | undefined): Promise<void> {
    requireRole(actor, ['auditor', 'admin'], 'Watching the event log');
    if (agent === undefined) return;
    const listedBy = 'the Agents panel (GET /v1/audit/agents)';
    const refusal = unregisteredFilterRefusal(command, 'agent', agent, await this.directory.current(), listedBy);
    if (refusal) throw refusal;
  }

  private async refuseCaseVariantFilter(query: { from?: string; to?: string }): Promise<void> {
    const [field, identity] = query.from !== undefined ? ['from', query.from] : ['to', query.to];
    if (identity === undefined) return;
    const refusal = caseVariantFilterRefusal('list_messages', field, identity, await this.directory.current());
    if (refusal) throw refusal;
  }

  /** What this page returned for the first time is seen from now on (written off the request path: seenMarks.ts). */
  private noteSeen(identity: string, messages: ReadonlyArray<{ messageId: string; seenAt: string | null }>): void {
    const unseen: string[] = [];
    for (const message of messages) if (message.seenAt === null) unseen.push(message.messageId);
    this.seen.note(identity, unseen);
  }

  async unreadCount(actor: Actor): Promise<InboxCount> {
    requireRole(actor, ['agent'], 'Counting unread messages');
    // What a listing just returned is seen, but its marks are written off the request path (~200 ms later): a count
    // right after it said unseenCount as if the agent had not been shown them. Marks this node holds for the caller
    // are written and in the views first (a node knows only its own: another node's listing may still lag so); the
    // other recipients' marks are left to the next flush.
    const marks = await this.seen.writeFor(actor.identity);
    if (marks !== null) await this.runner.waitFor(marks, this.awaitProjectionMs);
    return inboxCount(await this.projections.unreadCount(actor.identity));
  }

  async listAgents(): Promise<{ agents: AgentView[] }> {
    return { agents: await this.projections.listAgents() };
  }

  async heartbeats(actor: Actor): Promise<{ agents: HeartbeatAnswer[] }> {
    requireRole(actor, ['admin', 'auditor'], 'Reading heartbeat counts');
    const agents = await this.projections.allHeartbeats();
    // unread: unreadCount's first name (kept); unseen is answered as unseenCount only; tasksWaitingSince is the
    // heartbeat daemon's own (what is new in the waiting set), not answered
    return {
      agents: agents.map(({ unseen, tasksWaitingSince: _since, ...agent }) => ({
        ...agent,
        unreadCount: agent.unread,
        unseenCount: unseen,
      })),
    };
  }

  /** `shown`: false when the message is not shown to the caller (HTTP HEAD): it does not become seen. */
  async getMessage(actor: Actor, input: unknown, { shown = true }: ListingOptions = {}): Promise<MessageDetail> {
    const { messageId } = parseInput(oneMessageSchema, input, 'get_message');
    const { state } = await this.messages.load(messageStream(messageId), messageModel);
    const sent = state.sent;
    if (!sent) {
      const taskId = await historyEntryTask(this.store, this.projections, this.messages, actor, messageId);
      if (taskId !== null) throw historyEntryNotMessage(messageId, taskId);
      throw actor.role === 'agent'
        ? messageNotFound(messageId, HISTORY_ENTRY_HINT)
        : messageNotInLog(messageId, HISTORY_ENTRY_HINT);
    }
    const own = state.recipients.get(actor.identity);
    const isSender = sent.from === actor.identity && actor.role === 'agent';
    if (!own && !isSender && actor.role === 'agent') throw messageNotFound(messageId, HISTORY_ENTRY_HINT); // no existence oracle
    // An auditor or the admin reads any message, as they read its task, its delivery and the log that holds its body.
    const overseer = actor.role === 'auditor' || actor.role === 'admin';
    if (own && actor.role === 'agent' && shown) this.seen.note(actor.identity, [messageId]); // returned to its recipient: seen
    const detail: MessageDetail = {
      messageId,
      from: sent.from,
      to: sent.to,
      subject: sent.subject,
      body: sent.body,
      priority: sent.priority,
      sentAt: sent.sentAt,
      threadId: sent.threadId,
      inReplyTo: sent.inReplyTo,
      tags: sent.tags,
      task: sent.task && (await this.taskNowFromLog({ ...sent, task: sent.task }, this.clock.now().toISOString())),
      readAt: own?.readAt ?? null,
      archivedAt: own?.archivedAt ?? null,
    };
    if (isSender || overseer) {
      detail.receipts = [...state.recipients].map(([recipient, r]) => ({
        recipient,
        readAt: r.readAt,
        archivedAt: r.archivedAt,
      }));
    }
    return detail;
  }

  /**
   * The task a message carries as of `now`, from the task views (as list_tasks shows it: a lapse or an expiry not yet
   * swept included); null while the views do not hold it.
   */
  private async taskNow(taskId: string, envelope: TaskEnvelope, now: string): Promise<TaskNow | null> {
    const view = await this.projections.getTask(taskId);
    if (!view) return null;
    const task = taskAsOf(view, now, SWEEPER_ACTOR.identity);
    return { ...envelope, state: task.state };
  }

  /** taskNow for a message read from the log, from the task's stream when the views do not hold the task yet. */
  private async taskNowFromLog(sent: MessageSent['data'] & { task: TaskEnvelope }, now: string): Promise<TaskNow> {
    // get_message reads the log, not the views: views that cannot be read (Redis down) cost it the task's stream, never the answer.
    const viewed = await this.taskNow(sent.messageId, sent.task, now).catch(() => null);
    if (viewed) return viewed;
    const log = foldTask(initialTaskLog(), (await this.store.readStream(taskStream(sent.messageId))) as StoredEvent<TaskEvent>[]);
    const task = taskLogAsOf(taskOf(sent, log)!, now); // past its deadline: Canceled, at the deadline
    return { ...sent.task, state: task.state };
  }

  async auditEvents(actor: Actor, after: bigint | null, limit: number) {
    requireRole(actor, ['auditor', 'admin'], 'Reading the event log');
    const page = await this.store.readAll(after, Math.min(Math.max(limit, 1), 1000));
    // An empty page from past the head answered 200 with nextAfter at that position: a reader paging on from it
    // skipped, unseen, every event up to it. Refused as GET /v1/audit/stream refuses it (the head is read only then).
    if (page.length === 0 && after !== null) {
      const head = await this.store.headPosition();
      if (head === null || after > head) throw pastTheHead(after, head, 'after', 'paging on from it');
    }
    const events = page.map(eventToJson);
    return { events, nextAfter: events.length ? events[events.length - 1].position : (after?.toString() ?? null) };
  }

  /** Subscribes first, then reads the count: a wake racing the sync is delivered after it, never lost. */
  async openWakeStream(actor: Actor, emit: (event: WakeStreamUpdate) => void): Promise<Unsubscribe> {
    requireRole(actor, ['agent'], 'Watching wake events');
    let buffered: WakeEvent[] | null = [];
    let open = true;
    const sync = async () => {
      const count = await this.projections.unreadCount(actor.identity);
      emit({ event: 'sync', data: { unreadCount: count.unread, byPriority: count.byPriority } });
      const pending = buffered ?? [];
      buffered = null;
      for (const wake of pending) emit({ event: 'wake', data: wake });
    };
    // The bus lost wakes while this stream stayed open (its connection to Redis dropped and came back):
    // a new sync, as a reconnecting client would get, once the views hold the log as it is now (views lost
    // with Redis read as empty until they are rebuilt: a count of them would say less than is true).
    const resync = async (): Promise<void> => {
      buffered ??= [];
      let head: bigint | null | undefined;
      while (open) {
        try {
          head ??= await this.store.headPosition();
          const checkpoint = await this.projections.checkpoint();
          if (head === null || (checkpoint !== null && checkpoint >= head)) return await sync();
        } catch {
          // The log or the views do not answer yet: try again.
        }
        await new Promise((resolve) => setTimeout(resolve, RESYNC_RETRY_MS).unref());
      }
    };
    const unsubscribeBus = await this.wakeBus.subscribe(
      actor.identity,
      (wake) => (buffered ? buffered.push(wake) : emit({ event: 'wake', data: wake })),
      () => void resync(),
    );
    const unsubscribe = async () => {
      open = false;
      await unsubscribeBus();
    };
    await sync().catch(async (error: unknown) => {
      await unsubscribe(); // a stream that never opened must not keep its subscription
      throw error;
    });
    return unsubscribe;
  }
}
