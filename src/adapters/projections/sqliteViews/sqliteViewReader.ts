/**
 * Reads one generation of the SQLite views (schema: sqliteViewsSchema.ts).
 * A listing walks one range of the owner's entries (an index or the primary
 * key: sqliteViewsSchema.ts says which), newest first from its `before` bound,
 * checks the remaining filters on each row and stops after `limit + 1`
 * matches: it never reads another owner's rows. Counts are read from the
 * counter row.
 */
import type Database from 'better-sqlite3';
import type { Priority, Role } from '../../../events/types';
import type { ListQuery } from '../../../projections/listQuery';
import type { AgentView, HeartbeatCounts, ListedMessage, UnreadCount, ViewPage } from '../../../projections/projectionStore';
import { waitingSinceOf, type TaskView } from '../../../projections/readModel/taskView';
import type { TaskListQuery, TaskViewPage } from '../../../projections/readModel/taskViewsMemory';
import { SqliteLedgerReader } from './sqliteLedgerReader';

/**
 * A listed row as one JSON array (json_array in SQL): one string per row crosses from SQLite to JavaScript
 * instead of fifteen values, which costs about a third less CPU per page. Tags arrive parsed.
 */
type ListedRow = [
  position: number,
  readAt: string | null,
  seenAt: string | null,
  archivedAt: string | null,
  recipientList: number,
  messageId: string,
  sender: string,
  recipient: string,
  subject: string,
  priority: Priority,
  threadId: string,
  inReplyTo: string | null,
  tags: string[],
  sentAt: string,
  task: string | null, // as stored (JSON text): a task's data may nest deeper than SQLite's JSON functions go
];

interface CountsRow {
  unread_low: number;
  unread_normal: number;
  unread_high: number;
  last_activity_at: string | null;
  tasks_waiting: number;
  tasks_waiting_since: string | null;
  unseen: number;
  replies_owed: number;
}

/** Positions are stored as integers; larger than 2^53 they would lose digits (as in sortedPositions.ts). */
const NO_BOUND = Number.MAX_SAFE_INTEGER;
/** The entries' boxes (sqliteViewsSchema.ts). */
const [INBOX, OUTBOX, ARCHIVE] = [0, 1, 2];
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
    const rows = (statement.all(...params) as Array<{ j: string }>).map((row) => JSON.parse(row.j) as ListedRow);
    const hasMore = rows.length > query.limit;
    const page = hasMore ? rows.slice(0, query.limit) : rows;
    return {
      messages: page.map((row) => listed(row, query.box, query.status === 'archived')),
      nextBefore: hasMore ? BigInt(page[page.length - 1][0]) : null,
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
      tasksWaitingSince: row?.tasks_waiting_since ? waitingSinceOf(row.tasks_waiting_since) : null,
      ...this.ledger.repliesOwed(identity, row?.replies_owed ?? 0),
    };
  }

  /** Every identity with views, every agent, every identity some task waits on. */
  heartbeatIdentities(): string[] {
    return (this.s.heartbeatIdentities.all() as Array<{ identity: string }>).map((row) => row.identity).sort(); // JS order, as memory
  }

  /** Whether `identity` is one of heartbeatIdentities. */
  hasHeartbeat(identity: string): boolean {
    return this.s.hasHeartbeat.get(identity, identity) !== undefined;
  }

  agent(identity: string): AgentView | undefined {
    const row = this.s.agent.get(identity) as AgentRow | undefined;
    return row ? agentOf(row) : undefined;
  }

  agents(): AgentView[] {
    const agents = (this.s.agents.all() as AgentRow[]).map(agentOf);
    return agents.sort((a, b) => a.identity.localeCompare(b.identity)); // the memory store's order (locale, not binary)
  }

  task(taskId: string): TaskView | undefined {
    const row = this.s.task.get(taskId) as { record: string } | undefined;
    return row ? (JSON.parse(row.record) as TaskView) : undefined;
  }

  taskOfHistoryLine(eventId: string): string | null {
    const row = this.s.taskOfLine.get(eventId) as { task_id: string } | undefined;
    return row?.task_id ?? null;
  }

  /** A page of the history lines, by event id; `after`: the last id of the previous page. */
  historyLines(after: string | null, limit: number): { lines: Array<{ eventId: string; taskId: string }>; next: string | null } {
    const rows = this.s.linesAfter.all(after ?? '', limit) as Array<{ event_id: string; task_id: string }>;
    return {
      lines: rows.map((row) => ({ eventId: row.event_id, taskId: row.task_id })),
      next: rows.length < limit ? null : rows[rows.length - 1].event_id,
    };
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

  dueTasks(now: string, limit: number, after?: string): TaskView[] {
    const from = after === undefined ? Number.MIN_SAFE_INTEGER : Date.parse(after);
    const rows = this.s.due.all(from, Date.parse(now), limit) as Array<{ record: string }>;
    return rows.map((row) => JSON.parse(row.record) as TaskView);
  }
}

function listed(row: ListedRow, box: ListQuery['box'], archived: boolean): ListedMessage {
  const [, readAt, seenAt, archivedAt, recipientList, messageId, sender, recipient, subject, priority, threadId] = row;
  const [inReplyTo, tags, sentAt, task] = [row[11], row[12], row[13], row[14]];
  const message: ListedMessage = {
    messageId,
    from: sender,
    to: recipientList === 1 ? (JSON.parse(recipient) as string[]) : recipient,
    subject,
    priority,
    threadId,
    inReplyTo,
    tags,
    sentAt,
    readAt: box === 'inbox' ? readAt : null,
    seenAt: box === 'inbox' ? seenAt : null,
  };
  if (archived) message.archivedAt = archivedAt!; // null for an outbox entry, as the memory store lists it
  if (task !== null) message.task = JSON.parse(task) as ListedMessage['task'];
  return message;
}

