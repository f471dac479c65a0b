import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import readline from 'node:readline';
import { after, before, describe, it } from 'node:test';
import { Connection, Keypair, LAMPORTS_PER_SOL, SystemProgram, Transaction } from '@solana/web3.js';
import bs58 from 'bs58';
import { JitoJsonRpcClient } from 'jito-js-rpc';
import type { FastifyInstance } from 'fastify';
import { FaultInjector } from '../../src/ledger/fault-injector';
import { createLedgerNode } from '../../src/ledger/ledger-node';
import { LocalLedger } from '../../src/ledger/local-ledger';
import { makeDataDir } from '../helpers/gateway';
import { SLIPWAY } from '../helpers/process';
import { post } from '../helpers/rpc';
import { balanceOf, failingTransferTx, fundedKeypair, transferTx, waitForStatus } from '../helpers/solana';

let node: FastifyInstance;
let ledger: LocalLedger;
let url: string;
let connection: Connection;
const faults = new FaultInjector();

before(async () => {
  ledger = LocalLedger.open({ slotMs: 50 });
  ledger.start();
  node = createLedgerNode({ ledger, faults, logLevel: 'silent' });
  await node.listen({ host: '127.0.0.1', port: 0 });
  const address = node.server.address() as { port: number };
  url = `http://127.0.0.1:${address.port}`;
  connection = new Connection(url, 'confirmed');
});
after(async () => {
  await node.close();
  ledger.stop();
});

const call = (method: string, params: unknown[], path = '/') => post(url + path, { jsonrpc: '2.0', id: 1, method, params });

describe('ledger node: a Solana JSON-RPC node', () => {
  it('serves @solana/web3.js without a key: airdrop, send, confirm', async () => {
    const alice = await fundedKeypair(connection);
    const bob = Keypair.generate();
    const signature = await connection.sendRawTransaction(
      Buffer.from(await transferTx(connection, alice, bob.publicKey, LAMPORTS_PER_SOL), 'base64'),
    );
    await waitForStatus(connection, signature);
    assert.equal(await balanceOf(connection, bob.publicKey), LAMPORTS_PER_SOL);
  });

  it('takes base58 by default, as a node does, and names unsupported encodings', async () => {
    const alice = await fundedKeypair(connection);
    const bob = Keypair.generate();
    const tx = Buffer.from(await transferTx(connection, alice, bob.publicKey, 2_000_000), 'base64');
    const answer = await call('sendTransaction', [bs58.encode(tx)]);
    assert.equal(answer.body.result, bs58.encode(Transaction.from(tx).signature!));
    await waitForStatus(connection, answer.body.result);
    assert.equal(await balanceOf(connection, bob.publicKey), 2_000_000);
    const bad = await call('sendTransaction', [tx.toString('base64'), { encoding: 'hex' }]);
    assert.equal(bad.body.error.code, -32602);
    assert.equal(bad.body.error.message, 'unsupported encoding: hex. Supported encodings: base58, base64');
  });

  it('refuses a failing preflight with -32002 and logs; with skipPreflight the transaction fails on chain', async () => {
    const alice = await fundedKeypair(connection);
    const tx = await failingTransferTx(connection, alice, Keypair.generate().publicKey);
    const refused = await call('sendTransaction', [tx, { encoding: 'base64' }]);
    assert.equal(refused.body.error.code, -32002);
    assert.ok(refused.body.error.data.logs.length > 0);
    const sent = await call('sendTransaction', [tx, { encoding: 'base64', skipPreflight: true }]);
    const status = await waitForStatus(connection, sent.body.result);
    assert.deepEqual(status.err, { InstructionError: [0, { Custom: 1 }] });
  });

  it('refuses a forged signature in preflight, and drops it when preflight is skipped', async () => {
    const alice = await fundedKeypair(connection);
    const bob = Keypair.generate();
    const forged = Buffer.from(await transferTx(connection, alice, bob.publicKey, 3_000_000), 'base64');
    forged[5]! ^= 1;
    const refused = await call('sendTransaction', [forged.toString('base64'), { encoding: 'base64' }]);
    assert.deepEqual(refused.body.error, { code: -32003, message: 'Transaction signature verification failure' });
    const dropped = await call('sendTransaction', [forged.toString('base64'), { encoding: 'base64', skipPreflight: true }]);
    assert.equal(typeof dropped.body.result, 'string');
    await new Promise((resolve) => setTimeout(resolve, 120));
    assert.equal(await balanceOf(connection, bob.publicKey), 0);
  });

  it('simulateTransaction: without sigVerify, with replaceRecentBlockhash', async () => {
    const alice = await fundedKeypair(connection);
    const unsigned = new Transaction({ feePayer: alice.publicKey, recentBlockhash: bs58.encode(Buffer.alloc(32, 9)) }).add(
      SystemProgram.transfer({ fromPubkey: alice.publicKey, toPubkey: Keypair.generate().publicKey, lamports: 1_000_000 }),
    );
    const bytes = unsigned.serialize({ requireAllSignatures: false, verifySignatures: false }).toString('base64');
    const stale = await call('simulateTransaction', [bytes, { encoding: 'base64' }]);
    assert.equal(stale.body.result.value.err, 'BlockhashNotFound');
    const replaced = await call('simulateTransaction', [bytes, { encoding: 'base64', replaceRecentBlockhash: true }]);
    assert.equal(replaced.body.result.value.err, null);
    assert.ok(replaced.body.result.value.logs.length > 0);
    assert.equal(typeof replaced.body.result.value.replacementBlockhash.blockhash, 'string');
    const conflict = await call('simulateTransaction', [bytes, { encoding: 'base64', replaceRecentBlockhash: true, sigVerify: true }]);
    assert.equal(conflict.body.error.code, -32602);
  });

  it('keeps Jito methods off the node path', async () => {
    assert.equal((await call('getTipAccounts', [])).body.error.code, -32601);
    assert.equal((await call('sendBundle', [[]])).body.error.code, -32601);
  });
});

