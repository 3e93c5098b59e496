/**
 * The apply script: view changes and checkpoints, atomically. Layout of KEYS and
 * ARGV is built by redisApplyPlan.ts; the op codes and their arities must match.
 *
 * KEYS: the global block's six keys (when the call has one), then one key per
 * agent block, its inbox key: the agent's other keys and its wake channel are
 * derived from it (same hash tag, same slot, and far fewer bytes per call).
 * ARGV: flags ('c' check generation + log + fencing, 'p' publish wakes, 'w' write global
 * ops and checkpoint), expected checkpoint ('' none: the stored one must be at least this, whatever the flags), this writer's prefix, the
 * default prefix, the last position of the call, the wake channel prefix, the
 * global block's op count ('' when there is no global block) and its ops, then
 * per agent block (in KEYS order) its op count and ops: code, position, arguments;
 * a call with 'c' ends with the writer's log identity ('' for a writer bound to no log), then its
 * projector lease as `<node>:<token>` ('' for an unfenced writer: no projector lease, see projections/projectorLease.ts).
 * Every argument is a string Redis converts for Lua, so the layout is terse:
 * arguments, not calls or CPU in Node, are what a script pays for per event.
 *
 * Positions are 20-digit zero-padded strings and are compared as strings: exact
 * at any size (Lua numbers are doubles). Equal-width digit strings order the same
 * bytewise and under any collation, so Lua's `<` is safe here.
 *
 * Nothing is written before every check passed and every op code was recognised
 * (Redis does not roll a script back on a runtime error). Writes are few per
 * change (they are what bounds projection throughput): an inbox entry is one
 * HSETNX and two ZADDs, unread counters move once per agent per call.
 */
import { READ_MODEL_VERSION } from '../../projections/readModel/readModelVersion';

