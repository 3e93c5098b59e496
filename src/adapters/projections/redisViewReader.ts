/** Reads of the Redis views: pages of an inbox or outbox, exact counts, the agents list. */
import type { RedisClient } from './redisConnection';
import type { ListQuery } from '../../projections/listQuery';
import type { AgentView, HeartbeatCounts, ListedMessage, ViewPage } from '../../projections/projectionStore';
import type { InboxEntryFields, MessageSummary } from '../../projections/viewChanges';
import { padPosition, type RedisKeys } from './redisKeys';
import { escapeField, parseStoredValue } from './redisStoredValue';

/** An inbox entry (its fields) or an outbox entry (the sent message's summary). */
interface Found {
  position: bigint;
  fields: InboxEntryFields | MessageSummary;
  readAt: string | null;
  /** Set in a status=archived listing only. */
  archivedAt: string | null;
  seenAt: string | null;
}

function parseFound(value: string, readAt: string, archivedAt: string, seenAt: string): Found {
  const { position, json } = parseStoredValue(value);
  return {
    position,
    fields: JSON.parse(json) as Found['fields'],
    readAt: readAt === '' ? null : readAt,
    archivedAt: archivedAt === '' ? null : archivedAt,
    seenAt: seenAt === '' ? null : seenAt,
  };
}

export class RedisViewReader {
  /** At most this many entries are examined per script call while filtering. */
  constructor(
    private readonly client: RedisClient,
    private readonly keys: RedisKeys,
    private readonly scanBudget = 2000,
  ) {}

  async listMessages(prefix: string, identity: string, query: ListQuery): Promise<ViewPage> {
    const key = (name: Parameters<RedisKeys['agent']>[2]) => this.keys.agent(prefix, identity, name);
    const outbox = query.box === 'outbox';
    const source = outbox ? key('outbox') : query.status === 'unread' ? key('unread') : key('inbox');
    const before = query.before;
    const wanted = query.limit + 1;
    const found: Found[] = [];
    let upper = before === null ? '+' : `(${padPosition(before)}`;
    let unreadCount: number;
    for (;;) {
      const [unread, continuation, ...entries] = await this.client.mailboxList(
        source,
        outbox ? key('sent') : key('entries'),
        key('read'),
        key('archived'),
        key('unread'),
        key('seen'),
        query.box,
        query.status ?? '',
        upper,
        String(wanted - found.length),
        String(this.scanBudget),
        ...fieldFilters(query),
        ...(query.tags ?? []).map(escapeField),
      );
      unreadCount = Number(unread);
      for (let i = 0; i < entries.length; i += 4)
        found.push(parseFound(entries[i], entries[i + 1], entries[i + 2], entries[i + 3]));
      if (continuation === '' || found.length >= wanted) break;
      upper = continuation;
    }
    const page = found.slice(0, query.limit);
    // Outbox entries and direct messages carry their summary; broadcast deliveries find theirs with the sender.
    const carried = page.filter((entry) => 'recipientCount' in entry.fields);
    const summaries = await this.summaries(
      prefix,
      page.filter((entry) => !('recipientCount' in entry.fields)),
    );
    for (const entry of carried) summaries.set(entry.fields.messageId, entry.fields as MessageSummary);
    return {
      messages: page.map((entry) => listed(entry, summaries.get(entry.fields.messageId), outbox)),
      nextBefore: found.length > query.limit ? page[page.length - 1].position : null,
      unreadCount,
    };
  }

  /** Summaries live with their sender (one hash per sender); one HMGET per sender, auto-pipelined. */
  private async summaries(prefix: string, page: readonly Found[]): Promise<Map<string, MessageSummary>> {
    if (page.length === 0) return new Map();
    const bySender = new Map<string, string[]>();
    for (const { fields } of page) bySender.set(fields.from, [...(bySender.get(fields.from) ?? []), fields.messageId]);
    const result = new Map<string, MessageSummary>();
    await Promise.all(
      [...bySender].map(async ([sender, ids]) => {
        const values = await this.client.hmget(this.keys.agent(prefix, sender, 'sent'), ...ids);
        values.forEach((value, i) => {
          if (value !== null) result.set(ids[i], JSON.parse(parseStoredValue(value).json) as MessageSummary);
        });
      }),
    );
    return result;
  }

