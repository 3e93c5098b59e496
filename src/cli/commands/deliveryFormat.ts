/** The delivery ledger as text (`mailbox delivery`, `mailbox audit message`): the summary, then one line per recipient. */
import type { DeliveryLedger } from '../../application/deliveryQueries';
import { NO_WAKE_REASON_TEXT, type DeliveryRow } from '../../projections/readModel/ledger';

const noWakeDue = (ledger: DeliveryLedger): string =>
  ledger.wakeExpected ? '' : ` (no wake was due${ledger.noWakeReason ? `: ${NO_WAKE_REASON_TEXT[ledger.noWakeReason]}` : ''})`;

const short = (iso: string) => iso.replace('T', ' ').replace(/\.\d+Z$/, 'Z');

function stages(row: DeliveryRow): string {
  return [
    row.inView ? `in view #${row.inView.position}` : 'not in view',
    row.woken ? `woken ${short(row.woken.at)} via ${row.woken.via}` : 'not woken',
    row.seen ? `seen ${short(row.seen.at)}` : 'unseen',
    row.read ? `read ${short(row.read.at)}` : 'unread',
    row.replied ? `replied ${short(row.replied.at)} (${row.replied.messageId})` : 'no reply',
  ].join(', ');
}

export function formatDelivery(ledger: DeliveryLedger): string {
  const s = ledger.summary;
  const lines = [
    `message  ${ledger.messageId} from ${ledger.sender}, sent ${short(ledger.sentAt)}, accepted at #${ledger.accepted.position ?? '(pending)'}`,
    `summary  ${s.recipients} recipient${s.recipients === 1 ? '' : 's'}: in view ${s.inView}, woken ${s.woken}, seen ${s.seen}, ` +
      `read ${s.read}, replied ${s.replied}${noWakeDue(ledger)}`,
    // The obligations the ledger carries beside the stages (the JSON's replyDueBy, replyOverdueAt and escalatedAt, which
    // the console shows too): a sender reading the text must not miss that replies are due, late, or that nobody woke.
    ...(ledger.replyDueBy
      ? [
          `replies  due ${short(ledger.replyDueBy)}` +
            (ledger.replyOverdueAt ? `, found overdue by the heartbeat ${short(ledger.replyOverdueAt)}` : ''),
        ]
      : []),
    ...(ledger.escalatedAt ? [`escalated by the heartbeat ${short(ledger.escalatedAt)} (woke nobody in time)`] : []),
    ...(ledger.viewsLagging ? ['(the views have not applied this send yet: only acceptance is known)'] : []),
    ...ledger.recipients.map((row) => `  ${row.recipient.padEnd(24)} ${stages(row)}`),
    ...(ledger.nextAfter ? [`more: --after ${ledger.nextAfter}`] : []),
  ];
  return `${lines.join('\n')}\n`;
}
