/**
 * Writes a realistic synthetic event log straight through an EventStore, far
 * faster than issuing commands: agents registered, direct messages, some
 * broadcasts with per-recipient deliveries, reads and archives. Every event is
 * valid for the projector (same shapes the deciders produce). Appends are
 * issued concurrently in chunks so that a store that groups commits writes
 * each chunk in few transactions.
 */
import { randomUUID } from 'node:crypto';
import { deterministicEventId, deterministicMessageId, newCommandId } from '../../src/events/eventIds';
import type { EventStore } from '../../src/events/eventStore';
import type { EventMetadata, MessageSummaryFields, NewEvent } from '../../src/events/types';
import { AGENT_REGISTRY_STREAM, messageStream } from '../../src/events/streams';
import { CURRENT_SCHEMA_VERSION } from '../../src/events/upcasters';
import { hashToken } from '../../src/application/tokenHash';
import type { Priority } from '../../src/commands/messageFields';
import { agentIdentity } from './mailbox';

export interface SyntheticLogOptions {
  agents: number;
  /** Stop once at least this many events are written (agent registrations included)... */
  events: number;
  /** ...and at least this many direct messages (default 0). */
  minDirectMessages?: number;
  /** Share of appends that mark an earlier direct message read (0..1). */
  readShare?: number;
  /** Share of read messages that are then archived (0..1). */
  archiveShare?: number;
  /** One broadcast to every agent per this many events (0: none). */
  broadcastEvery?: number;
  bodyBytes?: number;
  /** Appends issued together per chunk. */
  chunk?: number;
  onProgress?: (written: number) => void;
}

export interface SyntheticLogSummary {
  identities: string[];
  events: number;
  directMessages: number;
  broadcasts: number;
  reads: number;
  archives: number;
}

/**
 * Ids as the mailbox mints them (events/eventIds.ts): time-ordered command ids, the message and event ids derived
 * from them. BENCH_RANDOM_IDS=1: random command ids, so that every id is random, as releases before time-ordered ids
 * wrote them (for A/B runs).
 */
const RANDOM_IDS = process.env.BENCH_RANDOM_IDS === '1';

interface Append {
  stream: string;
  events: NewEvent[];
  expected: 'no_stream' | bigint;
}
interface Delivered {
  messageId: string;
  recipient: string;
  priority: Priority;
  sentAt: string;
  revision: bigint;
}

/**
 * Messages waiting for a receipt (or an archive). Only those from earlier
 * chunks ("settled") are taken, so that the expected revision is certain
 * whatever order a store commits one chunk's appends in.
 */
class Pool<T> {
  private readonly items: T[] = [];
  private settledCount = 0;

  get settled(): number {
    return this.settledCount;
  }

  add(item: T): void {
    this.items.push(item);
  }

  settle(): void {
    this.settledCount = this.items.length;
  }

  /** Removes a random settled item in O(1). */
  take(random: () => number): T {
    const index = Math.floor(random() * this.settledCount);
    const taken = this.items[index];
    const lastSettled = this.settledCount - 1;
    this.items[index] = this.items[lastSettled];
    this.items[lastSettled] = this.items[this.items.length - 1];
    this.items.pop();
    this.settledCount--;
    return taken;
  }
}

const PRIORITY_CYCLE: Priority[] = ['normal', 'normal', 'normal', 'high', 'low'];
const START = Date.parse('2025-01-01T00:00:00.000Z');

