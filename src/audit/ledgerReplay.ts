/**
 * The delivery ledger replayed from the log alone (issue 13): every event,
 * through the ledger's own rules (readModel/ledgerRules.ts) into a
 * LedgerMemory, nothing else. `audit message` shows a message's ledger from
 * it; `audit unwoken` lists the messages that woke nobody. The whole log is
 * read: replies live in other messages' streams, wakes in the delivery stream.
 */
import type { StoredEvent } from '../events/types';
import type { LogSource } from './logSource';
import { projectStored } from '../projections/projector';
import { evolveLedger } from '../projections/readModel/ledgerRules';
import { LedgerMemory } from '../projections/readModel/ledgerMemory';
import { ActiveAgents } from '../projections/readModel/activeAgents';
import { NO_WAKE_REASON_TEXT, type LedgerPage, type NoWakeReason, type UnwokenMessage } from '../projections/readModel/ledger';

/** When each retired agent was retired (the AgentRetired event's time and log position), by identity. */
export type Retirements = Map<string, { at: string; position: string }>;

/** `onEvent`: sees every event of the scan, in log order (what else a caller needs from the same read of the log). */
export async function replayLedger(
  source: LogSource,
  onProgress?: (position: bigint) => void,
  retirements?: Retirements,
  onEvent?: (event: StoredEvent) => void,
): Promise<LedgerMemory> {
  const agents = new ActiveAgents(); // whom a send could wake (ledgerRules.ts): the registry as of each event
  const ledger = new LedgerMemory(undefined, agents);
  let after: bigint | null = null;
  for (;;) {
    const page = await source.readAll(after, source.pageSize);
    for (const event of page) {
      onEvent?.(event);
      for (const fact of projectStored(event).changes) {
        evolveLedger(ledger, fact, event.position, ledger);
        agents.apply(fact);
      }
      if (retirements !== undefined && event.type === 'AgentRetired')
        retirements.set(event.data.identity, { at: event.data.retiredAt, position: event.position.toString() });
    }
    if (page.length === 0) return ledger;
    after = page[page.length - 1].position;
    onProgress?.(after);
  }
}

/** The whole ledger of one message (every recipient), or undefined when the log holds no such send. */
export function wholeLedger(ledger: LedgerMemory, messageId: string): LedgerPage | undefined {
  return ledger.page(messageId, { after: null, limit: Number.MAX_SAFE_INTEGER });
}

/**
 * `retirements` (from the same scan) marks the recipients retired: a row that said only "unread" read as mail its
 * recipient could still read, also for a message sent to it after its retirement, which nobody ever will.
 */
export function formatLedger(page: LedgerPage, retirements: Retirements = new Map(), noWake: NoWakeReason | null = null): string {
  const c = page.counts;
  const why = noWake === null ? '' : `: ${NO_WAKE_REASON_TEXT[noWake]}`;
  const lines = [
    `delivery: ${page.message.recipientCount} recipient(s); in view ${c.inView}, woken ${c.woken}, seen ${c.seen}, ` +
      `read ${c.read}, replied ${c.replied}${page.message.wakeExpected ? '' : ` (no wake was due${why})`}` +
      (page.escalatedAt ? `; escalated by the heartbeat at ${page.escalatedAt} (woke nobody in time)` : '') +
      // The reply obligation, as the JSON, `mailbox delivery` and the console give it: an auditor must not miss it.
      (page.replyDueBy
        ? `; replies due ${page.replyDueBy}${page.replyOverdueAt ? `, found overdue by the heartbeat at ${page.replyOverdueAt}` : ''}`
        : ''),
  ];
  for (const row of page.rows) {
    const stages = [
      row.inView ? `in view #${row.inView.position}` : 'not in view',
      row.woken ? `woken ${row.woken.at} via ${row.woken.via}` : 'not woken',
      row.seen ? `seen ${row.seen.at}` : 'unseen',
      row.read ? `read ${row.read.at}` : 'unread',
      row.replied ? `replied ${row.replied.at} (${row.replied.messageId})` : 'no reply',
    ];
    const retired = retirements.get(row.recipient);
    if (retired !== undefined) {
      const before = row.inView !== null && BigInt(retired.position) < BigInt(row.inView.position);
      stages.push(`retired ${retired.at} (#${retired.position}${before ? ', before this message reached it' : ''})`);
    }
    lines.push(`  ${row.recipient.padEnd(24)} ${stages.join(', ')}`);
  }
  return lines.join('\n');
}

export const formatUnwoken = (m: UnwokenMessage): string =>
  `${m.messageId}  sent ${m.sentAt} by ${m.sender} to ${m.recipientCount} recipient(s): woke nobody` +
  (m.escalatedAt ? `; escalated ${m.escalatedAt}` : '; not escalated yet');
