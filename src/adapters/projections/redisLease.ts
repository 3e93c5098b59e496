/**
 * The lease of one shared job in Redis (port: projections/projectorLease.ts).
 *
 *   <ns>:{<ns>}:lease:<name>         `<node>:<token>` of the holder, expiring (PX) unless renewed
 *   <ns>:{<ns>}:lease:<name>:token   the last token granted: tokens grow while Redis keeps its data, and each is at
 *                                    least Redis's clock in microseconds (TIME), so a token drawn after the data
 *                                    was lost is above every token granted before (see ACQUIRE_SCRIPT)
 *   <ns>:{<ns>}:lease:<name>:records a hash the holders keep for each other (the heartbeat's nudges), written only
 *                                    by the holder, under the same fence
 *
 * Both keys share the namespace's global tag, hence one slot on a Cluster, and
 * the apply script reads the projector's lease key beside the checkpoint to
 * refuse the writes of any writer that is not its holder (redisApplyScript.ts).
 * The fence is the holder's `<node>:<token>` compared for equality, not the
 * token compared with the counter: the counter goes back to 0 when Redis loses
 * its data (restarted empty, FLUSHALL, a replica promoted without the last
 * writes), and a holder paused (SIGSTOP) across the loss then passed a fence of
 * "token >= counter" with a token above or equal to its successor's. Equality
 * needs no clock and no counter that survives: a lease key that is gone or
 * names another holder refuses the write, whatever the numbers. Each step is
 * one script, so that taking the lease and drawing its token are one act.
 *
 * Equality alone let a token repeat: a counter that started again at 1 after the loss gave a node the very
 * `<node>:1` it held before it (a node restarted under the same id, or the same node taking the lease again), and a
 * late write of its earlier term then matched the new term's lease key. A token is therefore never below Redis's
 * clock (microseconds, exact in a Lua number until the year 2255): after a loss the next token is above every one
 * granted before, unless Redis's clock went back across the loss by more than the time since that grant.
 */
import type { Result } from 'ioredis';
import type { FencedRecords, LeaseHolder, LeaseStore } from '../../projections/projectorLease';
import { redisCall, type RedisClient } from './redisConnection';
import type { RedisKeys } from './redisKeys';

/**
 * KEYS: lease, token counter. ARGV: node, ttl ms. Returns the new token, or '' when held (SET NX semantics).
 * The token is the larger of the last one plus 1 and Redis's clock in microseconds: it grows with every take while
 * Redis keeps its data, and a counter lost with the data starts again from the clock, not from 1. Formatted with
 * '%.0f' (tostring would give '1.7649e+15').
 */
const ACQUIRE_SCRIPT = `
if redis.call('EXISTS', KEYS[1]) == 1 then return '' end
local time = redis.call('TIME')
local token = tonumber(time[1]) * 1000000 + tonumber(time[2])
local last = tonumber(redis.call('GET', KEYS[2]) or '0') or 0
if last >= token then token = last + 1 end
token = string.format('%.0f', token)
redis.call('SET', KEYS[2], token)
redis.call('SET', KEYS[1], ARGV[1] .. ':' .. token, 'NX', 'PX', ARGV[2])
return token
`;

/** KEYS: lease. ARGV: `<node>:<token>`, ttl ms. Compare-and-PEXPIRE: 1 renewed, 0 not this holder's. */
const RENEW_SCRIPT = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
`;

/** KEYS: lease. ARGV: `<node>:<token>`. Compare-and-DEL: another holder's lease is left alone. */
const RELEASE_SCRIPT = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`;

/**
 * KEYS: lease, records. ARGV: `<node>:<token>`, then field and value pairs (an empty value deletes the field).
 * Compare-and-write: 1 written, 0 not this holder's (nothing written).
 */
const WRITE_RECORDS_SCRIPT = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
for i = 2, #ARGV, 2 do
  if ARGV[i + 1] == '' then redis.call('HDEL', KEYS[2], ARGV[i]) else redis.call('HSET', KEYS[2], ARGV[i], ARGV[i + 1]) end