/** Small deterministic PRNG (mulberry32) so that runs generate the same shape of log. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export async function writeSyntheticLog(store: EventStore, options: SyntheticLogOptions): Promise<SyntheticLogSummary> {
  const {
    agents,
    events: target,
    minDirectMessages = 0,
    readShare = 0.25,
    archiveShare = 0.1,
    broadcastEvery = 0,
    bodyBytes = 300,
    chunk = 2000,
    onProgress,
  } = options;
  const random = prng(42);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)];
  const identities = Array.from({ length: agents }, (_unused, i) => agentIdentity(i));
  const body = 'Lorem ipsum dolor sit amet, consectetur adipiscing elit. '.repeat(Math.ceil(bodyBytes / 56)).slice(0, bodyBytes);
  let clock = START;
  const meta = (actor: string): EventMetadata => {
    const at = new Date((clock += 3)).toISOString();
    const commandId = RANDOM_IDS ? randomUUID() : newCommandId();
    return { commandId, correlationId: commandId, causationId: commandId, actor, at, schemaVersion: CURRENT_SCHEMA_VERSION };
  };
  const summary: SyntheticLogSummary = { identities, events: 0, directMessages: 0, broadcasts: 0, reads: 0, archives: 0 };

  // 1. Agents, in one append to the registry stream.
  const registrations: NewEvent[] = identities.map((identity) => {
    const metadata = meta('admin');
    return {
      eventId: deterministicEventId(metadata.commandId, 0),
      type: 'AgentRegistered',
      metadata,
      data: { identity, role: 'agent', tokenHash: hashToken(`bench-token-${identity}`), registeredAt: metadata.at },
    };
  });
  await store.append(AGENT_REGISTRY_STREAM, registrations, 'no_stream');
  summary.events += registrations.length;

  // 2. Messages, receipts and archives, issued in concurrent chunks.
  const unread = new Pool<Delivered>();
  const read = new Pool<Delivered>();
  let nextBroadcastAt = broadcastEvery > 0 ? summary.events + broadcastEvery : Infinity;
  const more = (pending: number) => summary.events + pending < target || summary.directMessages < minDirectMessages;
  while (more(0)) {
    const batch: Append[] = [];
    let batchEvents = 0;
    unread.settle();
    read.settle();
    while (batch.length < chunk && more(batchEvents)) {
      const roll = random();
      let append: Append;
      if (summary.events + batchEvents >= nextBroadcastAt) {
        append = broadcast(pick(identities), identities, body, meta, summary);
        nextBroadcastAt += broadcastEvery;
      } else if (roll < readShare && unread.settled > 0) {
        append = receipt(unread, random, meta, summary, read);
      } else if (roll < readShare + readShare * archiveShare && read.settled > 0) {
        append = archive(read, random, meta, summary);
      } else {
        const from = Math.floor(random() * agents);
        const to = (from + 1 + Math.floor(random() * (agents - 1))) % agents; // never the sender itself
        append = direct(identities[from], identities[to], body, meta, summary, unread);
      }
      batch.push(append);
      batchEvents += append.events.length;
    }
    await Promise.all(batch.map((a) => store.append(a.stream, a.events, a.expected)));
    summary.events += batchEvents;
    onProgress?.(summary.events);
  }
  return summary;
}

function messageEvent(
  from: string,
  to: string,
  recipients: string[],
  body: string,
  meta: (actor: string) => EventMetadata,
  index: number,
): { sent: NewEvent; fields: MessageSummaryFields; metadata: EventMetadata } {
  const metadata = meta(from);
  const messageId = deterministicMessageId(from, null, metadata.commandId);
  const fields: MessageSummaryFields = {
    messageId,
    from,
    to,
    subject: `Synthetic message ${index}`,
    priority: PRIORITY_CYCLE[index % PRIORITY_CYCLE.length],
    threadId: messageId,
    inReplyTo: null,
    tags: index % 4 === 0 ? ['bench'] : [],
    sentAt: metadata.at,
    wakeSuppressed: false,
    hasTask: false,
  };
  const sent: NewEvent = {
    eventId: deterministicEventId(metadata.commandId, 0),
    type: 'MessageSent',
    metadata,
    data: { ...fields, body, task: null, recipients, idempotencyKey: null, requestHash: 'synthetic' },
  };
  return { sent, fields, metadata };
}

function direct(
  from: string,
  to: string,
  body: string,
  meta: (actor: string) => EventMetadata,
  summary: SyntheticLogSummary,
  unread: Pool<Delivered>,
): Append {
  const { sent, fields } = messageEvent(from, to, [to], body, meta, summary.directMessages++);
  unread.add({ messageId: fields.messageId, recipient: to, priority: fields.priority, sentAt: fields.sentAt, revision: 0n });
  return { stream: messageStream(fields.messageId), events: [sent], expected: 'no_stream' };
}

function broadcast(
  from: string,
  identities: readonly string[],
  body: string,
  meta: (actor: string) => EventMetadata,
  summary: SyntheticLogSummary,
): Append {
  const audience = identities.filter((identity) => identity !== from);
  const { sent, fields, metadata } = messageEvent(from, 'AGENT:*', audience, body, meta, summary.broadcasts++);
  const { hasTask: _hasTask, ...rest } = fields;
  const deliveries: NewEvent[] = audience.map((recipient, index) => ({
    eventId: deterministicEventId(metadata.commandId, index + 1),
    type: 'BroadcastDelivered',
    metadata,
    data: { ...rest, recipient, hasTask: false, deliveredAt: metadata.at },
  }));
  // Broadcast receipts would need the stream's latest revision per reader; the synthetic log reads direct messages only.
  return { stream: messageStream(fields.messageId), events: [sent, ...deliveries], expected: 'no_stream' };
}

function receipt(
  unread: Pool<Delivered>,
  random: () => number,
  meta: (actor: string) => EventMetadata,
  summary: SyntheticLogSummary,
  read: Pool<Delivered>,
): Append {
  const target = unread.take(random);
  const metadata = meta(target.recipient);
  summary.reads++;
  read.add({ ...target, revision: target.revision + 1n });
  return {
    stream: messageStream(target.messageId),
    expected: target.revision,
    events: [
      {
        eventId: deterministicEventId(metadata.commandId, 0),
        type: 'ReceiptRead',
        metadata,
        data: {
          messageId: target.messageId,
          reader: target.recipient,
          readAt: metadata.at,
          priority: target.priority,
          sentAt: target.sentAt,
        },
      },
    ],
  };
}

function archive(
  read: Pool<Delivered>,
  random: () => number,
  meta: (actor: string) => EventMetadata,
  summary: SyntheticLogSummary,
): Append {
  const target = read.take(random);
  const metadata = meta(target.recipient);
  summary.archives++;
  return {
    stream: messageStream(target.messageId),
    expected: target.revision,
    events: [
      {
        eventId: deterministicEventId(metadata.commandId, 0),
        type: 'MessageArchived',
        metadata,
        data: {
          messageId: target.messageId,
          recipient: target.recipient,
          archivedAt: metadata.at,
          wasUnread: false,
          priority: target.priority,
          sentAt: target.sentAt,
        },
      },
    ],
  };
}
