/**
 * Redis topologies from configuration: the three URL forms, the variables folded into them,
 * secrets from files, and one teaching line for every mistake.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { configFromEnv, parseConfig } from '../../src/config';
import { parseRedisUrl } from '../../src/adapters/projections/redisTopology';
import { StartupError } from '../../src/startupError';
import { checkConfig } from '../../src/startupChecks';

describe('Redis URL forms', () => {
  it('one node, with credentials and database; rediss means TLS', () => {
    expect(parseRedisUrl('redis://127.0.0.1:6380/2')).toMatchObject({
      kind: 'single',
      host: { host: '127.0.0.1', port: 6380 },
      tls: false,
    });
    expect(parseRedisUrl('rediss://app:s%40cret@redis.internal')).toMatchObject({
      kind: 'single',
      host: { host: 'redis.internal', port: 6379 },
      username: 'app',
      password: 's@cret',
      tls: true,
    });
  });

  it('a Sentinel group: several sentinels (26379 by default), the master name and a database', () => {
    expect(parseRedisUrl('redis+sentinel://:pw@s1:26380,s2,[::1]:26381/mymaster/3')).toEqual({
      kind: 'sentinel',
      sentinels: [
        { host: 's1', port: 26380 },
        { host: 's2', port: 26379 },
        { host: '::1', port: 26381 },
      ],
      masterName: 'mymaster',
      db: 3,
      username: undefined,
      password: 'pw',
      tls: false,
    });
  });

  it('a Cluster: its seed nodes; rediss-cluster means TLS', () => {
    expect(parseRedisUrl('rediss-cluster://n1:7000,n2:7001')).toMatchObject({
      kind: 'cluster',
      nodes: [
        { host: 'n1', port: 7000 },
        { host: 'n2', port: 7001 },
      ],
      tls: true,
    });
  });

  it.each([
    ['http://127.0.0.1:6379', 'is not a Redis URL'],
    ['redis://a:1,b:2', 'names several hosts'],
    ['redis+sentinel://s1:26379', 'master name'],
    ['redis-cluster://n1:7000/0', 'has a path'],
    ['redis-cluster://n1:7000,,n2', 'at least one host:port'],
    ['redis-cluster://n1:99999', "'n1:99999', which is not host:port"],
  ])('%s is refused with the valid forms (%s)', (url, why) => {
    let error: unknown;
    try {
      parseRedisUrl(url);
    } catch (caught) {
      error = caught;
    }
    expect(error).toMatchObject({ code: 'VALIDATION_FAILED', envelope: { field: 'MAILBOX_REDIS_URL' } });
    const message = (error as Error).message;
    expect(message).toContain(why);
    expect(message).toContain('redis+sentinel://host:26379,host:26379/<master name>');
    expect(message).toContain('redis-cluster://host:6379,host:6379');
    // Unset, the views live in the SQLite views file (MAILBOX_VIEWS=sqlite, the default), not in memory as it said.
    expect(message).toMatch(/or leave it unset for views without Redis \(MAILBOX_VIEWS: the SQLite views file by default\)\.$/);
  });

  it('a password never appears in the error', () => {
    expect(() => parseRedisUrl('redis://:hunter2@a:1,b:2')).toThrow(/\*\*\*@a:1,b:2/);
    expect(() => parseRedisUrl('redis://:hunter2@a:1,b:2')).not.toThrow(/hunter2/);
  });
});

describe('Redis topology variables', () => {
  it('MAILBOX_REDIS_SENTINELS + MAILBOX_REDIS_SENTINEL_NAME and MAILBOX_REDIS_CLUSTER become the Redis URL', () => {
    expect(
      configFromEnv({ MAILBOX_REDIS_SENTINELS: 's1:26379, s2:26379', MAILBOX_REDIS_SENTINEL_NAME: 'mymaster' }).redisUrl,
    ).toBe('redis+sentinel://s1:26379,s2:26379/mymaster');
    expect(configFromEnv({ MAILBOX_REDIS_CLUSTER: 'n1:7000,n2:7001', MAILBOX_REDIS_TLS: 'true' }).redisUrl).toBe(
      'rediss-cluster://n1:7000,n2:7001',
    );
    expect(configFromEnv({ MAILBOX_REDIS_URL: 'redis://r:6379' }).redisUrl).toBe('redis://r:6379');
  });

  it.each([
    [
      { MAILBOX_REDIS_URL: 'redis://r:6379', MAILBOX_REDIS_CLUSTER: 'n1:7000' },
      'MAILBOX_REDIS_URL and MAILBOX_REDIS_CLUSTER are both set: name Redis one way only',
    ],
    [{ MAILBOX_REDIS_SENTINELS: 's1:26379' }, 'set it to the master name the sentinels watch'],
    [{ MAILBOX_REDIS_SENTINEL_NAME: 'mymaster' }, 'set MAILBOX_REDIS_SENTINELS to the sentinels as host:26379'],
    [
      { MAILBOX_REDIS_CLUSTER: 'n1:7000;n2:7001' },
      'set MAILBOX_REDIS_CLUSTER to seed nodes of the cluster as host:port,host:port',
    ],
    [{ MAILBOX_REDIS_TLS: 'maybe' }, 'set MAILBOX_REDIS_TLS to true or false'],
  ])('%j is one startup line that teaches the valid form', (env, teaching) => {
    let error: unknown;
    try {
      configFromEnv(env);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(StartupError);
    expect((error as Error).message).toContain(teaching);
    expect((error as Error).message).not.toContain('\n');
  });

  it('secrets come from files (Docker secrets): MAILBOX_ADMIN_TOKEN_FILE and MAILBOX_REDIS_PASSWORD_FILE', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mailbox-secrets-'));
    try {
      fs.writeFileSync(path.join(dir, 'admin'), 'a-very-long-admin-token-0123456789\n');
      fs.writeFileSync(path.join(dir, 'redis'), 'redis-pass');
      const config = configFromEnv({
        MAILBOX_ADMIN_TOKEN_FILE: path.join(dir, 'admin'),
        MAILBOX_REDIS_PASSWORD_FILE: path.join(dir, 'redis'),
      });
      expect(config.adminToken).toBe('a-very-long-admin-token-0123456789');
      expect(config.redisPassword).toBe('redis-pass');
      expect(() => configFromEnv({ MAILBOX_ADMIN_TOKEN_FILE: path.join(dir, 'missing') })).toThrow(
        /MAILBOX_ADMIN_TOKEN_FILE='.*missing' cannot be read \(ENOENT\): set it to a readable file/,
      );
      expect(() =>
        configFromEnv({ MAILBOX_ADMIN_TOKEN_FILE: path.join(dir, 'admin'), MAILBOX_ADMIN_TOKEN: 'another-token-0123456' }),
      ).toThrow('MAILBOX_ADMIN_TOKEN and MAILBOX_ADMIN_TOKEN_FILE are both set');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a port out of range in MAILBOX_REDIS_CLUSTER is refused at startup naming that variable', () => {
    const config = configFromEnv({ MAILBOX_REDIS_CLUSTER: 'n1:7000,n2:99999' });
    expect(() => checkConfig(config)).toThrow(StartupError);
    expect(() => checkConfig(config)).toThrow(
      /^MAILBOX_REDIS_CLUSTER 'redis-cluster:\/\/n1:7000,n2:99999' has 'n2:99999', which is not host:port/,
    );
  });

  it('a programmatic configuration folds the same way', () => {
    expect(parseConfig({ redisCluster: 'n1:7000' }).redisUrl).toBe('redis-cluster://n1:7000');
  });
});
