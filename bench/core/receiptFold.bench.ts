/**
 * The write side's cost of one receipt of a broadcast, in process, without I/O: decide MarkRead on the message's
 * state, then fold the ReceiptRead into the next state (what the command handler does before and after the
 * append), for each recipient in turn, at two audiences. The state holds every recipient's read and archive
 * marks; a fold that copied them all made one receipt cost the audience, and reading a broadcast through cost
 * its square (commands/layeredMap.ts). The ratio of the two audiences' costs per receipt says how it grows:
 * 10 for a copy of the audience, about 3 (√10) for the layered map.
 */
import { decideMarkRead } from '../../src/commands/receipts';
import { foldMessage, initialMessageState, type MessageState } from '../../src/commands/message';
import type { MessageEvent } from '../../src/events/types';
import { MailboxError } from '../../src/errors';
import { runBench } from '../lib/runBench';
import { scaled } from '../lib/scale';
import { median, round } from '../lib/stats';
import { nowMs } from '../lib/timing';

const AUDIENCES = [scaled(1_000, 100), scaled(10_000, 1_000)];
const RUNS = 5;

function broadcastTo(audience: number): { state: MessageState; recipients: string[] } {
  const recipients = Array.from({ length: audience }, (_unused, i) => `@agent-${i}`);
  const sent = {
    type: 'MessageSent',
    data: {
      messageId: 'm-1',
      from: '@lead',
      to: 'AGENT:*',
      recipients: [],
      subject: 'All hands',
      body: 'Standup moved to 10:00.',
      priority: 'normal',
      sentAt: '2026-11-27T10:00:00.000Z',
    },
  } as unknown as MessageEvent;
  const delivered = recipients.map(
    (recipient) => ({ type: 'BroadcastDelivered', data: { messageId: 'm-1', recipient } }) as unknown as MessageEvent,
  );
  return { state: foldMessage(initialMessageState(), [sent, ...delivered]), recipients };
}

/** µs per receipt: every recipient reads the broadcast, one decide + fold each. */
function readThrough(audience: number): number {
  const { recipients } = broadcastTo(audience);
  let { state } = broadcastTo(audience);
  const started = nowMs();
  for (const reader of recipients) {
    const at = '2026-11-27T10:05:00.000Z';
    const events = decideMarkRead(
      {
        type: 'MarkRead',
        data: { messageId: 'm-1' },
        metadata: { commandId: 'c', correlationId: 'c', causationId: 'c', actor: { identity: reader, role: 'agent' }, at },
      },
      state,
    );
    if (events instanceof MailboxError || events.length !== 1) throw new Error(`${reader}: no ReceiptRead decided`);
    state = foldMessage(state, events);
  }
  const ms = nowMs() - started;
  const unread = [...state.recipients.values()].filter((r) => r.readAt === null).length;
  if (unread !== 0) throw new Error(`${unread} recipients still unread after the read-through`);
  return (ms * 1000) / audience;
}

runBench('core/receiptFold', async (report) => {
  const perReceipt = new Map<number, number>();
  for (const audience of AUDIENCES) {
    readThrough(audience); // warm-up
    const runs = Array.from({ length: RUNS }, () => readThrough(audience));
    perReceipt.set(audience, median(runs));
    report.metric(`receipt of a broadcast to ${audience}: decide + fold`, median(runs), 'µs', undefined, {
      runs: runs.map(round),
    });
  }
  const [small, large] = AUDIENCES;
  report.metric(`cost per receipt, ${large} recipients against ${small}`, perReceipt.get(large)! / perReceipt.get(small)!, 'x');
});
