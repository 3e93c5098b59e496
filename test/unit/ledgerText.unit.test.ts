/**
 * `mailbox audit message` prints a message's delivery ledger as text (formatLedger): the stages per recipient, the
 * escalation, and the reply obligation (when replies are due and since when they are overdue), as the JSON,
 * `mailbox delivery` and the console give them. The obligation was missing from the text: an auditor reading it never
 * learned the replies were late. Three recipients, one of whom replied.
 */
import { formatLedger } from '../../src/audit/ledgerReplay';
import type { LedgerPage } from '../../src/projections/readModel/ledger';

const page = (obligation: Pick<LedgerPage, 'replyDueBy' | 'replyOverdueAt' | 'escalatedAt'>): LedgerPage =>
  ({
    message: { recipientCount: 3, wakeExpected: true },
    counts: { inView: 3, woken: 1, seen: 1, read: 1, replied: 1 },
    ...obligation,
    rows: ['@b', '@c', '@d'].map((recipient) => ({
      recipient,
      inView: { position: '7', at: '2030-01-01T12:00:00.000Z' },
      woken: null,
      seen: null,
      read: null,
      replied: recipient === '@b' ? { at: '2030-01-01T12:05:00.000Z', messageId: 'r1' } : null,
    })),
    nextAfter: null,
  }) as unknown as LedgerPage;

test('replies due and overdue, and the escalation, are on the delivery line', () => {
  const [first, ...rows] = formatLedger(
    page({
      replyDueBy: '2030-01-01T12:10:00.000Z',
      replyOverdueAt: '2030-01-01T12:10:05.000Z',
      escalatedAt: '2030-01-01T12:02:00.000Z',
    }),
  ).split('\n');
  expect(first).toBe(
    'delivery: 3 recipient(s); in view 3, woken 1, seen 1, read 1, replied 1; escalated by the heartbeat at ' +
      '2030-01-01T12:02:00.000Z (woke nobody in time); replies due 2030-01-01T12:10:00.000Z, ' +
      'found overdue by the heartbeat at 2030-01-01T12:10:05.000Z',
  );
  expect(rows).toHaveLength(3);
  expect(rows[0]).toContain('replied 2030-01-01T12:05:00.000Z (r1)');
});

test('replies due, not overdue (yet): said without claiming they are on time', () => {
  const [first] = formatLedger(page({ replyDueBy: '2030-01-01T12:10:00.000Z', replyOverdueAt: null, escalatedAt: null })).split(
    '\n',
  );
  expect(first).toMatch(/; replies due 2030-01-01T12:10:00.000Z$/);
});

test('no reply expected: nothing about replies', () => {
  const [first] = formatLedger(page({ replyDueBy: null, replyOverdueAt: null, escalatedAt: null })).split('\n');
  expect(first).not.toContain('replies');
});

// A retired recipient's row said only "unread", as if it could still read it, also for a message sent after its
// retirement, which nobody ever will. The scan that replays the ledger also finds the retirements.
test('a retired recipient is marked on its row, and whether it was retired before the message reached it', () => {
  const retirements = new Map([
    ['@c', { at: '2030-01-01T11:00:00.000Z', position: '5' }],
    ['@d', { at: '2030-01-01T13:00:00.000Z', position: '12' }],
  ]);
  const [, b, c, d] = formatLedger(page({ replyDueBy: null, replyOverdueAt: null, escalatedAt: null }), retirements).split('\n');
  expect(b).not.toContain('retired');
  expect(c).toMatch(/, no reply, retired 2030-01-01T11:00:00.000Z \(#5, before this message reached it\)$/);
  expect(d).toMatch(/, no reply, retired 2030-01-01T13:00:00.000Z \(#12\)$/);
});
