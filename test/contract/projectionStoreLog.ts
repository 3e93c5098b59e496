/**
 * A deterministic synthetic event log for projection tests: agents @a, @b, @c
 * and a few more; direct messages (replies, tags, tasks, priorities, some with
 * wakes suppressed), broadcasts with per-recipient deliveries, reads, archives
 * (of read and unread mail) and a retirement. Events are valid for the
 * projector (the shapes the deciders produce), positions 1..N.
 */
import type { Priority, TaskEnvelope } from '../../src/commands/messageFields';
import type { EventStore } from '../../src/events/eventStore';
import {
  AGENT_REGISTRY_STREAM,
  DELIVERY_STREAM,
  escalationStream,
  messageStream,
  replyOverdueStream,
  seenStream,
  taskStream,
} from '../../src/events/streams';
import type { MailboxEvent, NewEvent, StoredEvent, TaskEvent, WakeVia } from '../../src/events/types';
import { projectStored } from '../../src/projections/projector';
import type { ProjectedEvent } from '../../src/projections/viewChanges';

/** mulberry32: small and deterministic. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const PRIORITIES: Priority[] = ['low', 'normal', 'normal', 'high'];
const TAGS = ['ops', 'review', 'urgent'];
const TASK = { state: 'Working', expectedOutput: { shape: 'review' } } as TaskEnvelope;

/** A set with O(1) add, remove and random take. */
class Bag<T> {
  private readonly items: T[] = [];
  private readonly index = new Map<T, number>();

  constructor(private readonly random: () => number) {}

  get size(): number {
    return this.items.length;
  }

  add(item: T): void {
    this.index.set(item, this.items.push(item) - 1);
  }

  remove(item: T): void {
    const at = this.index.get(item);
    if (at === undefined) return;
    const last = this.items.pop()!;
    this.index.delete(item);
    if (last !== item) {
      this.items[at] = last;
      this.index.set(last, at);
    }
  }

  take(): T {
    const item = this.items[Math.floor(this.random() * this.items.length)];
    this.remove(item);
    return item;
  }
}

interface Delivery {
  messageId: string;
  recipient: string;
  priority: Priority;
  sentAt: string;
  read: boolean;
  archived: boolean;
}

export function generateLog(count: number, seed = 7, extraAgents = 7): StoredEvent[] {
  const random = prng(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)];
  const agents = ['@a', '@b', '@c', ...Array.from({ length: extraAgents }, (_u, i) => `@agent-${i + 1}`)];
  const events: StoredEvent[] = [];
  const revisions = new Map<string, bigint>();
  const unread = new Bag<Delivery>(random);
  const unarchived = new Bag<Delivery>(random);
  const threads: Array<{ threadId: string; messageId: string }> = [];
  let clock = Date.parse('2025-03-01T08:00:00.000Z');
  let messages = 0;

  const add = (streamName: string, type: MailboxEvent['type'], data: unknown, actor: string): string => {
    const at = new Date((clock += 1000)).toISOString();
    const revision = (revisions.get(streamName) ?? -1n) + 1n;
    revisions.set(streamName, revision);
    const id = `evt-${seed}-${events.length + 1}`;
    events.push({
      eventId: id,
      streamName,
      revision,
      position: BigInt(events.length + 1),
      type,
      data,
      metadata: { commandId: id, correlationId: id, causationId: id, actor, at, schemaVersion: 1 },
    } as StoredEvent);
    return at;
  };
  const at = () => new Date(clock + 1000).toISOString();

  for (const identity of agents) {
    add(
      AGENT_REGISTRY_STREAM,
      'AgentRegistered',
      { identity, role: 'agent', tokenHash: `hash-${identity}`, registeredAt: at() },
      'admin',
    );
  }
  while (events.length < count) {
    const roll = random();
    if (roll < 0.25 && unread.size > 0) {
      const d = unread.take();
      d.read = true;
      add(
        messageStream(d.messageId),
        'ReceiptRead',
        { messageId: d.messageId, reader: d.recipient, readAt: at(), priority: d.priority, sentAt: d.sentAt },
        d.recipient,
      );
    } else if (roll < 0.33 && unarchived.size > 0) {
      const d = unarchived.take();
      if (!d.read) unread.remove(d);
      d.archived = true;
      add(
        messageStream(d.messageId),
        'MessageArchived',
        {
          messageId: d.messageId,
          recipient: d.recipient,
          archivedAt: at(),
          wasUnread: !d.read,
          priority: d.priority,
          sentAt: d.sentAt,
        },
        d.recipient,
      );
    } else {
      const from = pick(agents);
      const broadcast = random() < 0.06;
      const to = broadcast ? 'AGENT:*' : pick(agents.filter((x) => x !== from));
      const messageId = `msg-${seed}-${++messages}`;
      const reply = threads.length > 0 && random() < 0.3 ? pick(threads) : null;
      const fields = {
        messageId,
        from,
        to,
        subject: `subject ${messages}`,
        priority: pick(PRIORITIES),
        threadId: reply?.threadId ?? messageId,
        inReplyTo: reply?.messageId ?? null,
        tags: TAGS.filter(() => random() < 0.3),
        sentAt: at(),
        wakeSuppressed: random() < 0.1,
        hasTask: random() < 0.1,
      };
      const recipients = broadcast ? agents.filter((x) => x !== from) : [to];
      threads.push({ threadId: fields.threadId, messageId });
      add(
        messageStream(messageId),
        'MessageSent',
        {
          ...fields,
          body: `body ${messages}`,
          task: fields.hasTask ? TASK : null,
          recipients,
          idempotencyKey: null,
          requestHash: `hash-${messages}`,
        },
        from,
      );
      for (const recipient of recipients) {
        if (broadcast) {
          add(messageStream(messageId), 'BroadcastDelivered', { ...fields, recipient, deliveredAt: at() }, from);
        }
        const delivery = { messageId, recipient, priority: fields.priority, sentAt: fields.sentAt, read: false, archived: false };
        unread.add(delivery);
        unarchived.add(delivery);
      }
    }
    if (events.length === Math.floor(count * 0.9)) {
      add(AGENT_REGISTRY_STREAM, 'AgentRetired', { identity: agents[agents.length - 1], retiredAt: at() }, 'admin');
    }
  }
  return events;
}

