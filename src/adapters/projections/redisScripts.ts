/**
 * The Lua scripts of the Redis projections, registered on a client with
 * defineCommand (EVALSHA, falling back to EVAL after a restart or a SCRIPT FLUSH).
 * Each script names only keys of one hash tag (see redisKeys.ts).
 */
import type { Result } from 'ioredis';
import type { RedisClient } from './redisConnection';
import { APPLY_SCRIPT } from './redisApplyScript';

/**
 * One page of an inbox or outbox, newest first, strictly below an upper bound.
 * KEYS: source zset, entries hash, read hash, archived hash, unread zset, seen hash.
 * ARGV: box, status, upper bound ('+' or '(<member>'), wanted, scan budget,
 * then the filters on from, to, threadId and priority ('-': none; '=' and the
 * escaped value), then the wanted tags (escaped), each its own argument. A
 * stored `to` holding commas is a list of identities: the `to` filter matches
 * one of them.
 * Filters read only the stored value's head (see redisStoredValue.ts): no JSON
 * is decoded here, so no stored message can make a listing fail, and matching
 * does not depend on how the JSON was written.
 * Returns: unread count, continuation ('' when the scan finished or the page is
 * full), then per match: stored entry, readAt ('' when unread), archivedAt
 * ('' except under status archived, which lists archived entries only) and
 * seenAt ('' when never seen, and in the outbox).
 * The scan budget bounds the work of one call, so that a filter matching
 * nothing in a huge inbox never blocks Redis: the caller continues from the
 * continuation with another call.
 */
const LIST_SCRIPT = `
local box, status, upper = ARGV[1], ARGV[2], ARGV[3]
local wanted, budget = tonumber(ARGV[4]), tonumber(ARGV[5])
-- Head fields 4..7 of a stored value: from, to, threadId, tags; field 2 is the priority.
local filters, needed = {}, 0
for n, field in ipairs({ 4, 5, 6, 2 }) do
  if ARGV[5 + n] ~= '-' then
    filters[#filters + 1] = { field = field, value = string.sub(ARGV[5 + n], 2) }
    needed = math.max(needed, field)
  end
end
local tags = {}
for n = 10, #ARGV do tags[#tags + 1] = ',' .. ARGV[n] .. ',' end
if #tags > 0 then needed = 7 end
local filtered = needed > 0
local inbox = box == 'inbox'
local needArchived = inbox and status ~= 'unread'
local archivedOnly = inbox and status == 'archived'

local function fieldsMatch(value)
  local head, start = {}, 1
  for n = 1, needed do -- only as far as the filters look
    local bar = string.find(value, '|', start, true)
    head[n] = string.sub(value, start, bar - 1)
    start = bar + 1
  end
  for _, filter in ipairs(filters) do
    local stored = head[filter.field]
    if stored ~= filter.value then
      -- a list 'to' (@b,@c,) matches each identity it names; no other head field holds a comma
      if filter.field ~= 5 or not string.find(stored, ',', 1, true) then return false end
      if not string.find(',' .. stored, ',' .. filter.value .. ',', 1, true) then return false end
    end
  end
  if #tags == 0 then return true end
  local stored = ',' .. head[7]
  for _, tag in ipairs(tags) do
    if not string.find(stored, tag, 1, true) then return false end
  end
  return true
end

-- The reply: unread count, continuation (set below), then value, readAt, archivedAt and seenAt per match.
local result = { redis.call('ZCARD', KEYS[5]), '' }
local size, matched, scanned, finished, last = 2, 0, 0, false, nil
local chunkSize = wanted
if filtered or status == 'read' or archivedOnly then chunkSize = 256 end
local needReads = inbox and status ~= 'unread' -- an unread entry has no receipt
while matched < wanted and scanned < budget do
  local members = redis.call('ZREVRANGEBYLEX', KEYS[1], upper, '-', 'LIMIT', 0, chunkSize)
  local count = #members
  if count == 0 then finished = true break end
  local ids = {}
  for n = 1, count do ids[n] = string.sub(members[n], 22) end
  local values = redis.call('HMGET', KEYS[2], unpack(ids))
  local reads, archives = {}, {}
  if needReads then reads = redis.call('HMGET', KEYS[3], unpack(ids)) end
  if needArchived then archives = redis.call('HMGET', KEYS[4], unpack(ids)) end
  local seens = {}
  if inbox then seens = redis.call('HMGET', KEYS[6], unpack(ids)) end
  local examined = 0
  for n = 1, count do
    examined = n
    local value, readAt = values[n], reads[n]
    local ok = value and (not archives[n]) ~= archivedOnly
    if ok and status == 'read' and not readAt then ok = false end
    if ok and filtered then ok = fieldsMatch(value) end
    if ok then
      matched = matched + 1
      result[size + 1] = value
      result[size + 2] = readAt or ''
      result[size + 3] = archivedOnly and archives[n] or ''
      result[size + 4] = seens[n] or ''
      size = size + 4
      if matched == wanted then break end
    end
  end
  scanned = scanned + examined
  last = members[examined]
  upper = '(' .. last
  if count < chunkSize and examined == count then finished = true break end
end
if matched < wanted and not finished then result[2] = upper end
return result
`;

