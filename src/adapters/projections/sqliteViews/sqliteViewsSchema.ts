/**
 * The tables of the SQLite views (sqliteProjectionStore.ts). One file holds
 * every generation (blue/green): a generation is a set of tables named
 * `<generation>_<table>`, and `views_meta` names the active one. Storage only:
 * what goes in, and when, is decided by the read model's rules.
 *
 * An entry is one row of entries, clustered WITHOUT ROWID by (owner, box, position), box 0 the inbox, 1 the
 * outbox, 2 the archive (an inbox entry moves to box 2 when archived and back when unarchived): each box of an
 * owner is one contiguous range, read newest first. Each more index is one more B-tree leaf dirtied per entry
 * (with 1,000 owners, a different leaf each time), so only the hot listings have one:
 * - unread: partial index (owner, position) over unread inbox entries (the hot listing, the heartbeat's oldest
 *   unread);
 * - threadId in the inbox (mark-all-read by thread, the MCP's thread narrowing): (owner, thread_id, position);
 * - the inbox (status all, and read), the archive and the outbox: the primary key range (owner, box) itself.
 * Every other filter walks: from, to, priority and tags, threadId in the archive or the outbox, and status=read
 * are checked on each row of the range above, newest first from `before`, and the walk stops at `limit + 1`
 * matches. So a page reads at most the owner's own entries in that box below `before` (all of them only when
 * fewer than `limit` match): never another owner's rows, never the table.
 * - tags: the entry's tags in its row (JSON, NULL when none), checked on the row;
 * - to: a message sent to a list is found by entry_recipients (owner, box, recipient, position), one row
 *   per listed recipient (entries.recipient then holds the list as JSON, which equals no identity); an
 *   archived entry's rows stay under box 0.
 * An entry is found by its message through entries_msg (msg, owner, box): message first, so a new message's
 * entries are appended at the index's right edge (one leaf), not spread over every owner's part of it.
 * Counts come from the identities row (counters moved by the rules), never COUNT(*).
 *
 * The delivery ledger (issue 13): one ledgers row per message (header, a count per stage, the unwoken and
 * reply-due marks, each with a partial index in time order), ledger_rows (message, recipient) with each
 * stage's mark and whether it was due no wake (no_wake; a page is a range of that key, in byte order). Both are keyed by the message's integer (messages.msg,
 * found by its id through messages' unique index), not its random id: a new message's ledger is appended at the
 * right edge of each table instead of dirtying a random leaf of each; awaiting (a recipient's unanswered messages
 * per thread, in arrival order) and owed (what an identity must answer, by when).
 */

/**
 * The tables' shape. A views file whose `schema` row differs (or is missing: written before issue 13) is
 * dropped and rebuilt from the log at open (sqliteViewsMeta.ts): views are derived, the log is the truth.
 */
export const VIEWS_SCHEMA_VERSION = '16';
// 16: a task the mailbox expired at its deadline is dated at the deadline, and one whose lease lapsed at the lease's
//     end (the read model's rules of version 9), not at the sweep's time
// 15: the id of each event that made a line in a task's history names its task (task_lines), for a get_message or
//     get_task given that id on an event store that finds no event by its id (EventStoreDB)
// 14: each identity keeps the last change that made a task begin waiting on it (identities.tasks_waiting_since:
//     '<position>|<at>|<taskId>', null while none waits), for the heartbeat
// 13: only the recipients due a wake at the send count toward clearing an unwoken message (ledger_rows.no_wake marks
//     the others, ledgers.no_wake counts them): mail to [@c, @ghost] that @c read is no longer unwoken
// 12: a ledger expects a wake only when some recipient (not a broadcast's sender) is a registered agent, not retired,
//     at the send: mail to an identity nobody registered is not unwoken
// 11: a thread id of a message id's form is held in lower case (an older log's was stored as typed)
// 10: ledgers count the recipients that saw or read the message (attended); a message all of them saw or read is
//     no longer unwoken
// 9: a task record shows its lease only while it runs, and its lapsed claimant only while the lapse stands
// 8: a task record's isBroadcast is true for AGENT:* only (a list's task said true: it is open to its audience alike)
// 7: fewer entry indexes (listings walk the owner's range; tags in the entry row), archived inbox entries in their
//    own box (2), ledgers keyed by the message's integer (branch sqlfast: its 4 to 6 were never released)
// 4: task records carry outcomeUnseen; the internal 'asking' task list (issue 12)
// 3: each identity's last delivered nudge (the console's agents table)

