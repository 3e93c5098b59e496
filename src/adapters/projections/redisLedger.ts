/**
 * The delivery ledger in Redis (readModel/ledger.ts). Its keys share the
 * global hash tag (a message's recipients live in many agent slots; its
 * ledger in one), and the apply script writes them in the global block,
 * gated by the checkpoint like every other change, re-stating the ledger's
 * rules (ledgerRules.ts; the differential test holds them equal):
 *
 *   <prefix>{<ns>}:ledger:<messageId>      '#' the message (JSON), '#v' '#w' '#s' '#r' '#p' the count per stage,
 *                                          '#u' the recipients due a wake (kept when one was expected), '#a' those
 *                                          of them that saw or read it (either), 'n|<@b>' @b was due no wake,
 *                                          '<v|w|s|r|p>|<@b>' @b's mark of the stage
 *   <prefix>{<ns>}:ledger:<messageId>:to   the recipients (lex-ordered set, score 0), for paging
 *   <prefix>{<ns>}:replies:<threadId>      recipient -> messages of the thread awaiting its reply (space-separated)
 *   <prefix>{<ns>}:unwoken                 messages expecting a wake with none observed and some recipient due one
 *                                          that has neither seen nor read them, scored by send time (ms)
 *   <prefix>{<ns>}:unwoken:pending         the same, less those the heartbeat escalated already ('#e' in the ledger)
 *   <prefix>{<ns>}:replies:due             messages with an open reply obligation ('#d' its due time), scored by it (ms)
 *   <prefix>{<ns>}:owed:<@b>               the messages @b owes a reply, scored by when it is due (ms)
 *
 * Ops (redisApplyScript.ts): `lp` a send answers the thread for its sender, `lo` a ledger opens (and expects a wake
 * when some recipient but a broadcast's sender is in the registry and not retired: ledgerRules.ts), `lg` a
 * stage is reached, `le` an unwoken message was escalated, `rq` a reply obligation opens, `ro` it fell due unmet.
 */
import {
  ledgerMessage,
  LEDGER_STAGES,
  type LedgerMarks,
  type LedgerMessage,
  type LedgerPage,
  type LedgerQuery,
  type LedgerStage,
  type DueReply,
  type RepliesOwed,
  type UnwokenMessage,
  type UnwokenPage,
  type UnwokenQuery,
  type WholeLedger,
} from '../../projections/readModel/ledger';
import { deliveryRow, lastNudgeOf, type LastNudge } from '../../projections/readModel/ledger';
import type { LedgerFact, ViewChange } from '../../projections/viewChanges';
import { replyOverdueWake } from '../../projections/readModel/wakes';
import { ioredis, type RedisClient } from './redisConnection';
import { MailboxError } from '../../errors';
import type { RedisKeys } from './redisKeys';

/** One letter per stage, in field names (the script reads the count field from the mark's first letter). */
export const STAGE_LETTER: Record<LedgerStage, string> = { inView: 'v', woken: 'w', seen: 's', read: 'r', replied: 'p' };

const mark = (stage: LedgerStage, messageId: string, recipient: string, value: string): string[] => [
  'lg',
  messageId,
  `${STAGE_LETTER[stage]}|${recipient}`,
  value,
];

/** The apply script's ledger ops for one fact at `position` (each `[code, ...args]`), in the order the rules apply them. */
export function ledgerOps(fact: ViewChange | LedgerFact, position: bigint, wakes = true): string[][] {
  switch (fact.kind) {
    case 'ledgerOpened': {
      const { kind: _kind, wakeSuppressed, broadcastSender, ...header } = fact;
      // The message's JSON less its wakeExpected, last: the script decides it by the registry and closes the JSON.
      const { wakeExpected: _decided, ...message } = ledgerMessage({
        ...header,
        position: position.toString(),
        wakeExpected: false,
      });
      return [
        ['lp', fact.threadId, fact.sender, `${fact.sentAt} ${fact.messageId}`],
        [
          'lo',
          fact.messageId,
          fact.threadId,
          `${JSON.stringify(message).slice(0, -1)},"wakeExpected":`,
          fact.recipients.join(' '),
          wakeSuppressed ? '' : String(Date.parse(fact.sentAt)),
          broadcastSender ?? '',
        ],
      ];
    }
    case 'inboxAdded':
      return [mark('inView', fact.entry.messageId, fact.recipient, position.toString())];
    case 'wakeObserved': {
      const woken = mark('woken', fact.messageId, fact.recipient, `${fact.at} ${fact.via}`);
      // A heartbeat nudge also moves the recipient's last nudge (the script keeps the newer).
      return fact.via === 'stream' ? [woken] : [woken, ['ln', fact.recipient, `${fact.at} ${fact.via}`]];
    }
    case 'receiptRead':
      return [mark('read', fact.messageId, fact.recipient, fact.readAt)];
    case 'entrySeen':
      return [mark('seen', fact.messageId, fact.recipient, fact.seenAt)];
    case 'wakeEscalated':
      return [['le', fact.messageId, fact.at]];
    case 'replyRequested':
      return [['rq', fact.messageId, fact.dueBy, String(Date.parse(fact.dueBy))]];
    case 'replyOverdue':
      return [['ro', fact.messageId, fact.at, fact.sender, wakes ? JSON.stringify(replyOverdueWake(fact, position)) : '']];
    default:
      return [];
  }
}