/** KEYS: unread zset, counts hash, entries hash. Returns unread, low, normal, high, oldest unread sentAt, last activity, unseen. */
const COUNTS_SCRIPT = `
local unread = redis.call('ZCARD', KEYS[1])
local counts = redis.call('HMGET', KEYS[2], 'low', 'normal', 'high', 'lastActivityAt', 'unseen')
local oldest = ''
if unread > 0 then
  local first = redis.call('ZRANGE', KEYS[1], 0, 0)[1]
  local entry = redis.call('HGET', KEYS[3], string.sub(first, 22))
  if entry then oldest = string.match(entry, '^[^|]*|[^|]*|([^|]*)|') end
end
return { unread, counts[1] or '0', counts[2] or '0', counts[3] or '0', oldest, counts[4] or '', counts[5] or '0' }
`;

/** KEYS: active pointer, generation counter. ARGV: default prefix, namespace. Returns a fresh generation's prefix. */
const ALLOCATE_SCRIPT = `
local active = redis.call('GET', KEYS[1]) or ARGV[1]
local activeNumber = tonumber(string.match(active, ':v(%d+):$')) or 1
local counter = tonumber(redis.call('GET', KEYS[2]) or '0')
local number = math.max(counter, activeNumber) + 1
redis.call('SET', KEYS[2], number)
return ARGV[2] .. ':v' .. number .. ':'
`;

/**
 * The blue/green switch. KEYS: active pointer, active generation's checkpoint,
 * new generation's checkpoint, fence, new generation's log key. ARGV: expected active prefix, new prefix,
 * default prefix, '1' to switch even when the checkpoints differ, the log the new generation is built from ('' not
 * checked). Switching lifts the fence in the same step. A new generation that no longer names that log lost what it
 * held while it was built (Redis restarted empty or flushed: what went in after is only part of the log, and names no
 * log): { 'lost', ... }, never switched to (it would be served as another log's views).
 */
const ACTIVATE_SCRIPT = `
local active = redis.call('GET', KEYS[1]) or ARGV[3]
if ARGV[5] ~= '' and redis.call('GET', KEYS[5]) ~= ARGV[5] then return { 'lost', active, '', '' } end
if active ~= ARGV[1] then return { 'moved', active, '', '' } end
local live = redis.call('GET', KEYS[2]) or ''
local built = redis.call('GET', KEYS[3]) or ''
if ARGV[4] ~= '1' and live ~= built then return { 'differ', active, live, built } end
redis.call('SET', KEYS[1], ARGV[2])
redis.call('DEL', KEYS[4])
return { 'switched', active, live, built }
`;

/** KEYS: fence. ARGV: the rebuilding generation, milliseconds; or '' to lift the fence this generation holds. */
const FENCE_SCRIPT = `
if ARGV[2] ~= '' then return redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2]) end
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 'OK'
`;