/** A generation's name: `g` and a number (it becomes part of table names, so nothing else is accepted). */
export const GENERATION_NAME = /^g[0-9]{1,9}$/;

export const META_SCHEMA = `
CREATE TABLE IF NOT EXISTS views_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;`;

/** The tables of one generation, in creation order (dropped in reverse). */
export const GENERATION_TABLES = [
  'state',
  'messages',
  'entries',
  'identities',
  'agents',
  'tasks',
  'task_lists',
  'task_lines',
  'entry_recipients',
  'ledgers',
  'ledger_rows',
  'awaiting',
  'owed',
  'last_nudge', // was missing: every dropped generation left its last_nudge table behind, and a reset kept its rows
] as const;

export function generationSchema(g: string): string {
  if (!GENERATION_NAME.test(g)) throw new Error(`'${g}' is not a generation name`);
  return `
CREATE TABLE IF NOT EXISTS ${g}_state (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  log_identity TEXT,
  checkpoint INTEGER
);
INSERT OR IGNORE INTO ${g}_state (id, log_identity, checkpoint) VALUES (1, NULL, NULL);
CREATE TABLE IF NOT EXISTS ${g}_messages (
  msg INTEGER PRIMARY KEY,
  message_id TEXT NOT NULL UNIQUE,
  sender TEXT NOT NULL,
  recipient TEXT NOT NULL,
  subject TEXT NOT NULL,
  priority TEXT NOT NULL,
  thread_id TEXT NOT NULL,
  in_reply_to TEXT,
  tags TEXT NOT NULL,
  sent_at TEXT NOT NULL,
  task TEXT,
  recipient_count INTEGER NOT NULL,
  recipient_list INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS ${g}_entries (
  owner TEXT NOT NULL,
  box INTEGER NOT NULL,
  position INTEGER NOT NULL,
  msg INTEGER NOT NULL,
  sender TEXT NOT NULL,
  recipient TEXT NOT NULL,
  thread_id TEXT NOT NULL,
  priority TEXT NOT NULL,
  read_at TEXT,
  archived_at TEXT,
  is_broadcast INTEGER NOT NULL,
  seen_at TEXT,
  tags TEXT,
  PRIMARY KEY (owner, box, position)
) WITHOUT ROWID;
CREATE UNIQUE INDEX IF NOT EXISTS ${g}_entries_msg ON ${g}_entries (msg, owner, box);
CREATE INDEX IF NOT EXISTS ${g}_entries_unread ON ${g}_entries (owner, position) WHERE box = 0 AND read_at IS NULL;
CREATE INDEX IF NOT EXISTS ${g}_entries_thread ON ${g}_entries (owner, thread_id, position) WHERE box = 0;
CREATE TABLE IF NOT EXISTS ${g}_identities (
  identity TEXT PRIMARY KEY,
  has_views INTEGER NOT NULL,
  unread_low INTEGER NOT NULL,
  unread_normal INTEGER NOT NULL,
  unread_high INTEGER NOT NULL,
  last_activity_at TEXT,
  tasks_waiting INTEGER NOT NULL,
  tasks_waiting_since TEXT,
  unseen INTEGER NOT NULL DEFAULT 0,
  replies_owed INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS ${g}_agents (
  identity TEXT PRIMARY KEY,
  role TEXT NOT NULL,
  registered_at TEXT NOT NULL,
  retired INTEGER NOT NULL,
  retired_at TEXT
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS ${g}_tasks (
  task_id TEXT PRIMARY KEY,
  record TEXT NOT NULL,
  state TEXT NOT NULL,
  due_at INTEGER
);
CREATE INDEX IF NOT EXISTS ${g}_tasks_due ON ${g}_tasks (due_at) WHERE due_at IS NOT NULL;
CREATE TABLE IF NOT EXISTS ${g}_task_lists (
  list TEXT NOT NULL,
  identity TEXT NOT NULL,
  position INTEGER NOT NULL,
  task_id TEXT NOT NULL,
  PRIMARY KEY (list, identity, position)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS ${g}_task_lines (
  event_id TEXT PRIMARY KEY,
  task_id TEXT NOT NULL
) WITHOUT ROWID;
${ledgerSchema(g)}`;
}