export class RedisLedgerReader {
  constructor(
    private readonly client: RedisClient,
    private readonly keys: RedisKeys,
  ) {}

  private ledgerKey(prefix: string, messageId: string): string {
    return `${prefix}${this.keys.globalTag}:ledger:${messageId}`;
  }

  /** Every identity's newest delivered heartbeat nudge (one hash: `<at> <via>` by identity). */
  async lastNudges(prefix: string): Promise<Map<string, LastNudge>> {
    const all = await this.client.hgetall(`${prefix}${this.keys.globalTag}:nudges`);
    return new Map(Object.entries(all).map(([identity, value]) => [identity, lastNudgeOf(value)]));
  }

  /** What the identity owes: the count of its open obligations and the earliest due time. */
  async repliesOwed(prefix: string, identity: string): Promise<RepliesOwed> {
    const key = `${prefix}${this.keys.globalTag}:owed:${identity}`;
    const [count, first] = await Promise.all([this.client.zcard(key), this.client.zrange(key, '0', '0', 'WITHSCORES')]);
    return { repliesOwed: count, nextReplyDueBy: first.length < 2 ? null : new Date(Number(first[1])).toISOString() };
  }

  /** Open reply obligations due at or before `dueBy`, earliest first. */
  async dueReplies(prefix: string, dueBy: string, limit: number): Promise<DueReply[]> {
    const key = `${prefix}${this.keys.globalTag}:replies:due`;
    const ids = await this.client.zrangebyscore(key, '-inf', Date.parse(dueBy), 'LIMIT', 0, limit);
    const heads = await Promise.all(ids.map((id) => this.client.hmget(this.ledgerKey(prefix, id), '#', '#d')));
    return heads.map(([json, due], i) => {
      const message = ledgerHead(json, key, ids[i]);
      return { messageId: ids[i], sender: message.sender, threadId: message.threadId, dueBy: due! };
    });
  }

  /** Two round trips: the count and the oldest ids; then each one's message and escalation. */
  async unwoken(prefix: string, query: UnwokenQuery): Promise<UnwokenPage> {
    const key = `${prefix}${this.keys.globalTag}:unwoken${query.pendingOnly ? ':pending' : ''}`;
    const below = `(${Date.parse(query.sentBefore)}`;
    const [count, ids] = await Promise.all([
      this.client.zcount(key, '-inf', below),
      query.limit === 0 ? Promise.resolve([]) : this.client.zrangebyscore(key, '-inf', below, 'LIMIT', 0, query.limit),
    ]);
    const heads = await Promise.all(ids.map((id) => this.client.hmget(this.ledgerKey(prefix, id), '#', '#e')));
    const messages = heads.map(([json, escalatedAt], i): UnwokenMessage => {
      const message = ledgerHead(json, key, ids[i]);
      return {
        messageId: ids[i],
        sender: message.sender,
        sentAt: message.sentAt,
        recipientCount: message.recipientCount,
        escalatedAt: escalatedAt ?? null,
      };
    });
    return { count, messages };
  }

  /**
   * The ids of the messages with a ledger, by SCAN of the ledger keys (no index of them is kept: nothing else needs
   * one). Every ledger key shares the global hash tag, but the node that holds its slot is not looked up: each master
   * is scanned in address order (the others answer nothing), the cursor naming the node and its SCAN cursor. A
   * node gone between pages (a failover) is refused, not skipped: its ledgers would be missed without a word.
   */
  async ledgerIds(prefix: string, after: string | null, limit: number): Promise<{ messageIds: string[]; next: string | null }> {
    const { Cluster } = ioredis(); // a client exists: ioredis is loaded already
    const nodes = (this.client instanceof Cluster ? this.client.nodes('master') : [this.client])
      .map((node) => ({ node, address: `${node.options.host}:${node.options.port}` }))
      .sort((a, b) => (a.address < b.address ? -1 : a.address > b.address ? 1 : 0));
    const [address, cursor] = after === null ? [nodes[0].address, '0'] : splitCursor(after);
    const at = nodes.findIndex((n) => n.address === address);
    if (at < 0) throw new Error(`the Redis node ${address} left the cluster while its ledgers were listed`);
    const start = `${prefix}${this.keys.globalTag}:ledger:`;
    const [next, keys] = await nodes[at].node.scan(cursor, 'MATCH', `${globPattern(start)}*`, 'COUNT', limit);
    const messageIds = keys.filter((key) => !key.endsWith(':to')).map((key) => key.slice(start.length));
    if (next !== '0') return { messageIds, next: `${address}|${next}` };
    return { messageIds, next: at + 1 < nodes.length ? `${nodes[at + 1].address}|0` : null };
  }

