/**
 * Per-key rate limits through the public interface (HTTP 429, Retry-After, the path's own
 * error shape, nothing submitted), and the Redis limiter holding one limit across several
 * connections, as across the gateways of a cluster.
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import bs58 from 'bs58';
import { Keypair, VersionedTransaction, type Connection } from '@solana/web3.js';
import { dataPaths } from '../../src/config/config';
import { createMemoryRateLimiter } from '../../src/limits/rate-limiter-memory';
import { createRedisRateLimiter } from '../../src/limits/rate-limiter-redis';
import type { RateLimiter } from '../../src/limits/rate-limiter';
import { createSqliteKeyStore } from '../../src/stores/key-store-sqlite';
import { startTestGateway, waitForKey, type TestGateway } from '../helpers/gateway';
import { runCli } from '../helpers/process';
import { REDIS_URL, testRedisPrefix } from '../helpers/redis';
import { post, submitBatch } from '../helpers/rpc';
import { balanceOf, connect, fundedKeypair, transferTx } from '../helpers/solana';
import { until } from '../helpers/until';

describe('per-key rate limits', () => {
  let gw: TestGateway;
  let connection: Connection;
  let limited: { id: string; key: string };

  before(async () => {
    gw = await startTestGateway({ slotMs: 50 });
    connection = connect(gw.url, gw.key);
    const store = createSqliteKeyStore(dataPaths(gw.dataDir).keys);
    const created = await store.create({ name: 'limited', bundle: true, tps: 3, bundlesPerSecond: 1 });
    await store.close();
    limited = { id: created.record.id, key: created.key };
    await waitForKey(gw.url, limited.key);
  });
  after(() => gw.close());

  const send = (tx: string) =>
    post(gw.url, { jsonrpc: '2.0', id: 1, method: 'sendTransaction', params: [tx, { encoding: 'base64' }] }, { 'x-api-key': limited.key });
  const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  it('sendTransaction over the limit: HTTP 429, Retry-After, -32097, and nothing submitted', async () => {
    const alice = await fundedKeypair(connection);
    const bob = Keypair.generate();
    const txs = await Promise.all([1, 2, 3, 4].map((n) => transferTx(connection, alice, bob.publicKey, n * 1_000_000)));
    await pause(1_100); // a full bucket
    const first = await Promise.all(txs.slice(0, 3).map(send));
    for (const answer of first) assert.equal(typeof answer.body.result, 'string', JSON.stringify(answer.body));
    const over = await send(txs[3]!);
    assert.equal(over.status, 429);
    assert.equal(over.body.error.code, -32097);
    assert.match(
      over.body.error.message,
      new RegExp(
        `^Rate limit exceeded: API key ${limited.id} may send 3 transactions per second; nothing was submitted; this request fits again in 0\\.\\d{3} s$`,
      ),
    );
    assert.equal(over.headers.get('retry-after'), '1');
    await until(
      () => balanceOf(connection, bob.publicKey),
      (b) => b === 6_000_000,
    );
    await pause(300);
    assert.equal(await balanceOf(connection, bob.publicKey), 6_000_000, 'the refused one was not submitted');
    const refusedSignature = bs58.encode(VersionedTransaction.deserialize(Buffer.from(txs[3]!, 'base64')).signatures[0]!);
    assert.deepEqual(await gw.app.journal.find(refusedSignature), [], 'not journaled');
    // It fits again once the bucket has refilled.
    await pause(Math.ceil(over.body.error.data.retryAfterMs));
    assert.equal(typeof (await send(txs[3]!)).body.result, 'string');
  });

  it('a batch counts each member and is refused whole when it does not fit; one larger than the limit can never fit', async () => {
    const alice = await fundedKeypair(connection);
    const bob = Keypair.generate();
    const txs = await Promise.all([1, 2, 3, 4].map((n) => transferTx(connection, alice, bob.publicKey, n * 1_000_000)));
    await pause(1_100);
    const two = await submitBatch(gw.url, limited.key, txs.slice(0, 2));
    assert.equal(two.body.code, 1);
    const refused = await submitBatch(gw.url, limited.key, txs.slice(2, 4));
    assert.equal(refused.status, 429);
    assert.equal(refused.body.code, -32097);
    assert.match(refused.body.message, /^Rate limit exceeded: /);
    assert.ok(Number(refused.headers.get('retry-after')) >= 1);
    const never = await submitBatch(gw.url, limited.key, txs);
    assert.equal(never.status, 429);
    assert.equal(
      never.body.message,
      `this request has 4 transactions, more than API key ${limited.id} may send in a second (3): it can never fit; send fewer at a time or raise the key's limit (bin/slipway keys set ${limited.id} --tps N)`,
    );
    assert.equal(never.headers.get('retry-after'), null);
    await pause(500);
    assert.equal(await balanceOf(connection, bob.publicKey), 3_000_000, 'only the first batch was submitted');
  });

  it('bundles count against bundles per second too; keys set changes a limit without a restart', async () => {
    const alice = await fundedKeypair(connection);
    const bundle = async (lamports: number) => [await transferTx(connection, alice, Keypair.generate().publicKey, lamports)];
    await pause(1_100);
    const sendBundle = async (txs: string[]) =>
      post(gw.url, { jsonrpc: '2.0', id: 1, method: 'sendBundle', params: [txs, { encoding: 'base64' }] }, { 'x-api-key': limited.key });
    assert.match((await sendBundle(await bundle(1_000_000))).body.result, /^[0-9a-f]{64}$/);
    const second = await sendBundle(await bundle(2_000_000));
    assert.equal(second.status, 429);
    assert.match(second.body.error.message, new RegExp(`may send 3 transactions and 1 bundles per second`));

    const changed = await runCli(['keys', 'set', limited.id, '--bundles-per-second', 'off', '--tps', '50', '--data-dir', gw.dataDir]);
    assert.equal(changed.code, 0, changed.stderr);
    assert.match(changed.stderr, /50 transactions\/s, no bundle limit/);
    const listed = await runCli(['keys', 'list', '--json', '--data-dir', gw.dataDir]);
    const record = JSON.parse(listed.stdout).find((k: { id: string }) => k.id === limited.id);
    assert.deepEqual([record.tps, record.bundlesPerSecond], [50, null]);
    // Within a second the server has it: bundles go through again.
    const txs = await bundle(3_000_000);
    await until(
      async () => (await sendBundle(txs)).status,
      (status) => status === 200,
      3_000,
    );
  });

  it('keys without limits are not counted', async () => {
    const alice = await fundedKeypair(connection);
    const txs = await Promise.all(
      Array.from({ length: 8 }, (_, n) => transferTx(connection, alice, Keypair.generate().publicKey, 1_000_000 + n)),
    );
    const answers = await Promise.all(
      txs.map((tx) =>
        post(gw.url, { jsonrpc: '2.0', id: 1, method: 'sendTransaction', params: [tx, { encoding: 'base64' }] }, { 'x-api-key': gw.key }),
      ),
    );
    for (const answer of answers) assert.equal(typeof answer.body.result, 'string');
  });

  it('refuses a bad limit on the command line, saying what it takes', async () => {
    const bad = await runCli(['keys', 'set', limited.id, '--tps', '0', '--data-dir', gw.dataDir]);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /keys set --tps takes a whole number from 1 to 1000000, or off \(got "0"\)/);
  });
});

/** Admitted units for `limiters` (taking turns, as instances would) sending `cost` as fast as they can for `ms`. */
async function admittedOver(limiters: RateLimiter[], bucket: string, perSecond: number, ms: number): Promise<number> {
  let admitted = 0;
  const started = Date.now();
  let turn = 0;
  while (Date.now() - started < ms) {
    const limiter = limiters[turn++ % limiters.length]!;
    if ((await limiter.take([{ bucket, perSecond, cost: 1 }])).allowed) admitted += 1;
    if (turn % 20 === 0) await new Promise((resolve) => setTimeout(resolve, 1));
  }
  return admitted;
}

