import { clientAddressKey, RefusedTokens } from '../../../src/adapters/http/refusedTokens';

test('an address has `burst` refusals at once, refilled at perSecond on the injected clock; a refusal given back returns', () => {
  let now = 0;
  const refused = new RefusedTokens(10, 100, () => now);
  for (let n = 0; n < 100; n += 1) expect(refused.take('192.0.2.1')).toBe(true);
  expect(refused.take('192.0.2.1')).toBe(false);
  expect(refused.refusal('192.0.2.1').envelope).toMatchObject({ code: 'RATE_LIMITED', retryAfterSeconds: 1 });
  expect(refused.take('192.0.2.2')).toBe(true); // another address, its own bucket
  now += 99;
  expect(refused.take('192.0.2.1')).toBe(false);
  now += 1;
  expect(refused.take('192.0.2.1')).toBe(true);
  expect(refused.take('192.0.2.1')).toBe(false);
  refused.giveBack('192.0.2.1');
  expect(refused.take('192.0.2.1')).toBe(true);
  now -= 5_000; // a clock stepping back refills nothing
  expect(refused.take('192.0.2.1')).toBe(false);
});

test('a slow rate tells the wait for one refusal to come back', () => {
  let now = 0;
  const refused = new RefusedTokens(0.25, 1, () => now);
  expect(refused.take('a')).toBe(true);
  expect(refused.take('a')).toBe(false);
  expect(refused.refusal('a').envelope.retryAfterSeconds).toBe(4);
  now = 1000;
  expect(refused.take('a')).toBe(false);
  expect(refused.refusal('a').envelope.retryAfterSeconds).toBe(3);
});

test('a rate of 0 turns it off: every token may be looked up', () => {
  const refused = new RefusedTokens(0, 1, () => 0);
  for (let n = 0; n < 10; n += 1) expect(refused.take('a')).toBe(true);
  expect(refused.size).toBe(0);
});

test('the buckets are capped: rotating addresses evicts the least recently used, never grows the map', () => {
  const now = 0;
  const refused = new RefusedTokens(10, 2, () => now, 1000);
  refused.take('drained');
  refused.take('drained');
  for (let n = 0; n < 5000; n += 1) {
    refused.take(`2001:db8:${n.toString(16)}::/64`);
    if (n % 100 === 0) expect(refused.take('drained')).toBe(false); // in use: kept, still drained
    expect(refused.size).toBeLessThanOrEqual(1000);
  }
  expect(refused.size).toBe(1000);
  // An address left alone longer than the others is evicted: it comes back full.
  for (let n = 0; n < 1000; n += 1) refused.take(`198.51.100.${n}`);
  expect(refused.take('drained')).toBe(true);
});

test.each([
  ['127.0.0.1', '127.0.0.1'],
  ['::ffff:192.0.2.7', '192.0.2.7'],
  ['2001:db8:aa:bb:1:2:3:4', '2001:db8:aa:bb::/64'],
  ['2001:0db8:00aa:0000:ffff::1', '2001:db8:aa:0::/64'],
  ['2001:db8::1', '2001:db8:0:0::/64'],
  ['::1', '0:0:0:0::/64'],
  ['fe80::1%eth0', 'fe80:0:0:0::/64'],
  [undefined, 'unknown'],
])('the address %s is keyed as %s (IPv6 by its /64: one host cannot take a bucket per address)', (address, key) => {
  expect(clientAddressKey(address)).toBe(key);
});
