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

  it('weighs a large Map by a sample of its entries (the domain keeps one small shape per identity in them)', () => {
    const entry = (i: number) => [`@agent-${String(i).padStart(5, '0')}`, { readAt: null, archivedAt: null }] as const;
    const walked = (size: number) => {
      let bytes = 0;
      for (let i = 0; i < size; i++) bytes += approximateBytes(new Map([entry(i)])) - approximateBytes(new Map());
      return bytes;
    };
    const recipients = new Map(Array.from({ length: 1_000 }, (_u, i) => entry(i)));
    const estimate = approximateBytes(recipients) - approximateBytes(new Map());
    expect(estimate).toBeGreaterThan(0.95 * walked(1_000));
    expect(estimate).toBeLessThan(1.05 * walked(1_000));
  });

  it('with a memo, weighs an object shared by successive states once, and gives the same figure as without', () => {
    const sent = {
      messageId: 'm',
      from: '@a',
      subject: 's',
      body: 'x'.repeat(5_000),
      priority: 'normal',
      threadId: 't',
      tags: ['a'],
      sentAt: 'now',
    };
    const memo = new WeakMap<object, number>();
    const first = approximateBytes({ sent, recipients: new Map([['@b', { readAt: null }]]) }, memo);
    expect(memo.get(sent)).toBe(approximateBytes(sent));
    const next = approximateBytes({ sent, recipients: new Map([['@b', { readAt: 'now' }]]) }, memo);
    expect(next).toBe(approximateBytes({ sent, recipients: new Map([['@b', { readAt: 'now' }]]) }));
    expect(next).toBeGreaterThan(first - 100);
  });
});