export const APPLY_SCRIPT = `
-- Arguments per op after its code and position: S summary, O outbox, M both, I inbox entry, W inbox entry
-- with a wake, R read, A archived, U unarchived, V seen; reg/ret registry, ids identities with views; task views (decided in Node by the
-- read model's task rules, redisTaskViews.ts): tu record, tt due index, tl/tn list add/remove, tw waiting count, ts waiting since, th a history line's task, tp wake;
-- the delivery ledger (redisLedger.ts, re-stating ledgerRules.ts): lp a send answers its thread, lo a ledger opens, lg a stage,
-- le the heartbeat escalated an unwoken message, rq a reply obligation, ro it fell due unmet (and the sender's wake),
-- ln a delivered heartbeat nudge (the recipient's last nudge when newer).
local ARITY = { reg = 2, ret = 2, ids = 1, S = 2, O = 2, M = 3, I = 3, W = 5, R = 2, A = 2, U = 2, V = 2, tu = 2, tt = 2, tl = 2, tn = 2, tw = 2, ts = 2, th = 2, tp = 2,
  lp = 3, lo = 6, lg = 3, le = 2, rq = 3, ro = 4, ln = 2 }
local flags = ARGV[1]
local check = string.find(flags, 'c', 1, true) ~= nil
local publish = string.find(flags, 'p', 1, true) ~= nil
local write = string.find(flags, 'w', 1, true) ~= nil
local expected, prefix, defaultPrefix, lastPos, channelPrefix = ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6]
-- Numbers go to redis.call as text: Lua would format each with sprintf('%.14g'), about 5% of a rebuild's instructions
-- (callgrind). Literals are written as strings; counts computed here are formatted once per value and call.
local text = setmetatable({}, { __index = function(known, n)
  local formatted = tostring(n)
  known[n] = formatted
  return formatted
end })

-- 1. Parse the blocks (an unknown op fails here, before any write).
local i = 8
local function skipOps(count)
  for _ = 1, count do
    local arity = ARITY[ARGV[i]]
    if not arity then return false end
    i = i + 2 + arity
  end
  return true
end
local global, blocks, firstAgentKey = nil, {}, 1
if ARGV[7] ~= '' then
  global = { ops = tonumber(ARGV[7]), start = i }
  firstAgentKey = 7
  if not skipOps(global.ops) then return redis.error_reply('mailbox apply: unknown op ' .. tostring(ARGV[i])) end
end
for k = firstAgentKey, #KEYS do
  local block = { key = k, ops = tonumber(ARGV[i]), start = i + 1 }
  i = block.start
  if not skipOps(block.ops) then return redis.error_reply('mailbox apply: unknown op ' .. tostring(ARGV[i])) end
  blocks[#blocks + 1] = block
end

-- 2. The stored checkpoint; a rewound store, a retired generation or another log's views change nothing.
local stored = ''
if global then
  stored = redis.call('GET', KEYS[1]) or ''
  -- Below the expected checkpoint: a rewound store (live calls), or a generation missing the batch before this one.
  if expected ~= '' and stored < expected then return { 'rewound', stored, 0 } end
  if check then
    if redis.call('EXISTS', KEYS[6]) == 1 then return { 'fenced', stored, 0 } end -- a switch is under way: retry shortly
    local active = redis.call('GET', KEYS[5]) or defaultPrefix
    if active ~= prefix then return { 'stale', active, 0 } end
    -- Fencing (projector lease): only the lease's current holder writes. The writer's '<node>:<token>' must be the
    -- lease key's value (same tag as the pointer: <ns>:{<ns>}:lease:projector, redisLease.ts); '' when none holds it.
    local holder = ARGV[#ARGV]
    if holder ~= '' then
      local current = redis.call('GET', string.sub(KEYS[5], 1, #KEYS[5] - #'active') .. 'lease:projector')
      if current ~= holder then return { 'deposed', current or '', 0 } end
    end
    -- The generation names its log beside the checkpoint (same tag); a checking call ends with the writer's log ('' unbound).
    local logIdentity = ARGV[#ARGV - 1]
    if logIdentity ~= '' then
      local logKey = string.sub(KEYS[1], 1, #KEYS[1] - #'checkpoint') .. 'log'
      local owner = redis.call('GET', logKey)
      if owner and owner ~= logIdentity then return { 'foreign', owner, 0 } end
      if not owner and stored ~= '' then return { 'foreign', '', 0 } end -- views of an unknown log
      if not owner then -- empty views (e.g. Redis restarted empty, or flushed): claim them, built by this version's rules
        redis.call('SET', logKey, logIdentity)
        redis.call('SET', string.sub(logKey, 1, #logKey - #'log') .. 'rules', '${READ_MODEL_VERSION}', 'NX')
      end
    end
  end
end

-- 3. Each agent's changes: only events past the checkpoint, and each change only once.
local function applyAgent(block)
  -- The block names one key of the agent's tag (<prefix>{@b}:inbox); its other keys share the tag, hence the slot.
  -- Names are built on first use: a sender's block never touches the inbox keys, a reader's never the outbox.
  local inbox = KEYS[block.key]
  local base = string.sub(inbox, 1, #inbox - 5)
  local key = setmetatable({}, { __index = function(names, name)
    local full = base .. name
    names[name] = full
    return full
  end })
  -- unseen: entries unread, not archived and never seen (counts 'unseen'); moves with the unread set and the seen marks
  local activity, delta, applied, unseen = nil, {}, 0, 0
  -- A call of this agent's tag alone (Cluster) cannot read the checkpoint nor the lease (other slots): the agent's own
  -- mark, the last position applied to its keys, gates it instead. A late call of a deposed writer would otherwise
  -- re-apply an archive or an unarchive over a later one (those two are not written only if absent).
  local floor = stored
  if not global then floor = redis.call('GET', key.applied) or '' end
  local j = block.start
  for _ = 1, block.ops do
    local code, pos, id = ARGV[j], ARGV[j + 1], ARGV[j + 2]
    if pos > floor then
      applied = applied + 1
      if code == 'I' or code == 'W' then
        if redis.call('HSETNX', key.entries, id, ARGV[j + 3]) == 1 then
          local member = pos .. ':' .. id
          redis.call('ZADD', inbox, '0', member)
          redis.call('ZADD', key.unread, '0', member)
          delta[ARGV[j + 4]] = (delta[ARGV[j + 4]] or 0) + 1
          unseen = unseen + 1
          if publish and code == 'W' then
            local channel = channelPrefix .. string.match(inbox, '{([^}]*)}')
            redis.call('PUBLISH', channel, ARGV[j + 5] .. redis.call('ZCARD', key.unread) .. ARGV[j + 6])
          end
        end
      elseif code == 'M' or code == 'S' or code == 'O' then
        if code ~= 'O' then redis.call('HSET', key.sent, id, ARGV[j + 3]) end
        if code ~= 'S' then
          redis.call('ZADD', key.outbox, '0', pos .. ':' .. id)
          local sentAt = ARGV[j + 3 + ARITY[code] - 2]
          if activity == nil or sentAt > activity then activity = sentAt end
        end
      elseif code == 'U' then -- back in the inbox: only an archived entry; unread again when never read
        local entry = redis.call('HGET', key.entries, id)
        if entry and redis.call('HDEL', key.archived, id) == 1 and redis.call('HEXISTS', key.read, id) == 0 then
          local entryPos, priority = string.match(entry, '^(%d+)|(%a+)|')
          redis.call('ZADD', key.unread, '0', entryPos .. ':' .. id)
          delta[priority] = (delta[priority] or 0) + 1
          if redis.call('HEXISTS', key.seen, id) == 0 then unseen = unseen + 1 end
        end
      elseif code == 'V' then -- first seen mark of an entry of this inbox; unseen moves when it is unread and not archived
        local entry = redis.call('HGET', key.entries, id)
        if entry and redis.call('HSETNX', key.seen, id, ARGV[j + 3]) == 1 then
          local entryPos = string.match(entry, '^(%d+)|')
          if redis.call('ZSCORE', key.unread, entryPos .. ':' .. id) then unseen = unseen - 1 end
        end
      else -- 'R' read or 'A' archived: only for an entry of this inbox, only once
        local entry = redis.call('HGET', key.entries, id)
        local target = key.read
        if code == 'A' then target = key.archived end
        if entry and redis.call('HSETNX', target, id, ARGV[j + 3]) == 1 then
          local entryPos, priority = string.match(entry, '^(%d+)|(%a+)|')
          if redis.call('ZREM', key.unread, entryPos .. ':' .. id) == 1 then
            delta[priority] = (delta[priority] or 0) - 1
            if redis.call('HEXISTS', key.seen, id) == 0 then unseen = unseen - 1 end
          end
          if code == 'R' and (activity == nil or ARGV[j + 3] > activity) then activity = ARGV[j + 3] end
        end
      end
    end
    j = j + 2 + ARITY[code]
  end
  for priority, change in pairs(delta) do
    if change ~= 0 then redis.call('HINCRBY', key.counts, priority, text[change]) end
  end
  if unseen ~= 0 then redis.call('HINCRBY', key.counts, 'unseen', text[unseen]) end
  if activity then
    local current = redis.call('HGET', key.counts, 'lastActivityAt')
    if not current or activity > current then redis.call('HSET', key.counts, 'lastActivityAt', activity) end
  end
  if not global and lastPos > floor then redis.call('SET', key.applied, lastPos) end
  return applied
end

local applied = 0
for _, block in ipairs(blocks) do
  applied = applied + applyAgent(block)
end

-- 4. Registry changes, identities with views, and the checkpoint last.
if global and write then
  local k = 1
  local j = global.start
  -- Task and ledger keys share the checkpoint's tag: <prefix>{<ns>}:tasks..., <prefix>{<ns>}:ledger:...
  local base = string.sub(KEYS[k], 1, #KEYS[k] - #'checkpoint')
  -- The unwoken lists take the messages this call lists in one ZADD each, at the end (one command per message less
  -- for each list): a message listed and cleared in this call is only dropped from these tables. Listed at most once
  -- ever (its ledger opens once), so a message not listed here is cleared with ZREM.
  local unwokenKey, pendingKey = base .. 'unwoken', base .. 'unwoken:pending'
  local toList = { [unwokenKey] = {}, [pendingKey] = {} }
  local function unlist(key, id)
    if toList[key][id] then toList[key][id] = nil else redis.call('ZREM', key, id) end
  end
  -- The recipients of the ledgers this call opened: their marks (a send's inView, in the same event) need no ZSCORE.
  local openedTo = {}
  local function isRecipient(ledger, messageId, identity)
    local to = openedTo[messageId]
    if to then return to[identity] == true end
    return redis.call('ZSCORE', ledger .. ':to', identity) ~= false
  end
  for _ = 1, global.ops do
    local code, pos = ARGV[j], ARGV[j + 1]
    if code == 'ids' then
      local identities = {}
      for identity in string.gmatch(ARGV[j + 2], '%S+') do identities[#identities + 1] = identity end
      redis.call('SADD', KEYS[k + 3], unpack(identities))
    elseif pos > stored then
      applied = applied + 1
      local a, b = ARGV[j + 2], ARGV[j + 3]
      if code == 'reg' then
        redis.call('HSET', KEYS[k + 1], a, b)
        redis.call('HDEL', KEYS[k + 2], a)
      elseif code == 'ret' then
        if redis.call('HEXISTS', KEYS[k + 1], a) == 1 then redis.call('HSET', KEYS[k + 2], a, b) end
      else
        if code == 'tu' then
          redis.call('HSET', base .. 'tasks', a, b)
        elseif code == 'tt' then
          if b == '' then redis.call('ZREM', base .. 'tasks:timed', a) else redis.call('ZADD', base .. 'tasks:timed', b, a) end
        elseif code == 'tl' then
          redis.call('ZADD', base .. 'tasks:' .. a, '0', b)
        elseif code == 'tn' then
          redis.call('ZREM', base .. 'tasks:' .. a, b)
        elseif code == 'tw' then
          if redis.call('HINCRBY', base .. 'tasksWaiting', a, b) == 0 then
            redis.call('HDEL', base .. 'tasksWaiting', a)
            redis.call('HDEL', base .. 'tasksWaitingSince', a)
          end
        elseif code == 'ts' then
          -- A task began waiting on a (taskRules.ts): b is its waitingSinceMark, kept while any task waits on a.
          redis.call('HSET', base .. 'tasksWaitingSince', a, b)
        elseif code == 'th' then
          -- An event made a line in a task's history (taskRules.ts): a is its id, b the task's.
          redis.call('HSET', base .. 'tasks:lines', a, b)
        elseif code == 'tp' and publish then
          redis.call('PUBLISH', channelPrefix .. a, b)
        elseif code == 'lg' then
          -- A stage's first mark, for a recipient of the message only (b is '<stage letter>|<recipient>'); its count moves with it.
          local ledger = base .. 'ledger:' .. a
          if isRecipient(ledger, a, string.sub(b, 3)) and redis.call('HSETNX', ledger, b, ARGV[j + 4]) == 1 then
            local letter = string.sub(b, 1, 1)
            if redis.call('HINCRBY', ledger, '#' .. letter, '1') == 1 and letter == 'w' then
              -- Its first wake: no longer unwoken.
              unlist(unwokenKey, a)
              unlist(pendingKey, a)
            end
            -- Its first of seen and read, by a recipient due a wake ('#u' how many were, kept when a wake was expected;
            -- 'n|<@b>' marks those due none; '#a' counts them): once all of them saw or read it, no longer unwoken.
            if (letter == 's' or letter == 'r') and redis.call('HEXISTS', ledger, (letter == 's' and 'r' or 's') .. string.sub(b, 2)) == 0
              and redis.call('HEXISTS', ledger, 'n' .. string.sub(b, 2)) == 0 then
              local due = redis.call('HGET', ledger, '#u')
              if due and redis.call('HINCRBY', ledger, '#a', '1') == tonumber(due) then
                unlist(unwokenKey, a)
                unlist(pendingKey, a)
              end
            end
          end
        elseif code == 'rq' then
          -- Each recipient that has not answered owes a reply by b (ms in c); the message is due then if any owes.
          local ledger = base .. 'ledger:' .. a
          if redis.call('HEXISTS', ledger, '#') == 1 and redis.call('HSETNX', ledger, '#d', b) == 1 then
            local owed = 0
            for _, recipient in ipairs(redis.call('ZRANGE', ledger .. ':to', '0', '-1')) do
              if redis.call('HEXISTS', ledger, 'p|' .. recipient) == 0 then
                redis.call('ZADD', base .. 'owed:' .. recipient, ARGV[j + 4], a)
                owed = owed + 1
              end
            end
            if owed > 0 then redis.call('ZADD', base .. 'replies:due', ARGV[j + 4], a) end
          end
        elseif code == 'ro' then
          -- Found overdue, once: no longer due; the sender's wake (c its identity, ARGV[j + 5] the payload).
          local ledger = base .. 'ledger:' .. a
          if redis.call('HEXISTS', ledger, '#') == 1 and redis.call('HSETNX', ledger, '#o', b) == 1 then
            redis.call('ZREM', base .. 'replies:due', a)
            if publish and ARGV[j + 5] ~= '' then redis.call('PUBLISH', channelPrefix .. ARGV[j + 4], ARGV[j + 5]) end
          end
        elseif code == 'ln' then
          -- The identity's last nudge: '<at> <via>' compares by time (ISO, one length), as in the memory store.
          local current = redis.call('HGET', base .. 'nudges', a)
          if not current or current < b then redis.call('HSET', base .. 'nudges', a, b) end
        elseif code == 'le' then
          -- Escalated once by the heartbeat: no longer pending escalation (still unwoken until a wake is observed).
          local ledger = base .. 'ledger:' .. a
          if redis.call('HEXISTS', ledger, '#') == 1 and redis.call('HSETNX', ledger, '#e', b) == 1 then
            unlist(pendingKey, a)
          end
        elseif code == 'lp' then
          -- The sender answers the thread: each message awaiting its reply is replied, then none awaits it.
          local replies = base .. 'replies:' .. a
          local waiting = redis.call('HGET', replies, b)
          if waiting then
            for id in string.gmatch(waiting, '%S+') do
              local ledger = base .. 'ledger:' .. id
              if redis.call('ZSCORE', ledger .. ':to', b) and redis.call('HSETNX', ledger, 'p|' .. b, ARGV[j + 4]) == 1 then
                local replied = redis.call('HINCRBY', ledger, '#p', '1')
                if redis.call('HEXISTS', ledger, '#d') == 1 then -- a reply obligation: the sender owes nothing more
                  redis.call('ZREM', base .. 'owed:' .. b, id)
                  if replied == redis.call('ZCARD', ledger .. ':to') then redis.call('ZREM', base .. 'replies:due', id) end
                end
              end
            end
            redis.call('HDEL', replies, b)
          end
        elseif code == 'lo' then
          -- A ledger opens once: its recipients (for paging), each owing the thread a reply to it.
          local ledger = base .. 'ledger:' .. a
          if redis.call('HEXISTS', ledger, '#') == 0 then
            -- A wake is expected when not suppressed (ARGV[j + 6] its send time, ms) and some recipient but a broadcast's
            -- sender (ARGV[j + 7]) is registered and not retired (KEYS[k + 1], KEYS[k + 2]): unwoken (and pending
            -- escalation) from its send time. The message's JSON (ARGV[j + 4]) ends with its wakeExpected. Each recipient
            -- due no wake is marked 'n|<@b>', and '#u' counts those due one (only they clear it by seeing or reading it).
            local due, notDue = 0, {}
            if ARGV[j + 6] ~= '' then
              local counted = {}
              for recipient in string.gmatch(ARGV[j + 5], '%S+') do
                if not counted[recipient] then
                  counted[recipient] = true
                  if recipient ~= ARGV[j + 7] and redis.call('HEXISTS', KEYS[k + 1], recipient) == 1
                    and redis.call('HEXISTS', KEYS[k + 2], recipient) == 0 then
                    due = due + 1
                  else
                    notDue[#notDue + 1] = recipient
                  end
                end
              end
            end
            if due > 0 then
              redis.call('HSET', ledger, '#', ARGV[j + 4] .. 'true}', '#u', due)
              for _, recipient in ipairs(notDue) do redis.call('HSET', ledger, 'n|' .. recipient, '1') end
              toList[unwokenKey][a] = ARGV[j + 6]
              toList[pendingKey][a] = ARGV[j + 6]
            else
              redis.call('HSET', ledger, '#', ARGV[j + 4] .. 'false}')
            end
            local replies = base .. 'replies:' .. b
            local to = {}
            openedTo[a] = to
            for recipient in string.gmatch(ARGV[j + 5], '%S+') do
              to[recipient] = true
              redis.call('ZADD', ledger .. ':to', '0', recipient)
              local waiting = redis.call('HGET', replies, recipient)
              if waiting then waiting = waiting .. ' ' .. a else waiting = a end
              redis.call('HSET', replies, recipient, waiting)
            end
          end
        end
      end
    end
    j = j + 2 + ARITY[code]
  end
  for key, members in pairs(toList) do
    local args = {}
    for id, score in pairs(members) do
      args[#args + 1] = score
      args[#args + 1] = id
      if #args == 1000 then -- unpack's limit on arguments is far above this
        redis.call('ZADD', key, unpack(args))
        args = {}
      end
    end
    if #args > 0 then redis.call('ZADD', key, unpack(args)) end
  end
  if lastPos > stored then
    redis.call('SET', KEYS[k], lastPos)
    stored = lastPos
  end
end
return { 'ok', stored, applied }
`;