/**
 * The listing's SQL: the range it walks (sqliteViewsSchema.ts says which), named with INDEXED BY where it is an
 * index so that SQLite can never fall back to a scan; every other filter is checked on each row of that range.
 */
function listingSql(g: string, identity: string, query: ListQuery): { sql: string; params: unknown[] } {
  const index = indexFor(g, query);
  const from = index.name === null ? `${g}_entries e` : `${g}_entries e INDEXED BY ${index.name}`;
  const where = ['e.owner = ?', ...index.where, 'e.position < ?'];
  const params: unknown[] = [identity, ...index.params, bound(query)];
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
      `(e.recipient = ? OR EXISTS (SELECT 1 FROM ${g}_entry_recipients r WHERE r.owner = e.owner AND r.box = ? ` +
        `AND r.recipient = ? AND r.position = e.position))`,
    );
    params.push(query.to, query.box === 'inbox' ? 0 : 1, query.to); // an archived entry's recipients stay under the inbox
  }
  for (const tag of query.tags ?? []) {
    where.push(`e.tags IS NOT NULL AND EXISTS (SELECT 1 FROM json_each(e.tags) WHERE value = ?)`);
    params.push(tag);
  }
  params.push(query.limit + 1);
  const sql =
    `SELECT json_array(e.position, e.read_at, e.seen_at, e.archived_at, m.recipient_list, m.message_id, m.sender, m.recipient, ` +
    `m.subject, m.priority, m.thread_id, m.in_reply_to, json(m.tags), m.sent_at, m.task) AS j FROM ${from} JOIN ${g}_messages m ON m.msg = e.msg ` +
    `WHERE ${where.join(' AND ')} ORDER BY e.position DESC LIMIT ?`;
  return { sql, params };
}

const bound = (query: ListQuery): number => (query.before === null ? NO_BOUND : Number(query.before));

/**
 * The range a listing walks: the inbox's thread or unread partial index, or (null) the primary key range
 * (owner, box) of the inbox, the archive or the outbox, which SQLite picks by itself (it cannot be named).
 */
function indexFor(g: string, query: ListQuery): { name: string | null; where: string[]; params: unknown[] } {
  if (query.box === 'outbox') return { name: null, where: ['e.box = ?'], params: [OUTBOX] };
  if (query.status === 'archived') return { name: null, where: ['e.box = ?'], params: [ARCHIVE] };
  if (query.threadId !== undefined)
    return { name: `${g}_entries_thread`, where: ['e.box = 0', 'e.thread_id = ?'], params: [query.threadId] };
  if (query.status === 'unread') return { name: `${g}_entries_unread`, where: ['e.box = 0', 'e.read_at IS NULL'], params: [] };
  return { name: null, where: ['e.box = ?'], params: [INBOX] }; // all, read
}

interface AgentRow {
  identity: string;
  role: Role;
  registered_at: string;
  retired: number;
  retired_at: string | null;
}

function agentOf(row: AgentRow): AgentView {
  return {
    identity: row.identity,
    role: row.role,
    registeredAt: row.registered_at,
    retired: row.retired === 1,
    retiredAt: row.retired_at,
  };
}

function prepareReader(db: Database.Database, g: string) {
  return {
    counts: db.prepare(
      `SELECT unread_low, unread_normal, unread_high, last_activity_at, tasks_waiting, tasks_waiting_since, unseen,
         replies_owed
       FROM ${g}_identities WHERE identity = ?`,
    ),
    oldestUnread: db.prepare(
      `SELECT m.sent_at FROM ${g}_entries e INDEXED BY ${g}_entries_unread JOIN ${g}_messages m ON m.msg = e.msg
       WHERE e.owner = ? AND e.box = 0 AND e.read_at IS NULL ORDER BY e.position LIMIT 1`,
    ),
    heartbeatIdentities: db.prepare(
      `SELECT identity FROM ${g}_identities WHERE has_views = 1 OR tasks_waiting <> 0
       UNION SELECT identity FROM ${g}_agents`,
    ),
    agents: db.prepare(`SELECT identity, role, registered_at, retired, retired_at FROM ${g}_agents`),
    agent: db.prepare(`SELECT identity, role, registered_at, retired, retired_at FROM ${g}_agents WHERE identity = ?`),
    hasHeartbeat: db.prepare(
      `SELECT 1 FROM ${g}_identities WHERE identity = ? AND (has_views = 1 OR tasks_waiting <> 0)
       UNION ALL SELECT 1 FROM ${g}_agents WHERE identity = ? LIMIT 1`,
    ),
    task: db.prepare(`SELECT record FROM ${g}_tasks WHERE task_id = ?`),
    taskOfLine: db.prepare(`SELECT task_id FROM ${g}_task_lines WHERE event_id = ?`),
    linesAfter: db.prepare(`SELECT event_id, task_id FROM ${g}_task_lines WHERE event_id > ? ORDER BY event_id LIMIT ?`),
    taskList: db.prepare(
      `SELECT t.record, t.state, l.position FROM ${g}_task_lists l JOIN ${g}_tasks t ON t.task_id = l.task_id
       WHERE l.list = ? AND l.identity = ? AND l.position < ? ORDER BY l.position DESC LIMIT ?`,
    ),
    due: db.prepare(
      `SELECT record FROM ${g}_tasks INDEXED BY ${g}_tasks_due WHERE due_at IS NOT NULL AND due_at > ? AND due_at <= ?
       ORDER BY due_at, task_id LIMIT ?`,
    ),
  };
}
