/** A tick's escalations, gathered: one nudge per recipient, carrying every message escalated to it, oldest first. */
import { nudgesPerRecipient } from '../../src/heartbeat/escalationNudges';

test('each recipient once, in identity order, with its messages in the order escalated', () => {
  expect(
    nudgesPerRecipient([
      { messageId: 'm1', nudged: ['@c', '@a'] },
      { messageId: 'm2', nudged: ['@a'] },
      { messageId: 'm3', nudged: [] },
      { messageId: 'm4', nudged: ['@b', '@c'] },
    ]),
  ).toEqual([
    { identity: '@a', messageIds: ['m1', 'm2'] },
    { identity: '@b', messageIds: ['m4'] },
    { identity: '@c', messageIds: ['m1', 'm4'] },
  ]);
});

test('nothing escalated, or nobody to nudge: no nudge', () => {
  expect(nudgesPerRecipient([])).toEqual([]);
  expect(nudgesPerRecipient([{ messageId: 'm1', nudged: [] }])).toEqual([]);
});
