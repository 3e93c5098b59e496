import { RateLimiter } from '../../../src/adapters/http/rateLimiter';
import { MailboxError } from '../../../src/errors';

test('a burst is allowed, then one request per refill interval, per key', () => {
  let now = 0;
  const limiter = new RateLimiter(2, 3, () => now);
  for (let i = 0; i < 3; i += 1) limiter.take('@a');
  let refused: unknown;
  try {
    limiter.take('@a');
  } catch (error) {
    refused = error;
  }
  expect(refused).toBeInstanceOf(MailboxError);
  expect((refused as MailboxError).envelope).toMatchObject({
    code: 'RATE_LIMITED',
    retryAfterSeconds: 1,
    limitPerSecond: 2,
    burst: 3,
  });
  limiter.take('@b'); // another agent has its own bucket
  now = 500; // half a second refills one token at 2/s
  limiter.take('@a');
  expect(() => limiter.take('@a')).toThrow(MailboxError);
});

test('zero disables the limit', () => {
  const limiter = new RateLimiter(0, 0);
  expect(limiter.enabled).toBe(false);
  for (let i = 0; i < 1000; i += 1) limiter.take('@a');
});
