/** The command handler's state cache: bounded in streams and bytes, newest write wins, hits survive a generation turnover. */
import { StreamStateCache } from '../../src/application/streamStateCache';

const entry = (revision: number) => ({ revision: BigInt(revision), state: { revision } });
const byCount = (maxEntries: number) => ({ maxEntries, maxBytes: Number.POSITIVE_INFINITY });
/** A message-like state whose body is `chars` long. */
const message = (chars: number) => ({
  revision: 0n,
  state: { sent: { subject: 's', body: 'b'.repeat(chars) }, recipients: new Map() },
});

describe('StreamStateCache', () => {
  it('returns the latest entry set for a stream, also across generation turnovers', () => {
    const cache = new StreamStateCache(byCount(4)); // generations of 2
    cache.set('a', entry(0));
    cache.set('b', entry(0)); // young full: a, b become the old generation
    cache.set('a', entry(1)); // newer a in the young generation shadows the old one
    expect(cache.get('a')).toEqual(entry(1));
    expect(cache.get('b')).toEqual(entry(0));
  });

  it('keeps at most maxEntries streams, dropping the least recently used generation', () => {
    const cache = new StreamStateCache(byCount(4));
    for (let i = 0; i < 10; i++) cache.set(`s${i}`, entry(i));
    const kept = Array.from({ length: 10 }, (_unused, i) => `s${i}`).filter((name) => cache.get(name) !== undefined);
    expect(kept.length).toBeLessThanOrEqual(4);
    expect(kept).toContain('s9');
    expect(cache.get('s0')).toBeUndefined();
  });

  it('a hit on an old entry keeps it through the next turnover', () => {
    const cache = new StreamStateCache(byCount(4));
    cache.set('registry', entry(7));
    cache.set('m1', entry(0)); // turnover: registry, m1 are old
    expect(cache.get('registry')).toEqual(entry(7)); // promoted to young
    cache.set('m2', entry(0)); // turnover: registry, m2 are old; m1 dropped
    expect(cache.get('m1')).toBeUndefined();
    expect(cache.get('registry')).toEqual(entry(7));
  });

  it('delete forgets a stream in both generations', () => {
    const cache = new StreamStateCache(byCount(4));
    cache.set('a', entry(0));
    cache.set('b', entry(0));
    cache.set('a', entry(1));
    cache.delete('a');
    expect(cache.get('a')).toBeUndefined();
  });

  it('keeps at most maxBytes of states, however few the streams: large messages turn the generations over sooner', () => {
    const cache = new StreamStateCache({ maxEntries: 20_000, maxBytes: 1_000_000 }); // generations of 500 KB
    for (let i = 0; i < 100; i++) cache.set(`m${i}`, message(60_000)); // 100 bodies of 60 KB: 12 MB as UTF-16
    const held = cache.size();
    expect(held.bytes).toBeLessThanOrEqual(1_000_000 + 130_000); // the budget, and at most one state over it
    expect(held.entries).toBeLessThan(10);
    expect(cache.get('m99')?.state).toEqual(message(60_000).state); // the newest is held
    expect(cache.get('m0')).toBeUndefined(); // the oldest was dropped: its next load reads its stream
  });

  it('counts a stream once when it is set again or promoted from the old generation', () => {
    const cache = new StreamStateCache({ maxEntries: 20_000, maxBytes: 1_000_000 });
    for (let i = 0; i < 50; i++) cache.set('same', message(1_000));
    const once = cache.size();
    expect(once.entries).toBe(1);
    cache.set('other', message(1_000));
    expect(cache.size().bytes).toBeLessThan(2.2 * once.bytes);
    cache.delete('same');
    cache.delete('other');
    expect(cache.size()).toEqual({ entries: 0, bytes: 0 });
  });
});
