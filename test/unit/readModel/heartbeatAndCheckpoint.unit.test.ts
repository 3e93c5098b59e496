/** Heartbeat counts (unread, by priority, oldest unread, last activity) and the checkpoint: events at or below it change nothing. */
import { applyEvents } from '../../../src/projections/readModel/applyEvents';
import { ScratchViews } from '../../../src/projections/readModel/scratchViews';
import { ReadModelSpec } from '../../support/readModelSpec';
import { LogBuilder, next } from './scenario';

describe('read model: heartbeat counts', () => {
  it("unread by priority, the oldest unread entry's sentAt and the last activity, after reads and archives", () => {
    const log = new LogBuilder().register('@a', '@b', '@c');
    const m1 = log.send('@a', '@b', { priority: 'high' });
    const m2 = log.send('@c', '@b', { priority: 'low' });
    log.send('@a', '@b', { priority: 'high' });
    const given = log.projected();
    let readAt = '';
    const when = next(log, (l) => {
      readAt = l.read('@b', m1);
      l.archive('@b', m2);
    });
    ReadModelSpec.given(given)
      .when(...when)
      .thenViews((views) => {
        expect(views.heartbeat('@b')).toEqual({
          identity: '@b',
          tasksWaiting: 0,
          tasksWaitingSince: null,
          repliesOwed: 0,
          nextReplyDueBy: null,
          unread: 1,
          unseen: 1,
          byPriority: { low: 0, normal: 0, high: 1 },
          oldestUnreadAt: log.sentAt('m3'),
          lastActivityAt: readAt,
        });
        expect(views.heartbeat('@c')).toEqual({
          identity: '@c',
          tasksWaiting: 0,
          tasksWaitingSince: null,
          repliesOwed: 0,
          nextReplyDueBy: null,
          unread: 0,
          unseen: 0,
          byPriority: { low: 0, normal: 0, high: 0 },
          oldestUnreadAt: null,
          lastActivityAt: log.sentAt(m2),
        });
      });
  });
});

describe('read model: checkpoint', () => {
  it('events at or below the checkpoint, or below an earlier event of the batch, change nothing', () => {
    const log = new LogBuilder().register('@a', '@b', '@c');
    const m1 = log.send('@a', '@b');
    log.read('@b', m1);
    log.send('@c', '@b');
    const events = log.projected(); // positions 1..6
    const once = new ScratchViews();
    once.applyBatch(events);
    const redelivered = new ScratchViews();
    const changes: string[] = [];
    const counting = new Proxy(redelivered, {
      get(target, name) {
        const value = Reflect.get(target, name, target) as unknown;
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) => {
          if (!['hasViews', 'entry', 'hasOutboxEntry', 'isRegistered', 'lastActivityAt', 'unreadTotal'].includes(String(name))) {
            changes.push(String(name));
          }
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
    expect(applyEvents(counting, events.slice(0, 4), null)).toBe(4n);
    const before = changes.length;
    expect(applyEvents(counting, [events[1], events[3], events[2]], 4n)).toBe(4n); // all at or below: nothing
    expect(changes.length).toBe(before);
    expect(applyEvents(counting, [events[4], events[3], events[4], events[5]], 4n)).toBe(6n);
    expect(redelivered.heartbeat('@b')).toEqual(once.heartbeat('@b'));
    expect(redelivered.listing('@b', 'inbox')).toEqual(once.listing('@b', 'inbox'));
  });
});
