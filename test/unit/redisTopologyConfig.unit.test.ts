/**
 * MAILBOX_REDIS_SENTINELS (+ _NAME) and MAILBOX_REDIS_CLUSTER fold into the Redis URL the mailbox reads. `mailbox serve`
 * parses the environment's configuration again with its flags on top, and the second parse took the folded URL for a
 * MAILBOX_REDIS_URL set beside them: "MAILBOX_REDIS_URL and MAILBOX_REDIS_SENTINELS are both set", exit code 2, for
 * every serve on either (docker-compose.scaled.yml's three API nodes). Parsing is now the same once or twice; a
 * MAILBOX_REDIS_URL really set beside them is still refused.
 */
import { parseConfig, type MailboxConfigInput } from '../../src/config';

const twice = (input: MailboxConfigInput) => parseConfig(parseConfig(input) as MailboxConfigInput);

test.each([
  [
    'Sentinel',
    { redisSentinels: 's1:26379, s2:26379,s3:26379', redisSentinelName: 'mymaster' },
    'redis+sentinel://s1:26379,s2:26379,s3:26379/mymaster',
  ],
  ['Sentinel over TLS', { redisSentinels: 's1:26379', redisSentinelName: 'm', redisTls: true }, 'rediss+sentinel://s1:26379/m'],
  ['Cluster', { redisCluster: 'n1:6379,n2:6379' }, 'redis-cluster://n1:6379,n2:6379'],
] as const)('%s: parsed twice (as serve does), the same Redis URL, no refusal', (_topology, input, url) => {
  expect(parseConfig(input).redisUrl).toBe(url);
  expect(twice(input)).toEqual(parseConfig(input));
});

test('a MAILBOX_REDIS_URL set beside the sentinels is still refused, on the first parse and on a second', () => {
  const both = { redisUrl: 'redis://elsewhere:6379', redisSentinels: 's1:26379', redisSentinelName: 'mymaster' };
  expect(() => parseConfig(both)).toThrow(/MAILBOX_REDIS_URL and MAILBOX_REDIS_SENTINELS are both set/);
  const folded = parseConfig({ redisSentinels: 's1:26379', redisSentinelName: 'mymaster' });
  expect(() => parseConfig({ ...folded, redisUrl: 'redis://elsewhere:6379' } as MailboxConfigInput)).toThrow(
    /MAILBOX_REDIS_URL and MAILBOX_REDIS_SENTINELS are both set/,
  );
  expect(() => parseConfig({ redisUrl: 'redis://a:6379', redisCluster: 'n1:6379' })).toThrow(
    /MAILBOX_REDIS_URL and MAILBOX_REDIS_CLUSTER are both set/,
  );
});
