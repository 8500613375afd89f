/**
 * Lua shared by every capacity script (docs/decisions/025-fleet-redis-capacity.md). One pool —
 * one provider/model — is a set of keys under a prefix:
 *
 * - `leases`  HASH lease id → state and owner: `q<node>` queued, `s<node>` slot, `c<node>`
 *             cleaning (in flight, slot given back). Its length is the pool's in-flight count.
 * - `queue`   ZSET of queued lease ids, scored by admission sequence: the fleet's FIFO.
 * - `meta`    HASH `used` (slots held) and `seq` (last admission sequence).
 * - `nodes`   ZSET node id → when its renewal runs out (ms); a node past it is dead.
 * - `node:<id>` SET of that node's lease ids, so that a dead node's leases are found at once.
 * - `rate`    HASH of one-second buckets `r:<s>` (admissions) and `t:<s>` (tokens used).
 *
 * Every script first reclaims the leases of dead nodes and hands the freed slots to the queue's
 * head, so no transition ever sees a dead node's slot. Time is the caller's `now` when given
 * (tests pass an explicit clock), else the Redis server's, which every node shares.
 */
export const LUA_PRELUDE = `
local P, LEASES, QUEUE, META, NODES, RATE
local function usePool(prefix)
  P = prefix
  LEASES, QUEUE, META, NODES, RATE = P .. 'leases', P .. 'queue', P .. 'meta', P .. 'nodes', P .. 'rate'
end
local GRANTS = KEYS[1] .. 'grants:'
local WINDOW_S = 60

local function clock(given)
  if given ~= nil and given ~= '' then return tonumber(given) end
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

local function reclaim(now)
  local dead = redis.call('ZRANGEBYSCORE', NODES, '-inf', now)
  local freed = 0
  for _, node in ipairs(dead) do
    local owned = P .. 'node:' .. node
    for _, id in ipairs(redis.call('SMEMBERS', owned)) do
      local lease = redis.call('HGET', LEASES, id)
      if lease then
        local state = string.sub(lease, 1, 1)
        if state == 'q' then redis.call('ZREM', QUEUE, id)
        elseif state == 's' then redis.call('HINCRBY', META, 'used', -1) end
        redis.call('HDEL', LEASES, id)
        freed = freed + 1
      end
    end
    redis.call('DEL', owned)
    redis.call('ZREM', NODES, node)
  end
  return freed
end

-- Hands free slots to the queue's head in FIFO order, telling each owner on its channel; used
-- is the slots held now. Returns the granted ids and the slots held after.
local function grantFrom(used, maxConcurrency)
  local granted = {}
  while used < maxConcurrency do
    local head = redis.call('ZPOPMIN', QUEUE)
    if #head == 0 then break end
    local id = head[1]
    local owner = string.sub(redis.call('HGET', LEASES, id), 2)
    redis.call('HSET', LEASES, id, 's' .. owner)
    used = used + 1
    redis.call('PUBLISH', GRANTS .. owner, id)
    granted[#granted + 1] = id
  end
  return granted, used
end

local function grantNext(maxConcurrency)
  local used = tonumber(redis.call('HGET', META, 'used') or '0')
  local granted, after = grantFrom(used, maxConcurrency)
  if after ~= used then redis.call('HSET', META, 'used', after) end
  return granted
end

local function rateBucket(now)
  return math.floor(now / 1000)
end

-- Sums the window's buckets ('r' or 't'), dropping buckets that left it; returns the sum and
-- the per-second counts.
local function windowSum(kind, now)
  local second = rateBucket(now)
  local from = second - WINDOW_S + 1
  local all = redis.call('HGETALL', RATE)
  local sum, buckets = 0, {}
  for i = 1, #all, 2 do
    local field = all[i]
    local s = tonumber(string.sub(field, 3))
    if s < from then redis.call('HDEL', RATE, field)
    elseif string.sub(field, 1, 1) == kind then
      local n = tonumber(all[i + 1])
      sum = sum + n
      buckets[s] = n
    end
  end
  return sum, buckets, second
end

-- Milliseconds until the window's sum drops below limit, the oldest seconds leaving first.
local function waitBelow(sum, buckets, second, limit, now)
  for s = second - WINDOW_S + 1, second do
    sum = sum - (buckets[s] or 0)
    if sum < limit then return (s + WINDOW_S) * 1000 - now end
  end
  return WINDOW_S * 1000
end
`;
