import { LUA_PRELUDE } from './lua-prelude.js';

/**
 * Admits one lease (KEYS: fleet prefix, pool prefix; ARGV: now, lease ttl ms, lease id, node id,
 * maxConcurrency, maxQueued, maxInflight, requests/min, tokens/min — 0 for no rate limit).
 * Replies `{outcome, n, retryMs}`: `granted` or `queued` (n: calls ahead of it or holding slots),
 * or a refusal — `InflightFull`, `QueueFull` (n: the calls counted), `RateLimited` (n: the limit,
 * retryMs: until the window has room). The same lease id admitted twice answers its state.
 */
export const ADMIT_LUA = `${LUA_PRELUDE}
usePool(KEYS[2])
local now = clock(ARGV[1])
local ttl, id, node = tonumber(ARGV[2]), ARGV[3], ARGV[4]
local maxConcurrency, maxQueued, maxInflight = tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7])
local rpm, tpm = tonumber(ARGV[8]), tonumber(ARGV[9])
if reclaim(now) > 0 then grantNext(maxConcurrency) end
local existing = redis.call('HGET', LEASES, id)
if existing then
  return {string.sub(existing, 1, 1) == 'q' and 'queued' or 'granted', 0, 0}
end
if rpm > 0 then
  local sum, buckets, second = windowSum('r', now)
  if sum >= rpm then return {'RateLimited', rpm, waitBelow(sum, buckets, second, rpm, now)} end
end
if tpm > 0 then
  local sum, buckets, second = windowSum('t', now)
  if sum >= tpm then return {'RateLimited', tpm, waitBelow(sum, buckets, second, tpm, now)} end
end
local inflight = redis.call('HLEN', LEASES)
if inflight >= maxInflight then return {'InflightFull', inflight, 0} end
local queued = redis.call('ZCARD', QUEUE)
local used = tonumber(redis.call('HGET', META, 'used') or '0')
local state
if queued == 0 and used < maxConcurrency then
  redis.call('HSET', META, 'used', used + 1)
  state = 's'
elseif queued >= maxQueued then
  return {'QueueFull', queued + used, 0}
else
  redis.call('ZADD', QUEUE, redis.call('HINCRBY', META, 'seq', 1), id)
  state = 'q'
end
redis.call('HSET', LEASES, id, state .. node)
redis.call('SADD', P .. 'node:' .. node, id)
redis.call('ZADD', NODES, 'GT', now + ttl, node)
if rpm > 0 then redis.call('HINCRBY', RATE, 'r:' .. rateBucket(now), 1) end
return {state == 's' and 'granted' or 'queued', queued + used, 0}
`;

/**
 * A lease gives back its slot or queue place and stays in flight (KEYS: fleet prefix, pool
 * prefix; ARGV: now, lease id, maxConcurrency). A lease that is not queued or holding a slot
 * — already left, released or reclaimed — is left alone. Replies the lease ids granted a slot.
 */
export const LEAVE_LUA = `${LUA_PRELUDE}
usePool(KEYS[2])
local now = clock(ARGV[1])
local id, maxConcurrency = ARGV[2], tonumber(ARGV[3])
reclaim(now)
local lease = redis.call('HGET', LEASES, id)
if lease then
  local state, node = string.sub(lease, 1, 1), string.sub(lease, 2)
  if state == 'q' then
    redis.call('ZREM', QUEUE, id)
    redis.call('HSET', LEASES, id, 'c' .. node)
  elseif state == 's' then
    redis.call('HINCRBY', META, 'used', -1)
    redis.call('HSET', LEASES, id, 'c' .. node)
  end
end
return grantNext(maxConcurrency)
`;

/**
 * A lease is done: everything it holds is given back, and the tokens its call used join the
 * tokens-per-minute window (KEYS: fleet prefix, pool prefix; ARGV: now, lease id,
 * maxConcurrency, tokens). Releasing an unknown lease frees nothing, so a release whose reply
 * was lost can be sent again. Replies the lease ids granted a slot.
 */
export const RELEASE_LUA = `${LUA_PRELUDE}
usePool(KEYS[2])
local now = clock(ARGV[1])
local id, maxConcurrency, tokens = ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4])
reclaim(now)
local lease = redis.call('HGET', LEASES, id)
if lease then
  local state, node = string.sub(lease, 1, 1), string.sub(lease, 2)
  if state == 'q' then redis.call('ZREM', QUEUE, id)
  elseif state == 's' then redis.call('HINCRBY', META, 'used', -1) end
  redis.call('HDEL', LEASES, id)
  redis.call('SREM', P .. 'node:' .. node, id)
  if tokens > 0 then redis.call('HINCRBY', RATE, 't:' .. rateBucket(now), tokens) end
end
return grantNext(maxConcurrency)
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