/**
 * Claims a generation's views for a log. KEYS: active pointer, the generation's log key, its checkpoint, its rules
 * key. ARGV: the generation's prefix, default prefix, log identity, the rules' version. Returns { 'moved', active }
 * when the generation is no longer active, else { 'owner', <owner> } ('' for views of an unknown log: a
 * checkpoint without a log), claiming views that have neither (they are empty: this version's rules build them).
 */
const CLAIM_SCRIPT = `
local active = redis.call('GET', KEYS[1]) or ARGV[2]
if active ~= ARGV[1] then return { 'moved', active } end
local owner = redis.call('GET', KEYS[2])
if owner then return { 'owner', owner } end
if redis.call('EXISTS', KEYS[3]) == 1 then return { 'owner', '' } end
redis.call('SET', KEYS[2], ARGV[3])
redis.call('SET', KEYS[4], ARGV[4])
return { 'owner', ARGV[3] }
`;

/**
 * Renews the live writer mark only while the active generation belongs to the writer's log. KEYS: active
 * pointer, writer mark. ARGV: default prefix, the log key's suffix ('{<ns>}:log', appended to the active
 * prefix: same tag), log identity, milliseconds. Returns 1 when renewed, 0 when the views are not this log's.
 */
const MARK_WRITER_SCRIPT = `
local active = redis.call('GET', KEYS[1]) or ARGV[1]
if redis.call('GET', active .. ARGV[2]) ~= ARGV[3] then return 0 end
redis.call('SET', KEYS[2], ARGV[3], 'PX', ARGV[4])
return 1
`;

export type ApplyReply = [
  status: 'ok' | 'stale' | 'rewound' | 'fenced' | 'foreign' | 'deposed',
  checkpointOrPrefixOrOwner: string,
  applied: number,
];
export type ClaimReply = [status: 'moved' | 'owner', activeOrOwner: string];
export type ListReply = [unread: number, continuation: string, ...entries: string[]];
export type CountsReply = [
  unread: number,
  low: string,
  normal: string,
  high: string,
  oldestUnreadAt: string,
  lastActivityAt: string,
  unseen: string,
];
export type ActivateReply = ['moved' | 'differ' | 'switched' | 'lost', active: string, live: string, built: string];

declare module 'ioredis' {
  interface RedisCommander<Context> {
    mailboxApply(numKeys: number, ...keysAndArgs: string[]): Result<ApplyReply, Context>;
    mailboxList(...keysAndArgs: string[]): Result<ListReply, Context>;
    mailboxCounts(...keys: string[]): Result<CountsReply, Context>;
    mailboxAllocate(...keysAndArgs: string[]): Result<string, Context>;
    mailboxActivate(...keysAndArgs: string[]): Result<ActivateReply, Context>;
    mailboxFence(...keysAndArgs: string[]): Result<string, Context>;
    mailboxClaim(...keysAndArgs: string[]): Result<ClaimReply, Context>;
    mailboxMarkWriter(...keysAndArgs: string[]): Result<number, Context>;
  }
}

/** Registers the scripts on a client (idempotent per client). */
export function defineMailboxScripts(client: RedisClient): void {
  client.defineCommand('mailboxApply', { lua: APPLY_SCRIPT });
  client.defineCommand('mailboxList', { lua: LIST_SCRIPT, numberOfKeys: 6, readOnly: true });
  client.defineCommand('mailboxCounts', { lua: COUNTS_SCRIPT, numberOfKeys: 3, readOnly: true });
  client.defineCommand('mailboxAllocate', { lua: ALLOCATE_SCRIPT, numberOfKeys: 2 });
  client.defineCommand('mailboxActivate', { lua: ACTIVATE_SCRIPT, numberOfKeys: 5 });
  client.defineCommand('mailboxFence', { lua: FENCE_SCRIPT, numberOfKeys: 1 });
  client.defineCommand('mailboxClaim', { lua: CLAIM_SCRIPT, numberOfKeys: 4 });
  client.defineCommand('mailboxMarkWriter', { lua: MARK_WRITER_SCRIPT, numberOfKeys: 2 });
}
