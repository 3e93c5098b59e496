import { randomUUID } from 'node:crypto';
import { ShardedMap } from '../../src/support/shardedMap';

/** A plain Map fed the same operations: the sharded one must answer exactly as it does, before and after it splits. */
function drive(keys: readonly string[]): { sharded: ShardedMap<number>; plain: Map<string, number> } {
  const sharded = new ShardedMap<number>();
  const plain = new Map<string, number>();
  const deleted: Array<[boolean, boolean]> = [];
  keys.forEach((key, i) => {
    sharded.set(key, i);
    plain.set(key, i);
    if (i % 3 === 0) deleted.push([sharded.delete(keys[i >> 1]), plain.delete(keys[i >> 1])]);
  });
  expect(deleted.map(([fromSharded]) => fromSharded)).toEqual(deleted.map(([, fromPlain]) => fromPlain));
  return { sharded, plain };
}

describe('ShardedMap', () => {
  it.each([
    ['a small map (one Map inside)', 1_000],
    ['a map past its split (256 Maps inside)', 40_000],
  ])('answers get, has, size, delete and iteration as a Map does: %s', (_name, count) => {
    const keys = Array.from({ length: count }, (_unused, i) => (i % 5 === 0 ? `@agent-${i}` : randomUUID()));
    keys.push(keys[7], '', 'x'); // a key set twice, an empty key, a one-character key
    const { sharded, plain } = drive(keys);

    expect(sharded.size).toBe(plain.size);
    const asked = [...keys, 'never-set'];
    expect(asked.map((key) => sharded.get(key))).toEqual(asked.map((key) => plain.get(key)));
    expect(asked.map((key) => sharded.has(key))).toEqual(asked.map((key) => plain.has(key)));
    expect(new Map(sharded)).toEqual(plain);
    expect([...sharded.keys()].sort()).toEqual([...plain.keys()].sort());
    expect([...sharded.values()].sort((a, b) => a - b)).toEqual([...plain.values()].sort((a, b) => a - b));
    expect(sharded.delete('never-set')).toBe(false);
    expect(sharded.size).toBe(plain.size);
  });

  it('spreads message ids over its shards (each shard within half to twice its share)', () => {
    const map = new ShardedMap<true>();
    for (let i = 0; i < 64_000; i++) map.set(randomUUID(), true);
    const shards = (map as unknown as { shards: Array<Map<string, true>> }).shards;
    const sizes = shards.map((shard) => shard.size);
    expect(sizes.reduce((sum, size) => sum + size, 0)).toBe(64_000);
    expect(Math.max(...sizes)).toBeLessThan(500);
    expect(Math.min(...sizes)).toBeGreaterThan(125);
  });
});
