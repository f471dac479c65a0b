/**
 * One Redis connection for the shared stores (rate limits, duplicate claims). No offline
 * queue: while Redis is unreachable a command fails at once (the request gets a clear 503),
 * instead of waiting for it. Unreachable at start: start-up stops, saying so (password hidden).
 */
import { Redis } from 'ioredis';
import { withoutPassword } from './postgres-database';

export async function connectRedis(url: string): Promise<Redis> {
  const redis = new Redis(url, { lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 1, connectTimeout: 2_000 });
  // Reconnection is ioredis's (with back-off); errors meanwhile are answered per request.
  redis.on('error', () => {});
  try {
    await redis.connect();
  } catch (error) {
    redis.disconnect();
    throw new Error(`cannot reach Redis at ${withoutPassword(url)}: ${error instanceof Error ? error.message : String(error)}`, {
      cause: error,
    });
  }
  return redis;
}

/** Closes the connection, politely if Redis answers. */
export async function closeRedis(redis: Redis | undefined): Promise<void> {
  await redis?.quit().catch(() => redis.disconnect());
}
