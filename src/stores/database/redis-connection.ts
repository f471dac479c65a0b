/**
 * One Redis connection for the shared stores (rate limits, duplicate claims). No offline
 * queue: while Redis is unreachable a command fails at once (the request gets a clear 503),
 * instead of waiting for it. Unreachable at start: start-up stops, saying so (password hidden).
 *
 * Commands are auto-pipelined: those issued in one turn of the event loop (many requests'
 * claims, confirms and rate-limit takes) go to Redis in one write, and while one such
 * pipeline is in flight the next gathers, as the journal's group commit does. Redis reads
 * and answers a pipeline in one go, which costs it and the gateway much less than a round
 * trip per command (`npm run bench:scaling`).
 */
import { Redis } from 'ioredis';
import { withoutPassword } from './postgres-database';

export async function connectRedis(url: string): Promise<Redis> {
  const redis = new Redis(url, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 2_000,
    enableAutoPipelining: true,
  });
  // Reconnection is ioredis's (with back-off); errors meanwhile are answered per request.
  // The last one is kept for start-up: connect() itself only says "Connection is closed".
  let lastError: unknown;
  redis.on('error', (error) => (lastError = error));
  try {
    await redis.connect();
  } catch (error) {
    redis.disconnect();
    const why = lastError ?? error;
    throw new Error(`cannot reach Redis at ${withoutPassword(url)}: ${why instanceof Error ? why.message : String(why)}`, {
      cause: error,
    });
  }
  return redis;
}

/** Closes the connection, politely if Redis answers. */
export async function closeRedis(redis: Redis | undefined): Promise<void> {
  await redis?.quit().catch(() => redis.disconnect());
}
