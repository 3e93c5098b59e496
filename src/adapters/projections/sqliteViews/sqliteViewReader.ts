/**
 * Reads one generation of the SQLite views (schema: sqliteViewsSchema.ts).
 * A listing walks the one index that serves its most selective filter, newest
 * first from its `before` bound, checks the remaining filters on each row and
 * stops after `limit + 1` rows: pages cost what they return, whatever the
 * inbox holds. Counts are read from the counter row.
 */
import type Database from 'libsql';
import type { Priority, Role } from '../../../events/types';
import type { ListQuery } from '../../../projections/listQuery';
import type { AgentView, HeartbeatCounts, ListedMessage, UnreadCount, ViewPage } from '../../../projections/projectionStore';
import type { TaskView } from '../../../projections/readModel/taskView';
import type { TaskListQuery, TaskViewPage } from '../../../projections/readModel/taskViewsMemory';
import { SqliteLedgerReader } from './sqliteLedgerReader';

interface ListedRow {
  position: number;
  read_at: string | null;
  seen_at: string | null;
  archived_at: string | null;
  recipient_list: number;
  message_id: string;
  sender: string;
  recipient: string;
  subject: string;
  priority: Priority;
  thread_id: string;
  in_reply_to: string | null;
  tags: string;
  sent_at: string;
  task: string | null;
}

interface CountsRow {
  unread_low: number;
  unread_normal: number;
  unread_high: number;
  last_activity_at: string | null;
  tasks_waiting: number;
  unseen: number;
  replies_owed: number;
}

/** Positions are stored as integers; larger than 2^53 they would lose digits (as in sortedPositions.ts). */
const NO_BOUND = Number.MAX_SAFE_INTEGER;
/** Task list rows read per statement. */
const TASK_PAGE = 200;
/** Statements kept per listing shape (a shape is which filters are set: a few dozen at most in practice). */
const MAX_SHAPES = 256;

export class SqliteViewReader {
  private readonly s: ReturnType<typeof prepareReader>;
  private readonly shapes = new Map<string, Database.Statement>();
  /** The delivery ledger's reads (issue 13). */
  readonly ledger: SqliteLedgerReader;

  constructor(
    private readonly db: Database.Database,
    private readonly g: string,
  ) {
    this.s = prepareReader(db, g);
    this.ledger = new SqliteLedgerReader(db, g);
  }

  listMessages(identity: string, query: ListQuery): ViewPage {
    const unreadCount = this.unreadCount(identity).unread;
    // An outbox entry's sender is its owner; a read outbox entry does not exist (as in the memory store).
    if (query.box === 'outbox' && ((query.from !== undefined && query.from !== identity) || query.status === 'read'))
      return { messages: [], nextBefore: null, unreadCount };
    const { sql, params } = listingSql(this.g, identity, query);
    let statement = this.shapes.get(sql);
    if (statement === undefined) {
      if (this.shapes.size >= MAX_SHAPES) this.shapes.clear();
      statement = this.db.prepare(sql);
      this.shapes.set(sql, statement);
    }
    const rows = statement.all(...params) as ListedRow[];
    const hasMore = rows.length > query.limit;
    const page = hasMore ? rows.slice(0, query.limit) : rows;
    return {
      messages: page.map((row) => listed(row, query.box, query.status === 'archived')),
      nextBefore: hasMore ? BigInt(page[page.length - 1].position) : null,
      unreadCount,
    };
  }

  unreadCount(identity: string): UnreadCount {
    const row = this.s.counts.get(identity) as CountsRow | undefined;
    if (!row) return { unread: 0, unseen: 0, byPriority: { low: 0, normal: 0, high: 0 } };
    return {
      unread: row.unread_low + row.unread_normal + row.unread_high,
      unseen: row.unseen,
      byPriority: { low: row.unread_low, normal: row.unread_normal, high: row.unread_high },
    };
  }

  heartbeat(identity: string): HeartbeatCounts {
    const row = this.s.counts.get(identity) as CountsRow | undefined;
    const oldest = row ? (this.s.oldestUnread.get(identity) as { sent_at: string } | undefined) : undefined;
    return {
      identity,
      ...this.unreadCount(identity),
      oldestUnreadAt: oldest?.sent_at ?? null,
      lastActivityAt: row?.last_activity_at ?? null,
      tasksWaiting: row?.tasks_waiting ?? 0,
      ...this.ledger.repliesOwed(identity, row?.replies_owed ?? 0),
    };
  }

  /** Every identity with views, every agent, every identity some task waits on. */
  heartbeatIdentities(): string[] {
    return (this.s.heartbeatIdentities.all() as Array<{ identity: string }>).map((row) => row.identity).sort(); // JS order, as memory
  }

