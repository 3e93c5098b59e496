/**
 * The bulk path of a blue/green rebuild: a fresh generation that nobody reads
 * or writes yet is built by the pure read model (readModel/applyEvents) with
 * a lean lookup kept here, and its changes are written as pipelined plain
 * commands, the checkpoint set once per chunk after the chunk's writes (one
 * connection keeps them in order). No per-event checkpoint compare and no
 * script: the rules run in Node, once, and Redis only stores.
 *
 * The keys and stored values are those the apply script writes (redisKeys.ts,
 * redisStoredValue.ts), so the live projector continues the generation after
 * the switch; the differential test checks both paths against the pure model.
 * The lookup costs memory for the rebuild's duration (a few dozen bytes per
 * inbox entry); a crash mid-rebuild leaves a generation that the next rebuild
 * drops (RedisGenerations.create).
 */
import type { ChainableCommander, Redis } from 'ioredis';
import type { Priority } from '../../commands/messageFields';
import { applyEvents } from '../../projections/readModel/applyEvents';
import type { Role } from '../../commands/roles';
import type { EntryState, ReadModelStorage } from '../../projections/readModel/view';
import type { InboxEntryFields, MessageSummary, ProjectedEvent } from '../../projections/viewChanges';
import { padPosition, type AgentKeyName, type RedisKeys } from './redisKeys';
import { storedValue } from './redisStoredValue';

interface BulkEntry extends EntryState {
  /** Its member in the inbox and unread sets: `<position>:<messageId>`. */
  readonly member: string;
  readAt: string | null;
  archivedAt: string | null;
}

class BulkAgent {
  readonly entries = new Map<string, BulkEntry>();
  readonly outbox = new Set<string>();
  unread = 0;
  lastActivityAt: string | null = null;
}

export class RedisBulkWriter implements ReadModelStorage {
  private readonly agents = new Map<string, BulkAgent>();
  private readonly registered = new Set<string>();
  private lastPosition: bigint | null = null;
  /** The commands of the chunk being planned, and its counters (one HINCRBY / HSET per agent per chunk). */
  private pipeline: ChainableCommander | null = null;
  private readonly unreadDeltas = new Map<string, Record<Priority, number>>();
  /**
   * A chunk's writes per key, sent as one variadic command per key at its end (ioredis spends more per
   * command than Redis does: a command per change measured ~4x the Node CPU of the apply script).
   * Within a chunk a member is added to a set before it is removed (adds are sent first).
   */
  private readonly hashWrites = new Map<string, string[]>();
  private readonly setAdds = new Map<string, string[]>();
  private readonly setRemoves = new Map<string, string[]>();
  private readonly activity = new Map<string, string>();
  /** The last summary recorded: a direct message's inbox entry (same event) carries it whole, as the script stores it. */
  private summary: { messageId: string; pos: string; json: string } | null = null;

  constructor(private readonly client: Redis, private readonly keys: RedisKeys, private readonly prefix: string,
    private readonly eventsPerChunk: number) {}

  /**
   * Plans every chunk now (in call order) and sends it at once; resolves when
   * Redis has applied them. Events at or below what this writer applied change nothing.
   */
  async applyBatch(batch: readonly ProjectedEvent[]): Promise<void> {
    const sent: Array<Promise<unknown>> = [];
    for (let i = 0; i < batch.length; i += this.eventsPerChunk) {
      const before = this.lastPosition;
      const pipeline = (this.pipeline = this.client.pipeline());
      this.lastPosition = applyEvents(this, batch.slice(i, i + this.eventsPerChunk), this.lastPosition);
      this.flushChunk(pipeline);
      this.pipeline = null;
      if (this.lastPosition === before) continue;
      pipeline.set(this.keys.checkpoint(this.prefix), padPosition(this.lastPosition!));
      sent.push(pipeline.exec().then(failOnError));
    }
    await Promise.all(sent);
  }

  // The lookup the rules read (ReadModelView).
  hasViews(identity: string): boolean {
    return this.agents.has(identity);
  }

  entry(recipient: string, messageId: string): EntryState | undefined {
    return this.agents.get(recipient)?.entries.get(messageId);
  }

  hasOutboxEntry(sender: string, messageId: string): boolean {
    return this.agents.get(sender)?.outbox.has(messageId) ?? false;
  }

  isRegistered(identity: string): boolean {
    return this.registered.has(identity);
  }

  lastActivityAt(identity: string): string | null {
    return this.agents.get(identity)?.lastActivityAt ?? null;
  }

  unreadTotal(identity: string): number {
    return this.agents.get(identity)?.unread ?? 0;
  }

