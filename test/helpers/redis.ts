/** A key prefix of its own in the machine's Redis for one test file, its keys deleted afterwards. */
import crypto from 'node:crypto';
import { Redis } from 'ioredis';

export const REDIS_URL = 'redis://127.0.0.1:6379/0';

export function testRedisPrefix(): { prefix: string; clean(): Promise<void> } {
  const prefix = `slipway-test-${crypto.randomBytes(4).toString('hex')}:`;
  return {
    prefix,
    async clean() {
      const redis = new Redis(REDIS_URL);
      try {
        const keys = await redis.keys(`${prefix}*`);
        if (keys.length > 0) await redis.del(...keys);
      } finally {
        await redis.quit();
      }
    },
  };
}