  /** The inbox counts (the task count is the task views': redisTaskViews.ts). */
  async counts(
    prefix: string,
    identity: string,
  ): Promise<Omit<HeartbeatCounts, 'tasksWaiting' | 'tasksWaitingSince' | 'repliesOwed' | 'nextReplyDueBy'>> {
    const key = (name: Parameters<RedisKeys['agent']>[2]) => this.keys.agent(prefix, identity, name);
    const [unread, low, normal, high, oldest, lastActivity, unseen] = await this.client.mailboxCounts(
      key('unread'),
      key('counts'),
      key('entries'),
    );
    return {
      identity,
      unread: Number(unread),
      unseen: Number(unseen),
      byPriority: { low: Number(low), normal: Number(normal), high: Number(high) },
      oldestUnreadAt: oldest === '' ? null : oldest,
      lastActivityAt: lastActivity === '' ? null : lastActivity,
    };
  }

  /** Registered agents and every identity with views, sorted. */
  async identities(prefix: string): Promise<string[]> {
    const [withViews, registered] = await Promise.all([
      this.client.smembers(this.keys.identities(prefix)),
      this.client.hkeys(this.keys.agents(prefix)),
    ]);
    return [...new Set([...withViews, ...registered])].sort();
  }

  /** One agent of `agents`, or undefined. */
  async agent(prefix: string, identity: string): Promise<AgentView | undefined> {
    const [json, retiredAt] = await Promise.all([
      this.client.hget(this.keys.agents(prefix), identity),
      this.client.hget(this.keys.retired(prefix), identity),
    ]);
    if (json === null) return undefined;
    const { role, registeredAt } = JSON.parse(json) as Pick<AgentView, 'role' | 'registeredAt'>;
    return { identity, role, registeredAt, retired: retiredAt !== null, retiredAt };
  }

  /** Whether `identity` is one of `identities`. */
  async hasIdentity(prefix: string, identity: string): Promise<boolean> {
    const [withViews, registered] = await Promise.all([
      this.client.sismember(this.keys.identities(prefix), identity),
      this.client.hexists(this.keys.agents(prefix), identity),
    ]);
    return withViews === 1 || registered === 1;
  }

  async agents(prefix: string): Promise<AgentView[]> {
    const [registered, retired] = await Promise.all([
      this.client.hgetall(this.keys.agents(prefix)),
      this.client.hgetall(this.keys.retired(prefix)),
    ]);
    return Object.entries(registered)
      .map(([identity, json]) => {
        const { role, registeredAt } = JSON.parse(json) as Pick<AgentView, 'role' | 'registeredAt'>;
        const retiredAt = retired[identity] ?? null;
        return { identity, role, registeredAt, retired: retiredAt !== null, retiredAt };
      })
      .sort((a, b) => a.identity.localeCompare(b.identity));
  }
}

/**
 * The list script's field filters, in its ARGV order (from, to, threadId,
 * priority): '-' when not filtered, else '=' and the escaped wanted value,
 * compared with the stored head's escaped field (see redisStoredValue.ts).
 */
function fieldFilters(query: ListQuery): string[] {
  return (['from', 'to', 'threadId', 'priority'] as const).map((field) => {
    const value = query[field];
    return value === undefined ? '-' : `=${escapeField(value)}`;
  });
}

/** As the memory store lists: the summary without recipientCount, the reader's receipt, the task when there is one. */
function listed(entry: Found, summary: MessageSummary | undefined, outbox: boolean): ListedMessage {
  const fields = entry.fields as InboxEntryFields;
  const { recipientCount: _count, task, ...rest } = summary ?? { ...fields, inReplyTo: null, task: null, recipientCount: 0 };
  // One object per message (pages are hot: fewer allocations, fewer GC pauses in the tail).
  const message = rest as ListedMessage;
  message.readAt = outbox ? null : entry.readAt;
  message.seenAt = outbox ? null : entry.seenAt;
  if (entry.archivedAt !== null) message.archivedAt = entry.archivedAt;
  if (task) message.task = task;
  return message;
}