export const projectAll = (events: readonly StoredEvent[]): ProjectedEvent[] => events.map(projectStored);

/** Appends the log to an event store, one append per run of events of the same stream. */
export async function appendLog(store: EventStore, events: readonly StoredEvent[]): Promise<void> {
  for (let i = 0; i < events.length;) {
    let j = i + 1;
    while (j < events.length && events[j].streamName === events[i].streamName) j++;
    const batch = events.slice(i, j).map(({ eventId, type, data, metadata }) => ({ eventId, type, data, metadata }) as NewEvent);
    await store.append(events[i].streamName, batch, 'any');
    i = j;
  }
}

/**
 * The log delivered the way an at-least-once subscription might: batches of
 * random size, each mixing the next new events (in order) with duplicates of
 * events already delivered, in random order; now and then a whole stale batch.
 */
export function shuffledWithDuplicates(events: readonly ProjectedEvent[], seed = 11): ProjectedEvent[][] {
  const random = prng(seed);
  const batches: ProjectedEvent[][] = [];
  let frontier = 0;
  while (frontier < events.length) {
    const fresh = events.slice(frontier, frontier + 1 + Math.floor(random() * 300));
    const delivered = events.slice(0, frontier);
    frontier += fresh.length;
    const duplicates =
      delivered.length === 0
        ? []
        : Array.from({ length: Math.floor(random() * 80) }, () => delivered[Math.floor(random() * delivered.length)]);
    const batch: ProjectedEvent[] = [];
    let next = 0;
    // Earlier events come again before, between or after the fresh ones (which keep their order)...
    for (const duplicate of duplicates) {
      while (next < fresh.length && random() < 0.5) batch.push(fresh[next++]);
      batch.push(duplicate);
    }
    batch.push(...fresh.slice(next));
    // ...and some fresh ones twice, after their first delivery, in random order.
    batch.push(...fresh.filter(() => random() < 0.1).sort(() => random() - 0.5));
    batches.push(batch);
    if (random() < 0.15) {
      const start = Math.floor(random() * frontier);
      batches.push(events.slice(start, Math.min(frontier, start + 200)));
    }
  }
  return batches;
}

export interface SendOptions {
  priority?: Priority;
  tags?: string[];
  replyTo?: string;
  task?: TaskEnvelope | null;
  wakeSuppressed?: boolean;
  subject?: string;
}

/** Hand-written scenarios: each call appends the events the deciders would produce, one second apart. */
export class LogBuilder {
  readonly events: StoredEvent[] = [];
  private clock = Date.parse('2025-04-01T09:00:00.000Z');
  private readonly revisions = new Map<string, bigint>();
  private readonly threads = new Map<string, string>();
  private readonly sent = new Map<string, { priority: Priority; sentAt: string }>();
  private messages = 0;

  /** The time the next event will carry. */
  get nextAt(): string {
    return new Date(this.clock + 1000).toISOString();
  }

  register(...identities: string[]): this {
    for (const identity of identities) {
      this.add(
        AGENT_REGISTRY_STREAM,
        'AgentRegistered',
        { identity, role: 'agent', tokenHash: `h-${identity}`, registeredAt: this.nextAt },
        'admin',
      );
    }
    return this;
  }

  retire(identity: string): this {
    this.add(AGENT_REGISTRY_STREAM, 'AgentRetired', { identity, retiredAt: this.nextAt }, 'admin');
    return this;
  }