describe('the rate limiter', () => {
  const { prefix, clean } = testRedisPrefix();
  const connections: Redis[] = [];
  after(async () => {
    await clean();
    await Promise.all(connections.map((c) => c.quit()));
  });

  it('in process and in Redis: a burst of one second, then the rate; all or nothing over several buckets', async () => {
    const redis = new Redis(REDIS_URL);
    connections.push(redis);
    for (const limiter of [createMemoryRateLimiter(), createRedisRateLimiter(redis, prefix)]) {
      const bucket = `all-or-nothing-${crypto.randomBytes(3).toString('hex')}`;
      const both = [
        { bucket: `${bucket}-tps`, perSecond: 10, cost: 5 },
        { bucket: `${bucket}-bundles`, perSecond: 1, cost: 1 },
      ];
      assert.deepEqual(await limiter.take(both), { allowed: true });
      // The bundles bucket is empty now: the second request takes nothing from the tps bucket either.
      const refused = await limiter.take(both);
      assert.ok(!refused.allowed && refused.retryAfterMs > 900 && refused.retryAfterMs <= 1000, JSON.stringify(refused));
      assert.deepEqual(await limiter.take([{ bucket: `${bucket}-tps`, perSecond: 10, cost: 5 }]), { allowed: true });
      const empty = await limiter.take([{ bucket: `${bucket}-tps`, perSecond: 10, cost: 1 }]);
      assert.ok(!empty.allowed && empty.retryAfterMs > 0 && empty.retryAfterMs <= 100, JSON.stringify(empty));
    }
  });

  it('in Redis: one limit holds within 10 % across three connections taking turns, as three gateways would', async () => {
    const three = [new Redis(REDIS_URL), new Redis(REDIS_URL), new Redis(REDIS_URL)];
    connections.push(...three);
    const limiters = three.map((c) => createRedisRateLimiter(c, prefix));
    const perSecond = 200;
    const ms = 2_000;
    const admitted = await admittedOver(limiters, 'shared', perSecond, ms);
    // A second's burst, then the rate.
    const expected = perSecond + (perSecond * ms) / 1000;
    assert.ok(Math.abs(admitted - expected) <= expected * 0.1, `admitted ${admitted}, expected about ${expected}`);
  });
});