  /**
   * Each message's whole ledger: its hash (message, counts, marks) and its recipients, two commands a message, all
   * sent at once (one round trip for the batch; every ledger key shares the global hash tag, so one node answers).
   */
  async wholeLedgers(prefix: string, messageIds: readonly string[]): Promise<Map<string, WholeLedger>> {
    const read = await Promise.all(
      messageIds.map((messageId) => {
        const key = this.ledgerKey(prefix, messageId);
        return Promise.all([this.client.hgetall(key), this.client.zrange(`${key}:to`, '0', '-1')]);
      }),
    );
    const ledgers = new Map<string, WholeLedger>();
    read.forEach(([hash, recipients], i) => {
      if (hash['#'] === undefined) return; // no ledger (an empty hash reads as {})
      const rows = recipients.map((recipient) => {
        const marks: LedgerMarks = {};
        for (const stage of LEDGER_STAGES) {
          const value = hash[`${STAGE_LETTER[stage]}|${recipient}`];
          if (value !== undefined) marks[stage] = value;
        }
        return deliveryRow(recipient, marks);
      });
      const count = (stage: LedgerStage) => Number(hash[`#${STAGE_LETTER[stage]}`] ?? 0);
      ledgers.set(messageIds[i], {
        message: JSON.parse(hash['#']) as LedgerMessage,
        counts: {
          inView: count('inView'),
          woken: count('woken'),
          seen: count('seen'),
          read: count('read'),
          replied: count('replied'),
        },
        escalatedAt: hash['#e'] ?? null,
        replyDueBy: hash['#d'] ?? null,
        replyOverdueAt: hash['#o'] ?? null,
        rows,
      });
    });
    return ledgers;
  }

  /** Two round trips: the message, its counts and the page's recipients; then their marks. */
  async page(prefix: string, messageId: string, query: LedgerQuery): Promise<LedgerPage | undefined> {
    const key = this.ledgerKey(prefix, messageId);
    const counts = LEDGER_STAGES.map((stage) => `#${STAGE_LETTER[stage]}`);
    const [head, recipients] = await Promise.all([
      this.client.hmget(key, '#', ...counts, '#e', '#d', '#o'),
      this.client.zrangebylex(`${key}:to`, query.after === null ? '-' : `(${query.after}`, '+', 'LIMIT', 0, query.limit + 1),
    ]);
    if (head[0] === null) return undefined;
    const more = recipients.length > query.limit;
    const page = more ? recipients.slice(0, query.limit) : recipients;
    const fields = page.flatMap((recipient) => LEDGER_STAGES.map((stage) => `${STAGE_LETTER[stage]}|${recipient}`));
    const values = fields.length === 0 ? [] : await this.client.hmget(key, ...fields);
    const rows = page.map((recipient, r) => {
      const marks: LedgerMarks = {};
      LEDGER_STAGES.forEach((stage, s) => {
        const value = values[r * LEDGER_STAGES.length + s];
        if (value !== null) marks[stage] = value;
      });
      return deliveryRow(recipient, marks);
    });
    const count = (i: number) => Number(head[i + 1] ?? 0);
    return {
      message: JSON.parse(head[0]) as LedgerMessage,
      counts: { inView: count(0), woken: count(1), seen: count(2), read: count(3), replied: count(4) },
      escalatedAt: head[LEDGER_STAGES.length + 1] ?? null,
      replyDueBy: head[LEDGER_STAGES.length + 2] ?? null,
      replyOverdueAt: head[LEDGER_STAGES.length + 3] ?? null,
      rows,
      nextAfter: more ? page[page.length - 1] : null,
    };
  }
}

/** A ledgerIds cursor: the node's address, then its SCAN cursor. */
function splitCursor(cursor: string): [string, string] {
  const bar = cursor.lastIndexOf('|');
  return [cursor.slice(0, bar), cursor.slice(bar + 1)];
}

/** The text as a SCAN pattern that matches only itself (a namespace or tag may hold glob characters). */
const globPattern = (text: string): string => text.replace(/[*?[\]\\]/g, '\\$&');

/**
 * The head of a ledger an index names. Gone (its hash evicted, or deleted by hand) while the index keeps the id, the
 * read failed on it as "Redis projections is unavailable; retry later": `mailbox audit verify`, the heartbeat's look at
 * due replies and the console's unwoken list all said Redis was down, and retrying changed nothing. Said as it is,
 * with the remedy.
 */
function ledgerHead(json: string | null, index: string, messageId: string): LedgerMessage {
  if (json !== null) return JSON.parse(json) as LedgerMessage;
  throw new MailboxError(
    'UNAVAILABLE',
    'Views damaged',
    `The Redis views are damaged: ${index} names message ${messageId}, which has no ledger (evicted, or deleted by ` +
      'hand). Rebuild them from the log: mailbox projections rebuild.',
    { messageId, key: index },
  );
}