  agents(): AgentView[] {
    const rows = this.s.agents.all() as Array<{
      identity: string;
      role: Role;
      registered_at: string;
      retired: number;
      retired_at: string | null;
    }>;
    const agents = rows.map((row) => ({
      identity: row.identity,
      role: row.role,
      registeredAt: row.registered_at,
      retired: row.retired === 1,
      retiredAt: row.retired_at,
    }));
    return agents.sort((a, b) => a.identity.localeCompare(b.identity)); // the memory store's order (locale, not binary)
  }

  task(taskId: string): TaskView | undefined {
    const row = this.s.task.get(taskId) as { record: string } | undefined;
    return row ? (JSON.parse(row.record) as TaskView) : undefined;
  }

  /**
   * One task list, newest first; tasks in other states are skipped by the state check on each row. Rows are read
   * in pages (a statement is never left half-read: an open read would hold its snapshot and keep the WAL growing).
   */
  listTasks(identity: string, query: TaskListQuery): TaskViewPage {
    const states = query.states && query.states.length > 0 ? new Set<string>(query.states) : null;
    const tasks: TaskView[] = [];
    let bound = query.before ?? NO_BOUND;
    for (;;) {
      const rows = this.s.taskList.all(query.list, identity, bound, TASK_PAGE) as Array<{
        record: string;
        state: string;
        position: number;
      }>;
      for (const row of rows) {
        if (states && !states.has(row.state)) continue;
        if (tasks.length === query.limit) return { tasks, nextBefore: tasks[tasks.length - 1].position };
        tasks.push(JSON.parse(row.record) as TaskView);
      }
      if (rows.length < TASK_PAGE) return { tasks, nextBefore: null };
      bound = rows[rows.length - 1].position;
    }
  }

  dueTasks(now: string, limit: number): TaskView[] {
    return (this.s.due.all(Date.parse(now), limit) as Array<{ record: string }>).map((row) => JSON.parse(row.record) as TaskView);
  }
}

function listed(row: ListedRow, box: ListQuery['box'], archived: boolean): ListedMessage {
  const message: ListedMessage = {
    messageId: row.message_id,
    from: row.sender,
    to: row.recipient_list === 1 ? (JSON.parse(row.recipient) as string[]) : row.recipient,
    subject: row.subject,
    priority: row.priority,
    threadId: row.thread_id,
    inReplyTo: row.in_reply_to,
    tags: JSON.parse(row.tags) as string[],
    sentAt: row.sent_at,
    readAt: box === 'inbox' ? row.read_at : null,
    seenAt: box === 'inbox' ? row.seen_at : null,
  };
  if (archived) message.archivedAt = row.archived_at!; // null for an outbox entry, as the memory store lists it
  if (row.task !== null) message.task = JSON.parse(row.task) as ListedMessage['task'];
  return message;
}

/**
 * The listing's SQL: the index of its most selective filter (tags, thread, from, to, priority, then the
 * status's partial index), named with INDEXED BY so that SQLite can never fall back to a scan.
 */
function listingSql(g: string, identity: string, query: ListQuery): { sql: string; params: unknown[] } {
  const box = query.box === 'inbox' ? 0 : 1;
  const where: string[] = [];
  const params: unknown[] = [];
  let from: string;
  const [firstTag, ...otherTags] = query.tags ?? [];
  if (firstTag !== undefined) {
    from = `${g}_entry_tags t JOIN ${g}_entries e ON e.owner = t.owner AND e.box = t.box AND e.position = t.position`;
    where.push('t.owner = ?', 't.box = ?', 't.tag = ?', 't.position < ?');
    params.push(identity, box, firstTag, bound(query));
  } else if (query.to !== undefined && query.threadId === undefined && query.from === undefined) {
    // Sent to the identity alone, or with it in a list: both index ranges, merged by position.
    from =
      `(SELECT position AS p FROM ${g}_entries INDEXED BY ${g}_entries_to WHERE owner = ? AND box = ? AND recipient = ? AND position < ? ` +
      `UNION ALL SELECT position FROM ${g}_entry_recipients WHERE owner = ? AND box = ? AND recipient = ? AND position < ?) u ` +
      `JOIN ${g}_entries e ON e.owner = ? AND e.box = ? AND e.position = u.p`;
    params.push(identity, box, query.to, bound(query), identity, box, query.to, bound(query), identity, box);
    where.push('e.owner = ?');
    params.push(identity);
  } else {
    const index = indexFor(g, query);
    from = index.name === null ? `${g}_entries e` : `${g}_entries e INDEXED BY ${index.name}`;
    where.push('e.owner = ?', ...index.where, 'e.position < ?');
    params.push(identity, ...index.params, bound(query));
  }
  if (box === 0) where.push('e.box = 0', query.status === 'archived' ? 'e.archived_at IS NOT NULL' : 'e.archived_at IS NULL');
  else where.push('e.box = 1');
  if (query.status === 'unread') where.push('e.read_at IS NULL');
  if (query.status === 'read') where.push('e.read_at IS NOT NULL');
  for (const [column, value] of [
    ['sender', query.from],
    ['thread_id', query.threadId],
    ['priority', query.priority],
  ] as const) {
    if (value === undefined) continue;
    where.push(`e.${column} = ?`);
    params.push(value);
  }
  if (query.to !== undefined) {
    where.push(
      `(e.recipient = ? OR EXISTS (SELECT 1 FROM ${g}_entry_recipients r WHERE r.owner = e.owner AND r.box = e.box ` +
        `AND r.recipient = ? AND r.position = e.position))`,
    );
    params.push(query.to, query.to);
  }
  for (const tag of otherTags) {
    where.push(
      `EXISTS (SELECT 1 FROM ${g}_entry_tags o WHERE o.owner = e.owner AND o.box = e.box AND o.tag = ? AND o.position = e.position)`,
    );
    params.push(tag);
  }
  params.push(query.limit + 1);
  const sql =
    `SELECT e.position, e.read_at, e.seen_at, e.archived_at, m.recipient_list, m.message_id, m.sender, m.recipient, m.subject, m.priority, m.thread_id, m.in_reply_to, ` +
    `m.tags, m.sent_at, m.task FROM ${from} JOIN ${g}_messages m ON m.msg = e.msg ` +
    `WHERE ${where.join(' AND ')} ORDER BY e.position DESC LIMIT ?`;
  return { sql, params };
}