/** The tables of issue 13: recipients of a list, and the delivery ledger. */
function ledgerSchema(g: string): string {
  return `
CREATE TABLE IF NOT EXISTS ${g}_entry_recipients (
  owner TEXT NOT NULL,
  box INTEGER NOT NULL,
  recipient TEXT NOT NULL,
  position INTEGER NOT NULL,
  PRIMARY KEY (owner, box, recipient, position)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS ${g}_ledgers (
  msg INTEGER PRIMARY KEY,
  message_id TEXT NOT NULL,
  position TEXT NOT NULL,
  sender TEXT NOT NULL,
  thread_id TEXT NOT NULL,
  sent_at TEXT NOT NULL,
  recipient_count INTEGER NOT NULL,
  wake_expected INTEGER NOT NULL,
  in_view INTEGER NOT NULL DEFAULT 0,
  woken INTEGER NOT NULL DEFAULT 0,
  seen INTEGER NOT NULL DEFAULT 0,
  read INTEGER NOT NULL DEFAULT 0,
  replied INTEGER NOT NULL DEFAULT 0,
  attended INTEGER NOT NULL DEFAULT 0,
  no_wake INTEGER NOT NULL DEFAULT 0,
  escalated_at TEXT,
  reply_due_by TEXT,
  reply_overdue_at TEXT,
  unwoken_ms INTEGER,
  pending_escalation INTEGER NOT NULL DEFAULT 0,
  due_ms INTEGER
);
CREATE INDEX IF NOT EXISTS ${g}_ledgers_unwoken ON ${g}_ledgers (unwoken_ms, message_id) WHERE unwoken_ms IS NOT NULL;
CREATE INDEX IF NOT EXISTS ${g}_ledgers_pending ON ${g}_ledgers (unwoken_ms, message_id)
  WHERE unwoken_ms IS NOT NULL AND pending_escalation = 1;
CREATE INDEX IF NOT EXISTS ${g}_ledgers_due ON ${g}_ledgers (due_ms, message_id) WHERE due_ms IS NOT NULL;
CREATE TABLE IF NOT EXISTS ${g}_ledger_rows (
  msg INTEGER NOT NULL,
  recipient TEXT NOT NULL,
  ordinal INTEGER NOT NULL,
  in_view TEXT,
  woken TEXT,
  seen TEXT,
  read TEXT,
  replied TEXT,
  no_wake INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (msg, recipient)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS ${g}_awaiting (
  thread_id TEXT NOT NULL,
  recipient TEXT NOT NULL,
  seq INTEGER NOT NULL,
  message_id TEXT NOT NULL,
  PRIMARY KEY (thread_id, recipient, seq)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS ${g}_owed (
  identity TEXT NOT NULL,
  message_id TEXT NOT NULL,
  due_ms INTEGER NOT NULL,
  PRIMARY KEY (identity, message_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS ${g}_owed_due ON ${g}_owed (identity, due_ms);
CREATE TABLE IF NOT EXISTS ${g}_last_nudge (
  identity TEXT PRIMARY KEY,
  mark TEXT NOT NULL
) WITHOUT ROWID;`;
}

/**
 * The listing indexes: a bulk build (sqliteBulkBuild.ts) drops them while it loads, then creates them once at the
 * end (a sort), which costs far less than keeping them in step with every insert. (entries_msg stays: the rules
 * look entries up by message while loading, and it is appended to at its right edge.)
 */
export const LISTING_INDEXES = ['unread', 'thread'] as const;

export const dropListingIndexesSql = (g: string): string =>
  LISTING_INDEXES.map((index) => `DROP INDEX IF EXISTS ${g}_entries_${index};`).join('\n');

export const dropGenerationSql = (g: string): string => {
  if (!GENERATION_NAME.test(g)) throw new Error(`'${g}' is not a generation name`);
  return [...GENERATION_TABLES]
    .reverse()
    .map((table) => `DROP TABLE IF EXISTS ${g}_${table};`)
    .join('\n');
};
