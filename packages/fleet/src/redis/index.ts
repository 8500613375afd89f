export { RedisCapacity } from './redis-capacity.js';
export { RateLimitRedis, type RateLimitRedisOptions } from './rate-limit-redis.js';
export {
  fleetName,
  outagePolicy,
  redisUrl,
  resolveRedisCapacityOptions,
  type FleetLog,
  type FleetOutagePolicy,
  type RedisCapacityOptions,
  type ResolvedRedisCapacityOptions,
  type SharedLimits,
} from './redis-capacity-options.js';
export { fleetPrefix, poolPrefix } from './fleet-keys.js';
export { BATCH_LUA, RENEW_LUA } from './lua-scripts.js';
