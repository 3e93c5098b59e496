/** The estimate caches use to bound themselves in bytes: an upper bound that grows with what a value holds. */
import { approximateBytes } from '../../src/support/approximateBytes';

describe('approximateBytes', () => {
  it('counts a string at two bytes a character at most, so a large body dominates its state', () => {
    const small = approximateBytes({ sent: { body: 'hi' } });
    const large = approximateBytes({ sent: { body: 'x'.repeat(60_000) } });
    expect(large - small).toBeGreaterThanOrEqual(2 * (60_000 - 2));
    expect(large).toBeLessThan(2 * 60_000 + 1_000);
  });

  it('walks arrays, Maps, Sets and nested objects (a task payload, recipients by identity)', () => {
    const recipients = new Map(Array.from({ length: 1_000 }, (_u, i) => [`@agent-${i}`, { readAt: null, archivedAt: null }]));
    expect(approximateBytes({ recipients })).toBeGreaterThan(1_000 * 40);
    const task = {
      input: { parts: [{ kind: 'data', data: { rows: Array.from({ length: 500 }, (_u, i) => ({ n: i, s: 'abcdefgh' })) } }] },
    };
    expect(approximateBytes(task)).toBeGreaterThan(500 * (8 + 16 + 16));
    expect(approximateBytes(new Set(['a', 'b']))).toBeGreaterThan(approximateBytes(new Set(['a'])));
  });

  it('counts a Buffer by its bytes, and a value nested beyond its depth limit as one object, without failing', () => {
    expect(approximateBytes(Buffer.alloc(4_096))).toBe(32 + 4_096);
    let deep: Record<string, unknown> = { leaf: 'x'.repeat(10_000) };
    for (let i = 0; i < 1_000; i++) deep = { next: deep };
    expect(approximateBytes(deep)).toBeLessThan(64 * 100); // the leaf is below the limit: not walked
    expect(approximateBytes(null)).toBeGreaterThan(0);
    expect(approximateBytes(12n)).toBeGreaterThan(0);
  });
});
