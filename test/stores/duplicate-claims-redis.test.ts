/**
 * Duplicate claims in Redis: the claims and confirms of many requests made in one turn go
 * to Redis in one write (the connection auto-pipelines), a confirm goes with the next
 * claim, and each still gets its own answer.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import type { Redis } from 'ioredis';
import { closeRedis, connectRedis } from '../../src/stores/database/redis-connection';
import { createRedisDuplicateClaims } from '../../src/stores/duplicate-claims-redis';
import { REDIS_URL, testRedisPrefix } from '../helpers/redis';

/** Counts the writes to Redis's socket. */
function countWrites(redis: Redis): { readonly count: number } {
  const stream = (redis as unknown as { stream: { write: (...args: unknown[]) => boolean } }).stream;
  const write = stream.write.bind(stream);
  const counter = { count: 0 };
  stream.write = (...args: unknown[]) => {
    counter.count++;
    return write(...args);
  };
  return counter;
}

describe('duplicate claims in Redis', () => {
  const { prefix, clean } = testRedisPrefix();
  after(clean);

  it("one turn's claims of many requests are one write to Redis, each answered for itself", async () => {
    const redis = await connectRedis(REDIS_URL);
    try {
      const claims = createRedisDuplicateClaims(redis, prefix, 60_000);
      await claims.claim(['taken']);
      await claims.confirm(['taken']);
      const writes = countWrites(redis);
      const ids = Array.from({ length: 10 }, (_, i) => `fresh-${i}`);
      const outcomes = await Promise.all(ids.map((id) => claims.claim([id])));
      assert.equal(writes.count, 1, 'ten requests, one write');
      assert.deepEqual(
        outcomes,
        ids.map(() => ['claimed']),
      );
      await Promise.all(ids.map((id) => claims.confirm([id])));
      assert.equal(writes.count, 2, 'their confirms, one more');
      // A confirm waits for the next claim and goes in its write.
      const confirmed = claims.confirm(['fresh-9']);
      await new Promise((resolve) => setImmediate(resolve));
      assert.equal(writes.count, 2, 'not yet sent');
      assert.deepEqual(await claims.claim(['another']), ['claimed']);
      await confirmed;
      assert.equal(writes.count, 3, 'the confirm went with the claim');
      assert.deepEqual(await Promise.all([claims.claim(['taken']), claims.claim(['fresh-0']), claims.claim(['new'])]), [
        ['duplicate'],
        ['duplicate'],
        ['claimed'],
      ]);
    } finally {
      await closeRedis(redis);
    }
  });
});