end
return 1
`;

declare module 'ioredis' {
  interface RedisCommander<Context> {
    mailboxLeaseAcquire(...keysAndArgs: string[]): Result<string, Context>;
    mailboxLeaseRenew(...keysAndArgs: string[]): Result<number, Context>;
    mailboxLeaseRelease(...keysAndArgs: string[]): Result<number, Context>;
    mailboxLeaseWriteRecords(...keysAndArgs: string[]): Result<number, Context>;
  }
}

const NAME_PATTERN = /^[a-z][a-z0-9-]{0,31}$/;

export function leaseKey(keys: RedisKeys, name: string): string {
  return `${keys.namespace}:${keys.globalTag}:lease:${name}`;
}

export function leaseTokenKey(keys: RedisKeys, name: string): string {
  return `${leaseKey(keys, name)}:token`;
}

/** `<node>:<token>` (node ids may hold colons: the token is after the last one). */
export function parseHolder(value: string | null): LeaseHolder | null {
  if (value === null) return null;
  const colon = value.lastIndexOf(':');
  if (colon <= 0 || !/^[0-9]+$/.test(value.slice(colon + 1))) return null;
  return { node: value.slice(0, colon), token: BigInt(value.slice(colon + 1)) };
}

export class RedisLease implements LeaseStore {
  private readonly key: string;
  private readonly tokenKey: string;
  readonly records: FencedRecords;

  constructor(
    private readonly client: RedisClient,
    keys: RedisKeys,
    readonly name: string,
  ) {
    if (!NAME_PATTERN.test(name)) throw new Error(`Lease name '${name}' must be 1..32 of [a-z0-9-], starting with a letter`);
    this.key = leaseKey(keys, name);
    this.tokenKey = leaseTokenKey(keys, name);
    client.defineCommand('mailboxLeaseAcquire', { lua: ACQUIRE_SCRIPT, numberOfKeys: 2 });
    client.defineCommand('mailboxLeaseRenew', { lua: RENEW_SCRIPT, numberOfKeys: 1 });
    client.defineCommand('mailboxLeaseRelease', { lua: RELEASE_SCRIPT, numberOfKeys: 1 });
    client.defineCommand('mailboxLeaseWriteRecords', { lua: WRITE_RECORDS_SCRIPT, numberOfKeys: 2 });
    const recordsKey = `${this.key}:records`;
    const what = `Redis ${name} lease`;
    this.records = {
      read: async () => new Map(Object.entries(await redisCall(what, () => client.hgetall(recordsKey)))),
      write: async (node, token, entries) => {
        const pairs = [...entries].flatMap(([field, value]) => [field, value ?? '']);
        const written = await redisCall(what, () =>
          client.mailboxLeaseWriteRecords(this.key, recordsKey, `${node}:${token}`, ...pairs),
        );
        return written === 1;
      },
    };
  }

  async acquire(node: string, ttlMs: number): Promise<bigint | null> {
    const token = await redisCall(`Redis ${this.name} lease`, () =>
      this.client.mailboxLeaseAcquire(this.key, this.tokenKey, node, String(ttlMs)),
    );
    return token === '' ? null : BigInt(token);
  }

  async renew(node: string, token: bigint, ttlMs: number): Promise<boolean> {
    const renewed = await redisCall(`Redis ${this.name} lease`, () =>
      this.client.mailboxLeaseRenew(this.key, `${node}:${token}`, String(ttlMs)),
    );
    return renewed === 1;
  }

  async release(node: string, token: bigint): Promise<void> {
    await redisCall(`Redis ${this.name} lease`, () => this.client.mailboxLeaseRelease(this.key, `${node}:${token}`));
  }

  async holder(): Promise<LeaseHolder | null> {
    // The holder and the time its lease has left, read together (a follower's readiness says how soon a silent leader's runs out).
    const [value, ttl] = (await redisCall(`Redis ${this.name} lease`, () =>
      this.client.eval("return { redis.call('GET', KEYS[1]), redis.call('PTTL', KEYS[1]) }", 1, this.key),
    )) as [string | null, number];
    const holder = parseHolder(value);
    return holder === null || ttl < 0 ? holder : { ...holder, expiresInMs: ttl };
  }
}
