/**
 * The delivery ledger's storage in process memory (ledgerMemory.ts): the replies awaited in a thread live on the
 * ledger of the message that roots it, or elsewhere when the thread's id is no message's; the unwoken list is a
 * queue compacted as messages are woken. What it answers must not depend on where it keeps them.
 */
import type { LedgerHeader } from '../../../src/projections/readModel/ledger';
import { LedgerMemory } from '../../../src/projections/readModel/ledgerMemory';

const sentAt = (second: number): string => new Date(Date.UTC(2026, 0, 1, 0, 0, second)).toISOString();

function open(ledger: LedgerMemory, messageId: string, threadId: string, recipients: string[], second = 0): void {
  const header: LedgerHeader = {
    messageId,
    position: String(second + 1),
    sender: '@a',
    threadId,
    sentAt: sentAt(second),
    recipients,
    wakeExpected: true,
  };
  ledger.ledgerOpened(header);
}

describe('delivery ledger storage in memory', () => {
  it('keeps the replies awaited in a thread named by the sender (no message has its id) apart from each recipient', () => {
    const ledger = new LedgerMemory();
    open(ledger, 'm1', 'planning', ['@b', '@c']);
    ledger.replyAwaited('planning', '@b', 'm1');
    ledger.replyAwaited('planning', '@c', 'm1');
    open(ledger, 'm2', 'planning', ['@b']);
    ledger.replyAwaited('planning', '@b', 'm2');

    expect(ledger.awaitingReply('planning', '@b')).toEqual(['m1', 'm2']);
    expect(ledger.awaitingReply('planning', '@c')).toEqual(['m1']);
    expect(ledger.awaitingReply('planning', '@d')).toEqual([]);
    ledger.repliesSettled('planning', '@b');
    expect(ledger.awaitingReply('planning', '@b')).toEqual([]);
    expect(ledger.awaitingReply('planning', '@c')).toEqual(['m1']);
  });

  it('keeps each recipient of a thread rooted by a message, and one that settles and is awaited again', () => {
    const ledger = new LedgerMemory();
    open(ledger, 'm1', 'm1', ['@b', '@c', '@d']);
    for (const recipient of ['@b', '@c', '@d']) ledger.replyAwaited('m1', recipient, 'm1');
    open(ledger, 'm2', 'm1', ['@c']);
    ledger.replyAwaited('m1', '@c', 'm2');
    expect(['@b', '@c', '@d'].map((r) => ledger.awaitingReply('m1', r))).toEqual([['m1'], ['m1', 'm2'], ['m1']]);

    // @b (kept inline) settles; @c, awaited before, is awaited again: its earlier messages are not lost.
    ledger.repliesSettled('m1', '@b');
    open(ledger, 'm3', 'm1', ['@c', '@e']);
    ledger.replyAwaited('m1', '@c', 'm3');
    ledger.replyAwaited('m1', '@e', 'm3');
    expect(['@b', '@c', '@d', '@e'].map((r) => ledger.awaitingReply('m1', r))).toEqual([[], ['m1', 'm2', 'm3'], ['m1'], ['m3']]);
    ledger.repliesSettled('m1', '@c');
    expect(ledger.awaitingReply('m1', '@c')).toEqual([]);
    expect(ledger.awaitingReply('m1', '@d')).toEqual(['m1']);
  });

  it('answers in the order awaited when a thread was named before a message of that id was opened', () => {
    const ledger = new LedgerMemory();
    open(ledger, 'm1', 'x', ['@b']);
    ledger.replyAwaited('x', '@b', 'm1');
    open(ledger, 'x', 'x', ['@b']);
    ledger.replyAwaited('x', '@b', 'x');
    expect(ledger.awaitingReply('x', '@b')).toEqual(['m1', 'x']);
    ledger.repliesSettled('x', '@b');
    expect(ledger.awaitingReply('x', '@b')).toEqual([]);
  });

  it('lists the unwoken oldest first, counts them exactly, and drops the woken across compactions', () => {
    const ledger = new LedgerMemory();
    const ids = Array.from({ length: 300 }, (_unused, i) => `m${String(i).padStart(3, '0')}`);
    ids.forEach((id, i) => {
      open(ledger, id, id, ['@b'], 299 - i); // listed newest first: the order asked for is by send time
      ledger.unwokenListed(id, sentAt(299 - i));
    });
    const woken = ids.filter((_id, i) => i % 3 !== 0); // 200 woken: more than those left, so the queue compacts
    for (const id of woken) ledger.unwokenCleared(id);
    ledger.unwokenCleared(woken[0]); // again: changes nothing
    ledger.wakeEscalated('m000', sentAt(400));

    const all = ledger.unwoken({ sentBefore: sentAt(1000), limit: 1000, pendingOnly: false });
    const left = ids.filter((_id, i) => i % 3 === 0);
    expect(all.count).toBe(100);
    expect(all.messages.map((m) => m.messageId)).toEqual([...left].reverse());
    expect(all.messages[all.messages.length - 1]).toMatchObject({ messageId: 'm000', escalatedAt: sentAt(400) });

    expect(ledger.unwoken({ sentBefore: sentAt(1000), limit: 1, pendingOnly: true }).count).toBe(99); // m000 escalated
    const pending = ledger.unwoken({ sentBefore: sentAt(100), limit: 5, pendingOnly: true });
    expect(pending.count).toBe(left.filter((id) => 299 - Number(id.slice(1)) < 100).length);
    expect(pending.messages.map((m) => m.sentAt)).toEqual([sentAt(2), sentAt(5), sentAt(8), sentAt(11), sentAt(14)]);
  });
});