describe('ledger node: a Jito-style block engine', () => {
  it('lands a bundle atomically and reports it; reports why a failed bundle did not land', async () => {
    const jito = new JitoJsonRpcClient(`${url}/api/v1`);
    const alice = await fundedKeypair(connection);
    const bob = Keypair.generate();
    const good = [await transferTx(connection, alice, bob.publicKey, 1_000_000)];
    const landed = await jito.sendBundle([good, { encoding: 'base64' }]);
    const status = await jito.getInFlightBundleStatuses([[landed.result!]]);
    assert.equal((status.result as any).value[0].status, 'Landed');
    assert.equal(await balanceOf(connection, bob.publicKey), 1_000_000);

    const carol = await fundedKeypair(connection, 1);
    const bad = [await transferTx(connection, alice, bob.publicKey, 2_000_000), await failingTransferTx(connection, carol, bob.publicKey)];
    const failed = await jito.sendBundle([bad, { encoding: 'base64' }]);
    assert.match(failed.result!, /^[0-9a-f]{64}$/, 'a block engine answers the ID; the outcome is in the statuses');
    const failedStatus = (await jito.getInFlightBundleStatuses([[failed.result!]])).result as any;
    assert.equal(failedStatus.value[0].status, 'Failed');
    assert.match(failedStatus.value[0].err, /^transaction 2 of 2 .* failed: Error processing Instruction 0: custom program error: 0x1$/);
    assert.equal(await balanceOf(connection, bob.publicKey), 1_000_000);
  });

  it('sendTransaction with bundleOnly=true executes it as a one-transaction bundle', async () => {
    const jito = new JitoJsonRpcClient(`${url}/api/v1`);
    const alice = await fundedKeypair(connection);
    const bob = Keypair.generate();
    const sent = await jito.sendTxn([await transferTx(connection, alice, bob.publicKey, 4_000_000), { encoding: 'base64' }], true);
    await waitForStatus(connection, sent.result!);
    assert.equal(await balanceOf(connection, bob.publicKey), 4_000_000);
  });
});

describe('ledger node: fault injection', () => {
  const setFault = (mode: string, rate = 1) => post(`${url}/_faults`, { mode, rate });

  it('refuses, answers 5xx, hangs and drops on demand, and recovers', async () => {
    const alice = await fundedKeypair(connection);
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'getSlot' });
    const ask = (timeoutMs = 2000) => fetch(url, { method: 'POST', body, signal: AbortSignal.timeout(timeoutMs) });
    try {
      await setFault('refuse');
      await assert.rejects(ask(), /fetch failed/);
      await setFault('error');
      assert.equal((await ask()).status, 503);
      await setFault('hang');
      await assert.rejects(ask(300), { name: 'TimeoutError' });
      await setFault('drop');
      const bob = Keypair.generate();
      const dropped = await call('sendTransaction', [
        await transferTx(connection, alice, bob.publicKey, 1_000_000),
        { encoding: 'base64' },
      ]);
      assert.equal(typeof dropped.body.result, 'string', 'answered with success');
      await new Promise((resolve) => setTimeout(resolve, 150));
      assert.deepEqual((await connection.getSignatureStatuses([dropped.body.result])).value, [null], 'and never executed');
      assert.equal((await post(`${url}/_faults`, { mode: 'explode' })).status, 400);
    } finally {
      await setFault('none');
    }
    assert.equal((await ask()).status, 200);
  });
});

describe('bin/slipway ledger', () => {
  it('starts on the given port, answers as a node, and stops on SIGTERM', async () => {
    const dir = makeDataDir();
    const child = spawn(SLIPWAY, ['ledger', '--port', '0', '--data-dir', dir, '--slot-ms', '50'], { stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      const line = await new Promise<string>((resolve, reject) => {
        readline.createInterface({ input: child.stdout! }).on('line', (l) => l.includes('listening on') && resolve(l));
        child.on('exit', (code) => reject(new Error(`exited ${code}`)));
      });
      const nodeUrl = /listening on (http:\/\/\S+)/.exec(line)![1]!;
      const c = new Connection(nodeUrl, 'confirmed');
      const alice = await fundedKeypair(c);
      assert.equal(await c.getBalance(alice.publicKey), 10 * LAMPORTS_PER_SOL);
      assert.equal(await (await fetch(`${nodeUrl}/health`)).text(), 'ok');
      const exited = new Promise((resolve) => child.on('exit', resolve));
      child.kill('SIGTERM');
      assert.equal(await exited, 0);
    } finally {
      child.kill('SIGKILL');
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
