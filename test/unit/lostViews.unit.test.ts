/** Lost views rebuilt in place: which reads are refused, and until when (src/projections/lostViews.ts). */
import { isMailboxError } from '../../src/errors';
import { LostViews, ReadsOfWholeViews } from '../../src/projections/lostViews';
import { MemoryProjectionStore } from '../../src/adapters/projections/memoryProjectionStore';
import { InProcessWakeBus } from '../../src/adapters/wake/inProcessWakeBus';

const at = new Date('2026-12-02T12:00:00.000Z');

describe('LostViews', () => {
  test('given whole views, when nothing was lost, then reads are not refused', () => {
    const lost = new LostViews();
    expect(lost.refusal()).toBeNull();
    expect(lost.current()).toBeNull();
  });

  test('given views lost after holding 40 events, when the rebuild reaches 25, then reads are refused naming both', () => {
    const lost = new LostViews();
    lost.lost(40n, at);
    lost.reached(25n);
    expect(lost.current()).toEqual({ rebuildingTo: '40', rebuiltThrough: '25', since: at.toISOString() });
    const refusal = lost.refusal();
    expect(isMailboxError(refusal) && refusal.code).toBe('UNAVAILABLE');
    expect(refusal?.message).toContain('hold events up to position 25 of the 40 they held before');
  });

  test('given views lost after holding 40 events, when the rebuild reaches 40, then reads are served again', () => {
    const lost = new LostViews();
    lost.lost(40n, at);
    lost.reached(39n);
    expect(lost.refusal()).not.toBeNull();
    lost.reached(40n);
    expect(lost.refusal()).toBeNull();
  });

  test('given a rebuild to 40 under way, when a lower loss is reported, then it still waits for 40; a higher one raises it', () => {
    const lost = new LostViews();
    lost.lost(40n, at);
    lost.lost(30n, at);
    expect(lost.current()?.rebuildingTo).toBe('40');
    lost.lost(55n, at);
    lost.reached(40n);
    expect(lost.current()?.rebuildingTo).toBe('55');
  });
});

describe('ReadsOfWholeViews', () => {
  test('refuses every view read while rebuilding, and passes applies, checkpoints and bindings through', async () => {
    const lost = new LostViews();
    const views = new ReadsOfWholeViews(new MemoryProjectionStore(new InProcessWakeBus()), lost);
    lost.lost(10n, at);
    await expect(views.unreadCount('@b')).rejects.toMatchObject({ code: 'UNAVAILABLE' });
    await expect(views.listAgents()).rejects.toMatchObject({ code: 'UNAVAILABLE' });
    await expect(views.allHeartbeats()).rejects.toMatchObject({ code: 'UNAVAILABLE' });
    expect(await views.checkpoint()).toBeNull();
    expect((await views.binding()).checkpoint).toBeNull();
    lost.reached(10n);
    expect(await views.unreadCount('@b')).toMatchObject({ unread: 0 });
  });
});