const bound = (query: ListQuery): number => (query.before === null ? NO_BOUND : Number(query.before));

/** null: the primary key (owner, box, position), which SQLite picks by itself (it cannot be named). */
function indexFor(g: string, query: ListQuery): { name: string | null; where: string[]; params: unknown[] } {
  const box = query.box === 'inbox' ? 0 : 1;
  const byField = (suffix: string, column: string, value: string) => ({
    name: `${g}_entries_${suffix}`,
    where: ['e.box = ?', `e.${column} = ?`],
    params: [box, value],
  });
  if (query.threadId !== undefined) return byField('thread', 'thread_id', query.threadId);
  if (query.from !== undefined) return byField('from', 'sender', query.from);
  if (query.box === 'inbox') {
    const partial =
      query.status === 'unread'
        ? 'unread'
        : query.status === 'read'
          ? 'read'
          : query.status === 'archived'
            ? 'archived'
            : 'inbox';
    if (query.priority === undefined || partial === 'unread')
      return { name: `${g}_entries_${partial}`, where: partialWhere(partial), params: [] };
  }
  if (query.priority !== undefined) return byField('priority', 'priority', query.priority);
  return { name: null, where: ['e.box = ?'], params: [box] };
}

/** The partial index's own condition, word for word: SQLite uses a partial index only when the query implies it. */
function partialWhere(partial: 'unread' | 'read' | 'archived' | 'inbox'): string[] {
  if (partial === 'archived') return ['e.box = 0', 'e.archived_at IS NOT NULL'];
  if (partial === 'unread') return ['e.box = 0', 'e.archived_at IS NULL', 'e.read_at IS NULL'];
  if (partial === 'read') return ['e.box = 0', 'e.archived_at IS NULL', 'e.read_at IS NOT NULL'];
  return ['e.box = 0', 'e.archived_at IS NULL'];
}

function prepareReader(db: Database.Database, g: string) {
  return {
    counts: db.prepare(
      `SELECT unread_low, unread_normal, unread_high, last_activity_at, tasks_waiting, unseen, replies_owed
       FROM ${g}_identities WHERE identity = ?`,
    ),
    oldestUnread: db.prepare(
      `SELECT m.sent_at FROM ${g}_entries e INDEXED BY ${g}_entries_unread JOIN ${g}_messages m ON m.msg = e.msg
       WHERE e.owner = ? AND e.box = 0 AND e.archived_at IS NULL AND e.read_at IS NULL ORDER BY e.position LIMIT 1`,
    ),
    heartbeatIdentities: db.prepare(
      `SELECT identity FROM ${g}_identities WHERE has_views = 1 OR tasks_waiting <> 0
       UNION SELECT identity FROM ${g}_agents`,
    ),
    agents: db.prepare(`SELECT identity, role, registered_at, retired, retired_at FROM ${g}_agents`),
    task: db.prepare(`SELECT record FROM ${g}_tasks WHERE task_id = ?`),
    taskList: db.prepare(
      `SELECT t.record, t.state, l.position FROM ${g}_task_lists l JOIN ${g}_tasks t ON t.task_id = l.task_id
       WHERE l.list = ? AND l.identity = ? AND l.position < ? ORDER BY l.position DESC LIMIT ?`,
    ),
    due: db.prepare(
      `SELECT record FROM ${g}_tasks INDEXED BY ${g}_tasks_due WHERE due_at IS NOT NULL AND due_at <= ? ORDER BY due_at, task_id LIMIT ?`,
    ),
  };
}
