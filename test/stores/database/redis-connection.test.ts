/**
 * The one Redis connection of a gateway (stores/database/redis-connection.ts), against a real
 * redis-server of the test's own: it connects, says plainly (password hidden) when Redis
 * cannot be reached at start, fails a command at once while Redis is down instead of
 * queueing it, comes back by itself when Redis does, and closes whether or not Redis answers.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { closeRedis, connectRedis } from '../../../src/stores/database/redis-connection';
import { sparePort, startPrivateRedis, type PrivateService } from '../../helpers/private-services';
import { until } from '../../helpers/until';

describe('the Redis connection', () => {
  let service: PrivateService;
  before(async () => {
    service = await startPrivateRedis();
  });
  after(async () => service.destroy());

  it('connects and answers commands; closes politely', async () => {
    const redis = await connectRedis(service.url);
    assert.equal(await redis.ping(), 'PONG');
    await closeRedis(redis);
    await until(
      () => redis.status,
      (status) => status === 'end',
    );
  });

  it('unreachable at start: start-up stops with where it looked, and never the password', async () => {
    const port = await sparePort();
    await assert.rejects(connectRedis(`redis://:hunter2secret@127.0.0.1:${port}/0`), (error: Error) => {
      assert.match(error.message, new RegExp(`^cannot reach Redis at redis://:\\*+@127\\.0\\.0\\.1:${port}/0: .*ECONNREFUSED`));
      assert.ok(!error.message.includes('hunter2secret'), error.message);
      return true;
    });
  });

  it('while Redis is down a command fails at once (no offline queue), and the connection comes back by itself', async () => {
    const redis = await connectRedis(service.url);
    try {
      await redis.set('slipway-test:connection', '1');
      await service.stop();
      await until(
        () => redis.status,
        (status) => status !== 'ready',
      );
      await assert.rejects(redis.get('slipway-test:connection'), /enableOfflineQueue options is false/);
      await service.start();
      await until(
        () => redis.status,
        (status) => status === 'ready',
        10_000,
      );
      assert.equal(await redis.ping(), 'PONG');
    } finally {
      await closeRedis(redis);
    }
  });

  it('closes without Redis answering, and with no connection at all', async () => {
    const redis = await connectRedis(service.url);
    await service.stop();
    await closeRedis(redis); // quit() cannot be sent: the connection is dropped instead
    await closeRedis(undefined);
    await service.start();
  });
});
