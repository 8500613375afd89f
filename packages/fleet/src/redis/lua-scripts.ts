import { LUA_PRELUDE } from './lua-prelude.js';

/**
 * The transitions of one pool, applied in order in one script run — one round trip for every
 * admission, leave and release a node issued in the same tick (KEYS: fleet prefix, pool prefix;
 * ARGV: now, lease ttl ms, node id, maxConcurrency, maxQueued, maxInflight, requests/min,
 * tokens/min (0: no rate limit), then three values per transition: `a` (admit), `l` (leave) or
 * `r` (release), the lease id, and the tokens a released call used). Replies one string each:
 *
 * - admit: `granted <n>` or `queued <n>` (n: calls ahead of it or holding slots), or a refusal —
 *   `InflightFull <n>`, `QueueFull <n>` (n: the calls counted), `RateLimited <limit> <wait ms>`.
 *   The same lease admitted twice answers its state and takes nothing more.
 * - leave: the lease gives back its slot or queue place and stays in flight (SCH-5, SCH-15).
 * - release: the lease is done; its tokens join the tokens-per-minute window.
 *
 * A leave or release of a lease not holding what it gives back (left, released or reclaimed
 * already) frees nothing, so one whose reply was lost can be sent again. Their replies list
 * the lease ids granted a slot, separated by spaces.
 */
export const BATCH_LUA = `${LUA_PRELUDE}
usePool(KEYS[2])
local now = clock(ARGV[1])
local ttl, node = tonumber(ARGV[2]), ARGV[3]
local maxConcurrency, maxQueued, maxInflight = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])
local rpm, tpm = tonumber(ARGV[7]), tonumber(ARGV[8])
if reclaim(now) > 0 then grantNext(maxConcurrency) end
-- Slots held, kept here across the batch and written back once; likewise the node's renewal.
local used = tonumber(redis.call('HGET', META, 'used') or '0')
local usedBefore, created = used, false

local function grant()
  local granted
  granted, used = grantFrom(used, maxConcurrency)
  return table.concat(granted, ' ')
end

local function admit(id)
  local existing = redis.call('HGET', LEASES, id)
  if existing then
    return (string.sub(existing, 1, 1) == 'q' and 'queued' or 'granted') .. ' 0'
  end
  if rpm > 0 then
    local sum, buckets, second = windowSum('r', now)
    if sum >= rpm then return 'RateLimited ' .. rpm .. ' ' .. waitBelow(sum, buckets, second, rpm, now) end
  end
  if tpm > 0 then
    local sum, buckets, second = windowSum('t', now)
    if sum >= tpm then return 'RateLimited ' .. tpm .. ' ' .. waitBelow(sum, buckets, second, tpm, now) end
  end
  local inflight = redis.call('HLEN', LEASES)
  if inflight >= maxInflight then return 'InflightFull ' .. inflight end
  local queued = redis.call('ZCARD', QUEUE)
  local ahead = queued + used
  local state
  if queued == 0 and used < maxConcurrency then
    used = used + 1
    state = 's'
  elseif queued >= maxQueued then
    return 'QueueFull ' .. ahead
  else
    redis.call('ZADD', QUEUE, redis.call('HINCRBY', META, 'seq', 1), id)
    state = 'q'
  end
  redis.call('HSET', LEASES, id, state .. node)
  redis.call('SADD', P .. 'node:' .. node, id)
  created = true
  if rpm > 0 then redis.call('HINCRBY', RATE, 'r:' .. rateBucket(now), 1) end
  return (state == 's' and 'granted ' or 'queued ') .. ahead
end

local function leave(id)
  local lease = redis.call('HGET', LEASES, id)
  if lease then
    local state, owner = string.sub(lease, 1, 1), string.sub(lease, 2)
    if state == 'q' then
      redis.call('ZREM', QUEUE, id)
      redis.call('HSET', LEASES, id, 'c' .. owner)
    elseif state == 's' then
      used = used - 1
      redis.call('HSET', LEASES, id, 'c' .. owner)
    end
  end
  return grant()
end

local function release(id, tokens)
  local lease = redis.call('HGET', LEASES, id)
  if lease then
    local state, owner = string.sub(lease, 1, 1), string.sub(lease, 2)
    if state == 'q' then redis.call('ZREM', QUEUE, id)
    elseif state == 's' then used = used - 1 end
    redis.call('HDEL', LEASES, id)
    redis.call('SREM', P .. 'node:' .. owner, id)
    if tokens > 0 then redis.call('HINCRBY', RATE, 't:' .. rateBucket(now), tokens) end
  end
  return grant()
end

local replies = {}
for i = 9, #ARGV, 3 do
  local kind, id = ARGV[i], ARGV[i + 1]
  if kind == 'a' then replies[#replies + 1] = admit(id)
  elseif kind == 'l' then replies[#replies + 1] = leave(id)
  else replies[#replies + 1] = release(id, tonumber(ARGV[i + 2])) end
end
if used ~= usedBefore then redis.call('HSET', META, 'used', used) end
if created then redis.call('ZADD', NODES, 'GT', now + ttl, node) end
return replies
`;

/**
 * One node's renewal, covering all its leases (KEYS: fleet prefix; ARGV: now, lease ttl ms,
 * node id, pool count, then per pool: prefix, maxConcurrency, k, and the k lease ids the node
 * believes queued). Renews the node in the fleet and in each pool, reclaims dead nodes' leases
 * there, and replies `{live nodes, per pool: known flag ('1'/'0') then one state letter per
 * queued id (q, s, c, or x for gone)}`: a node that missed a grant message learns it here.
 */
export const RENEW_LUA = `${LUA_PRELUDE}
local now = clock(ARGV[1])
local ttl, node = tonumber(ARGV[2]), ARGV[3]
local members = KEYS[1] .. 'members'
redis.call('ZREMRANGEBYSCORE', members, '-inf', now)
redis.call('ZADD', members, now + ttl, node)
local reply = {redis.call('ZCARD', members)}
local i = 5
for _ = 1, tonumber(ARGV[4]) do
  usePool(ARGV[i])
  local maxConcurrency, k = tonumber(ARGV[i + 1]), tonumber(ARGV[i + 2])
  i = i + 3
  if reclaim(now) > 0 then grantNext(maxConcurrency) end
  local known = redis.call('ZSCORE', NODES, node) and '1' or '0'
  redis.call('ZADD', NODES, 'GT', now + ttl, node)
  local states = {known}
  for j = i, i + k - 1 do
    local lease = redis.call('HGET', LEASES, ARGV[j])
    states[#states + 1] = lease and string.sub(lease, 1, 1) or 'x'
  end
  i = i + k
  reply[#reply + 1] = table.concat(states)
end
return reply
`;