  /**
   * A direct message (`to` an identity), a broadcast (`to` 'AGENT:*' with its audience) or a list of identities
   * (delivered to each once by the MessageSent, as the decider does). Returns the message id.
   */
  send(from: string, to: string | string[], options: SendOptions = {}, audience: string[] = []): string {
    const messageId = `m${++this.messages}`;
    const sentAt = this.nextAt;
    const fields = {
      messageId,
      from,
      to: typeof to === 'string' ? to : [...new Set(to)],
      subject: options.subject ?? `subject of ${messageId}`,
      priority: options.priority ?? 'normal',
      threadId: options.replyTo ? this.threads.get(options.replyTo)! : messageId,
      inReplyTo: options.replyTo ?? null,
      tags: options.tags ?? [],
      sentAt,
      wakeSuppressed: options.wakeSuppressed ?? false,
      hasTask: Boolean(options.task),
    };
    this.threads.set(messageId, fields.threadId);
    this.sent.set(messageId, { priority: fields.priority, sentAt });
    const recipients = to === 'AGENT:*' ? audience : typeof to === 'string' ? [to] : [...new Set(to)];
    this.add(
      messageStream(messageId),
      'MessageSent',
      {
        ...fields,
        body: `body of ${messageId}`,
        task: options.task ?? null,
        recipients,
        idempotencyKey: null,
        requestHash: `r-${messageId}`,
      },
      from,
    );
    if (to === 'AGENT:*') {
      for (const recipient of recipients)
        this.add(messageStream(messageId), 'BroadcastDelivered', { ...fields, recipient, deliveredAt: this.nextAt }, from);
    }
    return messageId;
  }

  read(reader: string, messageId: string): string {
    const { priority, sentAt } = this.sent.get(messageId) ?? { priority: 'normal' as Priority, sentAt: this.nextAt };
    const readAt = this.nextAt;
    this.add(messageStream(messageId), 'ReceiptRead', { messageId, reader, readAt, priority, sentAt }, reader);
    return readAt;
  }

  archive(recipient: string, messageId: string, wasUnread = true): this {
    const { priority, sentAt } = this.sent.get(messageId) ?? { priority: 'normal' as Priority, sentAt: this.nextAt };
    this.add(
      messageStream(messageId),
      'MessageArchived',
      { messageId, recipient, archivedAt: this.nextAt, wasUnread, priority, sentAt },
      recipient,
    );
    return this;
  }

  /** Back to the inbox (the decider writes this only for an archived entry; the rules must cope with any). */
  unarchive(recipient: string, messageId: string): this {
    const { priority, sentAt } = this.sent.get(messageId) ?? { priority: 'normal' as Priority, sentAt: this.nextAt };
    this.add(
      messageStream(messageId),
      'MessageUnarchived',
      { messageId, recipient, unarchivedAt: this.nextAt, priority, sentAt },
      recipient,
    );
    return this;
  }

  /** A batch of seen marks, as SeenMarks writes them (the rules must cope with marks for anything). Returns seenAt. */
  seen(recipient: string, ...messageIds: string[]): string {
    const seenAt = this.nextAt;
    this.add(seenStream(recipient), 'MessagesSeen', { recipient, seenAt, messageIds }, recipient);
    return seenAt;
  }

  /** A wake observed for the recipient (the delivery ledger's `woken`), as the API nodes and the heartbeat write it. */
  wake(recipient: string, messageId: string, via: WakeVia = 'stream'): this {
    this.add(DELIVERY_STREAM, 'WakeObserved', { messageId, recipient, via, observedAt: this.nextAt }, recipient);
    return this;
  }

  /** The sender expects each recipient's reply by `dueBy` (written with the send, right after it). */
  requestReply(messageId: string, dueBy: string): this {
    this.add(messageStream(messageId), 'ReplyRequested', { messageId, dueBy }, 'system');
    return this;
  }

  /** The heartbeat found the reply obligation overdue. */
  replyOverdue(messageId: string, sender: string, waitingOn: string[], dueBy: string): this {
    this.add(
      replyOverdueStream(messageId),
      'ReplyOverdue',
      { messageId, sender, waitingOn, dueBy, overdueAt: this.nextAt },
      'system:heartbeat',
    );
    return this;
  }

  /** The heartbeat escalated a message that woke nobody. */
  escalate(messageId: string, recipients: string[] = []): this {
    this.add(
      escalationStream(messageId),
      'WakeEscalated',
      { messageId, recipients, slaMs: 60_000, escalatedAt: this.nextAt },
      'system:heartbeat',
    );
    return this;
  }

  sentAt(messageId: string): string {
    return this.sent.get(messageId)!.sentAt;
  }

  /** A task event (as the task decider writes it) on the task's stream, by `actor`. */
  task(actor: string, event: TaskEvent): this {
    this.add(taskStream(event.data.taskId), event.type, event.data, actor);
    return this;
  }

  projected(from = 0): ProjectedEvent[] {
    return projectAll(this.events.slice(from));
  }

  private add(streamName: string, type: MailboxEvent['type'], data: unknown, actor: string): void {
    const at = new Date((this.clock += 1000)).toISOString();
    const revision = (this.revisions.get(streamName) ?? -1n) + 1n;
    this.revisions.set(streamName, revision);
    const id = `e${this.events.length + 1}`;
    this.events.push({
      eventId: id,
      streamName,
      revision,
      position: BigInt(this.events.length + 1),
      type,
      data,
      metadata: { commandId: id, correlationId: id, causationId: id, actor, at, schemaVersion: 1 },
    } as StoredEvent);
  }
}
