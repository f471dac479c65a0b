/**
 * Fairness before cost: a key's limits are taken before the gateway does costly work for it
 * (its transactions' signatures verified, reads made upstream), and one key cannot take every
 * place among the requests in progress.
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, it } from 'node:test';
import { Keypair, type Connection } from '@solana/web3.js';
import { dataPaths } from '../../src/config/config';
import { createSqliteKeyStore } from '../../src/stores/key-store-sqlite';
import { startTestGateway, waitForKey, type TestGateway } from '../helpers/gateway';
import { runCli } from '../helpers/process';
import { post, rpc, submitBatch } from '../helpers/rpc';
import { connect, fundedKeypair, transferTx } from '../helpers/solana';

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The same transaction with its last byte changed: well formed, but its signature no longer verifies. */
function forged(b64: string): string {
  const bytes = Buffer.from(b64, 'base64');
  bytes[bytes.length - 1] = bytes[bytes.length - 1]! ^ 1;
  return bytes.toString('base64');
}

/** A request whose headers (with `key`) arrive and whose body never does: it stays in progress until the socket closes. */
function stalledRequest(url: string, key: string): net.Socket {
  const { port } = new URL(url);
  const socket = net.connect(Number(port), '127.0.0.1');
  socket.on('error', () => {});
  socket.write(
    `POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\nx-api-key: ${key}\r\n\r\n{"jsonrpc":`,
  );
  return socket;
}

