/** A batch crosses to the SQLite views thread as JSON text (batchText.ts): it must arrive exactly as sent. */
import { batchFromText, batchToText } from '../../src/adapters/projections/sqliteViews/batchText';
import type { ProjectedEvent } from '../../src/projections/viewChanges';

describe('the views thread batch as text', () => {
  it('arrives as sent: positions past 2^53 exactly, facts with nested task data, nulls and empty lists', () => {
    const entry = {
      messageId: 'm1',
      from: '@a',
      to: ['@b', '@c'],
      subject: 'caf\u00e9 \u{1F600}',
      priority: 'high' as const,
      threadId: 'm1',
      tags: [],
      sentAt: '2026-01-01T00:00:00.000Z',
    };
    const batch: ProjectedEvent[] = [
      {
        position: 2n ** 60n + 1n,
        at: entry.sentAt,
        changes: [
          {
            kind: 'messageRecorded',
            summary: {
              ...entry,
              inReplyTo: null,
              recipientCount: 2,
              task: { kind: 'task', input: { parts: [{ kind: 'data', data: { deep: [{ n: 1.5, ok: false, none: null }] } }] } },
            },
          },
          { kind: 'inboxAdded', recipient: '@b', entry, isBroadcast: false, wakeSuppressed: false },
        ],
      } as ProjectedEvent,
      { position: 7n, at: entry.sentAt, changes: [{ kind: 'agentRetired', identity: '@c', retiredAt: entry.sentAt }] },
    ];
    const arrived = batchFromText(batchToText(batch));
    expect(arrived).toEqual(batch);
    expect(arrived.map((event) => typeof event.position)).toEqual(['bigint', 'bigint']);
  });
});
