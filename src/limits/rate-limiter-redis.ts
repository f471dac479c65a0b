/**
 * Rate limits in Redis, shared by every gateway of a cluster: the GCRA step of
 * rate-limiter.ts as one Lua script, so that reading and moving a key's buckets is atomic
 * across instances, on Redis's clock (instances' clocks may differ). Buckets expire when
 * idle. When Redis cannot be reached the take fails at once (no offline queue): the
 * request is refused as unavailable, never let through unlimited, never left hanging.
 */
import { Redis } from 'ioredis';
import type { RateLimiter } from './rate-limiter';

const TAKE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
local wait = 0
local arrivals = {}
for i = 1, #KEYS do
  local interval = 1000 / tonumber(ARGV[2 * i - 1])
  local cost = tonumber(ARGV[2 * i])
  local tat = tonumber(redis.call('GET', KEYS[i])) or now
  if tat < now then tat = now end
  local arrival = tat + cost * interval
  local over = arrival - now - 1000
  if over > wait then wait = over end
  arrivals[i] = arrival
end
if wait > 0 then return math.ceil(wait) end
for i = 1, #KEYS do
  redis.call('SET', KEYS[i], string.format('%.3f', arrivals[i]), 'PX', math.ceil(arrivals[i] - now) + 1000)
end
return 0
`;

type WithTake = Redis & { slipwayTake(keyCount: number, ...args: (string | number)[]): Promise<number> };

export function createRedisRateLimiter(redis: Redis, prefix: string): RateLimiter {
  redis.defineCommand('slipwayTake', { lua: TAKE });
  const client = redis as WithTake;
  return {
    async take(requests) {
      const keys = requests.map((r) => `${prefix}rate:${r.bucket}`);
      const args = requests.flatMap((r) => [r.perSecond, r.cost]);
      const waitMs = await client.slipwayTake(keys.length, ...keys, ...args);
      return waitMs > 0 ? { allowed: false, retryAfterMs: waitMs } : { allowed: true };
    },
    close: async () => {},
  };
}
