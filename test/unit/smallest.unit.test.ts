import { Smallest } from '../../src/support/smallest';
import { prng } from '../contract/projectionStoreLog'; // seeded: a failing run is replayed from the seed it names

const byTimeThenId = (a: [string, number], b: [string, number]) => a[1] - b[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0);

describe('Smallest (the oldest k of a stream, as the unwoken list asks)', () => {
  it.each([1, 2, 3, 4, 5])('keeps exactly what a full sort would take first, with ties broken by the order (seed %i)', (seed) => {
    const next = prng(seed);
    for (const k of [0, 1, 2, 7, 100, 1000]) {
      const items: Array<[string, number]> = [];
      // Many equal times (messages sent in the same millisecond), so the tie-break is exercised.
      for (let i = 0; i < 500; i++) items.push([`m${Math.floor(next() * 10_000)}-${i}`, Math.floor(next() * 50)]);
      const kept = new Smallest(k, byTimeThenId);
      for (const item of items) kept.offer(item);
      expect(kept.sorted()).toEqual([...items].sort(byTimeThenId).slice(0, k));
    }
  });

  it('answers nothing for an empty stream', () => {
    expect(new Smallest<number>(10, (a, b) => a - b).sorted()).toEqual([]);
  });
});