  // The changes the read model decided (ChangeSink): the lookup here, the commands into the chunk's pipeline.
  agentRegistered(identity: string, role: Role, registeredAt: string): void {
    this.registered.add(identity);
    this.pipeline!.hset(this.keys.agents(this.prefix), identity, JSON.stringify({ role, registeredAt }));
    this.pipeline!.hdel(this.keys.retired(this.prefix), identity);
  }

  agentRetired(identity: string, retiredAt: string): void {
    this.pipeline!.hset(this.keys.retired(this.prefix), identity, retiredAt);
  }

  messageRecorded(position: bigint, summary: MessageSummary): void {
    const pos = padPosition(position);
    const json = JSON.stringify(summary);
    this.summary = { messageId: summary.messageId, pos, json };
    buffer(this.hashWrites, this.key(summary.from, 'sent'), summary.messageId, storedValue(pos, summary, json));
  }

  identityHasViews(identity: string): void {
    this.agents.set(identity, new BulkAgent());
    this.pipeline!.sadd(this.keys.identities(this.prefix), identity);
  }

  outboxEntryAdded(sender: string, position: bigint, entry: InboxEntryFields): void {
    this.agent(sender).outbox.add(entry.messageId);
    buffer(this.setAdds, this.key(sender, 'outbox'), '0', `${padPosition(position)}:${entry.messageId}`);
  }

  inboxEntryAdded(recipient: string, position: bigint, entry: InboxEntryFields): void {
    const pos = padPosition(position);
    const same = this.summary !== null && this.summary.messageId === entry.messageId && this.summary.pos === pos;
    const json = same ? this.summary!.json : JSON.stringify(entry);
    const member = `${pos}:${entry.messageId}`;
    this.agent(recipient).entries.set(entry.messageId,
      { position: Number(position), member, priority: entry.priority, readAt: null, archivedAt: null });
    buffer(this.hashWrites, this.key(recipient, 'entries'), entry.messageId, storedValue(pos, entry, json));
    buffer(this.setAdds, this.key(recipient, 'inbox'), '0', member);
    buffer(this.setAdds, this.key(recipient, 'unread'), '0', member);
  }

  unreadMoved(identity: string, priority: Priority, by: 1 | -1): void {
    this.agent(identity).unread += by;
    let deltas = this.unreadDeltas.get(identity);
    if (!deltas) this.unreadDeltas.set(identity, (deltas = { low: 0, normal: 0, high: 0 }));
    deltas[priority] += by;
  }

  entryRead(recipient: string, messageId: string, readAt: string): void {
    const entry = this.agent(recipient).entries.get(messageId)!;
    entry.readAt = readAt;
    buffer(this.hashWrites, this.key(recipient, 'read'), messageId, readAt);
    buffer(this.setRemoves, this.key(recipient, 'unread'), entry.member);
  }

  entryArchived(recipient: string, messageId: string, archivedAt: string): void {
    const entry = this.agent(recipient).entries.get(messageId)!;
    entry.archivedAt = archivedAt;
    buffer(this.hashWrites, this.key(recipient, 'archived'), messageId, archivedAt);
    buffer(this.setRemoves, this.key(recipient, 'unread'), entry.member);
  }

  lastActivityMoved(identity: string, at: string): void {
    this.agent(identity).lastActivityAt = at;
    this.activity.set(identity, at);
  }

  private key(identity: string, name: AgentKeyName): string {
    return this.keys.agent(this.prefix, identity, name);
  }

  private flushChunk(p: ChainableCommander): void {
    for (const [key, pairs] of this.hashWrites) p.call('HSET', key, ...pairs);
    for (const [key, pairs] of this.setAdds) p.call('ZADD', key, ...pairs);
    for (const [key, members] of this.setRemoves) p.call('ZREM', key, ...members);
    this.hashWrites.clear();
    this.setAdds.clear();
    this.setRemoves.clear();
    for (const [identity, deltas] of this.unreadDeltas) {
      for (const priority of ['low', 'normal', 'high'] as const) {
        if (deltas[priority] !== 0) p.hincrby(this.keys.agent(this.prefix, identity, 'counts'), priority, deltas[priority]);
      }
    }
    for (const [identity, at] of this.activity) p.hset(this.keys.agent(this.prefix, identity, 'counts'), 'lastActivityAt', at);
    this.unreadDeltas.clear();
    this.activity.clear();
  }

  private agent(identity: string): BulkAgent {
    let agent = this.agents.get(identity);
    if (!agent) this.agents.set(identity, (agent = new BulkAgent()));
    return agent;
  }
}

function buffer(writes: Map<string, string[]>, key: string, ...items: string[]): void {
  const pending = writes.get(key);
  if (pending) for (const item of items) pending.push(item);
  else writes.set(key, items);
}

function failOnError(results: Array<[Error | null, unknown]> | null): void {
  const failed = results?.find(([error]) => error !== null);
  if (failed) throw failed[0]!;
}
