/** The command handler's state cache: bounded, newest write wins, hits survive a generation turnover. */
import { StreamStateCache } from '../../src/application/streamStateCache';

const entry = (revision: number) => ({ revision: BigInt(revision), state: { revision } });

describe('StreamStateCache', () => {
  it('returns the latest entry set for a stream, also across generation turnovers', () => {
    const cache = new StreamStateCache(4); // generations of 2
    cache.set('a', entry(0));
    cache.set('b', entry(0)); // young full: a, b become the old generation
    cache.set('a', entry(1)); // newer a in the young generation shadows the old one
    expect(cache.get('a')).toEqual(entry(1));
    expect(cache.get('b')).toEqual(entry(0));
  });

  it('keeps at most maxEntries streams, dropping the least recently used generation', () => {
    const cache = new StreamStateCache(4);
    for (let i = 0; i < 10; i++) cache.set(`s${i}`, entry(i));
    const kept = Array.from({ length: 10 }, (_unused, i) => `s${i}`).filter((name) => cache.get(name) !== undefined);
    expect(kept.length).toBeLessThanOrEqual(4);
    expect(kept).toContain('s9');
    expect(cache.get('s0')).toBeUndefined();
  });

  it('a hit on an old entry keeps it through the next turnover', () => {
    const cache = new StreamStateCache(4);
    cache.set('registry', entry(7));
    cache.set('m1', entry(0)); // turnover: registry, m1 are old
    expect(cache.get('registry')).toEqual(entry(7)); // promoted to young
    cache.set('m2', entry(0)); // turnover: registry, m2 are old; m1 dropped
    expect(cache.get('m1')).toBeUndefined();
    expect(cache.get('registry')).toEqual(entry(7));
  });

  it('delete forgets a stream in both generations', () => {
    const cache = new StreamStateCache(4);
    cache.set('a', entry(0));
    cache.set('b', entry(0));
    cache.set('a', entry(1));
    cache.delete('a');
    expect(cache.get('a')).toBeUndefined();
  });
});