describe('fairness before cost', () => {
  let gw: TestGateway;
  let connection: Connection;
  const keys: Record<string, { id: string; key: string }> = {};

  before(async () => {
    gw = await startTestGateway({ slotMs: 50, maxInFlightRequests: 3, maxInFlightPerKey: 2 });
    connection = connect(gw.url, gw.key);
    const store = createSqliteKeyStore(dataPaths(gw.dataDir).keys);
    for (const [name, limits] of Object.entries({ slow: { tps: 2 }, reader: { readsPerSecond: 5 }, busy: {}, patient: {} })) {
      const created = await store.create({ name, bundle: true, ...limits });
      keys[name] = { id: created.record.id, key: created.key };
    }
    await store.close();
    for (const { key } of Object.values(keys)) await waitForKey(gw.url, key);
  });
  after(() => gw.close());

  it('the transaction limit is taken before signatures are verified, and refused transactions count', async () => {
    const alice = await fundedKeypair(connection);
    const valid = await transferTx(connection, alice, Keypair.generate().publicKey, 1_000);
    const bad = forged(await transferTx(connection, alice, Keypair.generate().publicKey, 2_000));
    const send = (tx: string) => rpc(gw.url, keys.slow!.key, 'sendTransaction', [tx, { encoding: 'base64' }]);
    await pause(1_100); // a full bucket
    const codes = [];
    for (let i = 0; i < 4; i++) codes.push((await send(bad)).body.error.code);
    // Two verified and refused; then over the limit: refused without being verified.
    assert.deepEqual(codes, [-32003, -32003, -32097, -32097]);
    const over = await send(valid);
    assert.equal(over.status, 429);
    assert.match(
      over.body.error.message,
      new RegExp(`^Rate limit exceeded: API key ${keys.slow!.id} may send 2 transactions per second; nothing was submitted`),
    );
    // A batch and a bundle too: counted by their length before their members are read.
    assert.equal(
      (await submitBatch(gw.url, keys.slow!.key, [bad, bad, bad])).body.message.startsWith(
        'this request has 3 transactions, more than API key',
      ),
      true,
    );
    const bundle = await post(
      gw.url,
      { jsonrpc: '2.0', id: 1, method: 'sendBundle', params: [['not base64', 'x', 'y'], { encoding: 'base64' }] },
      { 'x-api-key': keys.slow!.key },
    );
    assert.equal(bundle.body.error.code, -32097);
  });

  it('reads per second: every read entry counts, a batch is taken whole, submissions are not reads, and the refusal says what to change', async () => {
    const { key, id } = keys.reader!;
    await pause(1_100);
    const slots = [];
    for (let i = 0; i < 5; i++) slots.push((await rpc(gw.url, key, 'getSlot', [])).body.result);
    for (const slot of slots) assert.equal(typeof slot, 'number');
    const over = await rpc(gw.url, key, 'getBalance', [Keypair.generate().publicKey.toBase58()]);
    assert.equal(over.status, 429);
    assert.equal(over.body.error.code, -32097);
    assert.match(
      over.body.error.message,
      new RegExp(
        `^Rate limit exceeded: API key ${id} may send 5 reads per second; nothing was read; this request fits again in 0\\.\\d{3} s$`,
      ),
    );
    assert.ok(Number(over.headers.get('retry-after')) >= 1);
    // A submission is not a read: it goes through (and fails on its own merits).
    const submission = await rpc(gw.url, key, 'sendTransaction', ['AAAA', { encoding: 'base64' }]);
    assert.equal(submission.body.error.code, -32602, JSON.stringify(submission.body));
    // Six reads in one batch can never fit a limit of 5: each entry says so, and nothing went upstream.
    const batch = await post(
      gw.url,
      Array.from({ length: 6 }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'getSlot' })),
      { 'x-api-key': key },
    );
    assert.equal(batch.body.length, 6);
    for (const entry of batch.body) {
      assert.equal(entry.error.code, -32097);
      assert.equal(
        entry.error.message,
        `this request has 6 reads, more than API key ${id} may send in a second (5): it can never fit; send fewer at a time or raise the key's limit (bin/slipway keys set ${id} --reads-per-second N)`,
      );
    }
    // Set from the command line, seen without a restart.
    const set = await runCli(['keys', 'set', id, '--reads-per-second', 'off', '--data-dir', gw.dataDir]);
    assert.equal(set.code, 0, set.stderr);
    assert.match(set.stderr, /no read limit/);
    const listed = JSON.parse((await runCli(['keys', 'list', '--json', '--data-dir', gw.dataDir])).stdout).find(
      (k: { id: string }) => k.id === id,
    );
    assert.equal(listed.readsPerSecond, null);
    const deadline = Date.now() + 3_000;
    let answer;
    do
      answer = await post(
        gw.url,
        Array.from({ length: 6 }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'getSlot' })),
        { 'x-api-key': key },
      );
    while (answer.body[0].error !== undefined && Date.now() < deadline);
    assert.equal(typeof answer.body[5].result, 'number');
  });

  it('one key sending slowly cannot take every place: its third request is refused, another key is served', async () => {
    const stalled = [stalledRequest(gw.url, keys.busy!.key), stalledRequest(gw.url, keys.busy!.key)];
    try {
      await pause(200);
      const third = await rpc(gw.url, keys.busy!.key, 'getSlot', []);
      assert.equal(third.status, 429);
      assert.equal(third.body.error.code, -32097);
      assert.equal(
        third.body.error.message,
        `API key ${keys.busy!.id} has 2 requests in progress (maxInFlightPerKey): nothing was done; wait for answers before sending more`,
      );
      assert.equal(third.headers.get('retry-after'), '1');
      // The fast path (exact path, Content-Length, no query) refuses the same way.
      const fast = await post(
        gw.url,
        { jsonrpc: '2.0', id: 1, method: 'sendTransaction', params: ['AAAA', { encoding: 'base64' }] },
        { 'x-api-key': keys.busy!.key },
      );
      assert.equal(fast.status, 429);
      // maxInFlightRequests is 3: the other key still has its place.
      const other = await rpc(gw.url, keys.patient!.key, 'getSlot', []);
      assert.equal(other.status, 200);
      assert.equal(typeof other.body.result, 'number');
    } finally {
      for (const socket of stalled) socket.destroy();
    }
    // Once they are gone, the key has its places back.
    await pause(200);
    assert.equal((await rpc(gw.url, keys.busy!.key, 'getSlot', [])).status, 200);
  });
});
