import { LedgerMemory } from '../../src/projections/readModel/ledgerMemory';

/** The memory store's walk over its ledgers (deliveryLedgerIds), once the ledger map has split into its shards. */
describe('LedgerMemory.ledgerIds', () => {
  const open = (ledger: LedgerMemory, messageId: string) =>
    ledger.ledgerOpened({
      messageId,
      position: '1',
      sender: '@a',
      threadId: messageId,
      sentAt: '2026-11-27T00:00:00.000Z',
      recipients: ['@b', '@c', '@d'],
      wakeExpected: false,
    });

  it('walks every message with a ledger exactly once, in pages of about the limit', () => {
    const ledger = new LedgerMemory();
    const ids = Array.from({ length: 10_000 }, (_, i) => `m-${i}-${(i * 7919) % 10_007}`);
    for (const id of ids) open(ledger, id);
    const walked: string[] = [];
    let pages = 0;
    for (let after: string | null = null; ; pages++) {
      const page = ledger.ledgerIds(after, 700);
      walked.push(...page.messageIds);
      if (page.next === null) break;
      after = page.next;
    }
    expect(walked).toHaveLength(ids.length);
    expect(new Set(walked)).toEqual(new Set(ids));
    expect(pages).toBeGreaterThan(5); // not one page of everything
  });

  it('answers one page, then none, for a small map and for an empty one', () => {
    const ledger = new LedgerMemory();
    expect(ledger.ledgerIds(null, 10)).toEqual({ messageIds: [], next: null });
    for (const id of ['m1', 'm2', 'm3']) open(ledger, id);
    expect(ledger.ledgerIds(null, 2)).toEqual({ messageIds: ['m1', 'm2', 'm3'], next: null });
  });
});
