/**
 * The fast, deterministic slice of the fuzz suite (`npm run fuzz` runs 100,000): a fixed
 * seed, a few thousand hostile requests against a real gateway on the embedded ledger.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Keypair } from '@solana/web3.js';
import { useGateway } from '../helpers/use-gateway';
import { rpc } from '../helpers/rpc';
import { fundedKeypair, transferTx } from '../helpers/solana';
import { fuzzGateway } from './fuzz-gateway';

const ctx = useGateway();

describe('fuzz slice', () => {
  it('answers 2,000 hostile requests with well-formed JSON and a 2xx/4xx status, never a 5xx or a dropped connection', async (t) => {
    const alice = await fundedKeypair(ctx.connection);
    const validTransactions = await Promise.all(Array.from({ length: 10 }, (_, i) => transferTx(ctx.connection, alice, Keypair.generate().publicKey, 1_000_000 + i)));
    const report = await fuzzGateway({ url: ctx.gw.url, key: ctx.gw.key, seed: 20_261_123, count: 2_000, validTransactions });
    t.diagnostic(`seed ${report.seed}: ${report.sent} requests, ${report.classes.size} answer classes, ${report.failures.length} failures`);
    assert.deepEqual(report.failures.slice(0, 5), []);
    assert.equal(report.sent, 2_000);
    assert.ok(report.classes.size >= 8, `distinct answers: ${[...report.classes.keys()].join(', ')}`);
  });

  it('a method named after an object property (valueOf, constructor, __proto__, toString) is not found, found by the full run (seed 7)', async () => {
    for (const method of ['valueOf', 'constructor', '__proto__', 'toString', 'hasOwnProperty']) {
      const answer = await rpc(ctx.gw.url, ctx.gw.key, method, ['valueOf']);
      assert.equal(answer.status, 200);
      assert.equal(answer.body.error.code, -32601);
      assert.ok(answer.body.error.message.startsWith(`Method not found: ${method} `), answer.body.error.message);
    }
  });
});
