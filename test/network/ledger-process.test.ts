import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { after, describe, it } from 'node:test';
import { Connection, Keypair, PublicKey, SystemProgram, Transaction } from '@solana/web3.js';
import { JITO_TIP_ACCOUNTS } from '../../src/core/jito-tip-accounts';
import { startCluster } from '../helpers/cluster';
import { makeDataDir, startTestGateway } from '../helpers/gateway';
import { SLIPWAY, runCli, startServer } from '../helpers/process';
import { rpc, submitBatch } from '../helpers/rpc';
import { connect, fundedKeypair, transferTx } from '../helpers/solana';

const dirs: string[] = [];
after(() => dirs.forEach((dir) => fs.rmSync(dir, { recursive: true, force: true })));

describe('kill -9 of a gateway in front of RPC nodes', () => {
  it('resumes rebroadcast of every accepted submission after a restart, until it lands', async () => {
    const cluster = await startCluster(1);
    const node = cluster.nodes[0]!;
    const dir = makeDataDir();
    dirs.push(dir);
    const configFile = path.join(dir, 'slipway.config.json');
    fs.writeFileSync(
      configFile,
      JSON.stringify({ upstreams: { rpc: { type: 'rpc', urls: [node.url] } }, rebroadcast: { intervalMs: 100 } }),
    );
    const env = { SLIPWAY_CONFIG: configFile };
    try {
      const server = await startServer(dir, env);
      const key = server.initialKey!;
      const c = connect(server.url, key);
      const alice = await fundedKeypair(c);
      const recipients = Array.from({ length: 4 }, () => Keypair.generate());
      node.fault('drop'); // the node answers and does not execute: nothing lands before the crash
      const signatures: string[] = [];
      for (const [i, bob] of recipients.slice(0, 3).entries()) {
        const answer = await rpc(server.url, key, 'sendTransaction', [
          await transferTx(c, alice, bob.publicKey, 1_000_000 + i),
          { encoding: 'base64' },
        ]);
        assert.equal(typeof answer.body.result, 'string');
        signatures.push(answer.body.result);
      }
      const batch = await submitBatch(server.url, key, [await transferTx(c, alice, recipients[3]!.publicKey, 1_000_003)]);
      assert.equal(batch.body.code, 1);
      server.child.kill('SIGKILL');
      await server.exited;

      const listed = await runCli(['submissions', 'list', '--json', '--data-dir', dir]);
      const entries = JSON.parse(listed.stdout) as { transactions: { state: string }[] }[];
      assert.equal(entries.length, 4, listed.stderr);
      assert.ok(
        entries.every((e) => e.transactions.every((t) => t.state === 'forwarded')),
        'journaled as forwarded, not landed',
      );

      node.fault('none');
      const again = await startServer(dir, env);
      const direct = new Connection(node.url, 'confirmed');
      const started = Date.now();
      for (const [i, bob] of recipients.entries()) {
        while ((await direct.getBalance(bob.publicKey, 'processed')) !== 1_000_000 + i) {
          assert.ok(Date.now() - started < 10_000, `recipient ${i} not paid after restart`);
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      }
      await new Promise((resolve) => setTimeout(resolve, 300));
      const shown = await runCli(['submissions', 'show', signatures[0]!, '--json', '--data-dir', dir]);
      assert.equal(JSON.parse(shown.stdout)[0].transactions[0].state, 'landed', shown.stderr);
      again.child.kill('SIGTERM');
      assert.equal(await again.exited, 0);
    } finally {
      await cluster.close();
    }
  });
});

describe('the gateway in front of bin/slipway ledger', () => {
  it('sends transactions through its RPC node and bundles through its block engine, over HTTP', async () => {
    const ledgerDir = makeDataDir();
    dirs.push(ledgerDir);
    const ledger = spawn(SLIPWAY, ['ledger', '--port', '0', '--data-dir', ledgerDir, '--slot-ms', '50'], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    try {
      const nodeUrl = await new Promise<string>((resolve) =>
        readline.createInterface({ input: ledger.stdout! }).on('line', (line) => {
          const match = /listening on (http:\/\/\S+)/.exec(line);
          if (match) resolve(match[1]!);
        }),
      );
      const gw = await startTestGateway(
        {},
        {
          upstreams: { rpc: { type: 'rpc', urls: [nodeUrl] }, jito: { type: 'jito', urls: [`${nodeUrl}/api/v1`] } },
          rebroadcast: { intervalMs: 100 },
        },
      );
      try {
        const c = connect(gw.url, gw.key);
        const alice = await fundedKeypair(c);
        const [bob, carol, dave] = [Keypair.generate(), Keypair.generate(), Keypair.generate()];
        const single = await rpc(gw.url, gw.key, 'sendTransaction', [
          await transferTx(c, alice, bob.publicKey, 1_000_000),
          { encoding: 'base64' },
        ]);
        const batch = await submitBatch(gw.url, gw.key, [await transferTx(c, alice, carol.publicKey, 2_000_000)]);
        const tipped = new Transaction({ feePayer: alice.publicKey, recentBlockhash: (await c.getLatestBlockhash()).blockhash }).add(
          SystemProgram.transfer({ fromPubkey: alice.publicKey, toPubkey: dave.publicKey, lamports: 3_000_000 }),
          SystemProgram.transfer({ fromPubkey: alice.publicKey, toPubkey: new PublicKey(JITO_TIP_ACCOUNTS[1]!), lamports: 1_000 }),
        );
        tipped.sign(alice);
        const bundle = await rpc(gw.url, gw.key, 'sendBundle', [[tipped.serialize().toString('base64')], { encoding: 'base64' }]);
        assert.equal(typeof single.body.result, 'string');
        assert.equal(batch.body.code, 1);
        assert.match(bundle.body.result, /^[0-9a-f]{64}$/);
        const direct = new Connection(nodeUrl, 'confirmed');
        assert.equal(await direct.getBalance(bob.publicKey, 'processed'), 1_000_000);
        assert.equal(await direct.getBalance(carol.publicKey, 'processed'), 2_000_000);
        assert.equal(await direct.getBalance(dave.publicKey, 'processed'), 3_000_000);
        const inflight = await rpc(gw.url, gw.key, 'getInflightBundleStatuses', [[bundle.body.result]]);
        assert.equal(inflight.body.result.value[0].status, 'Landed');
      } finally {
        await gw.close();
      }
    } finally {
      const exited = new Promise((resolve) => ledger.on('exit', resolve));
      ledger.kill('SIGTERM');
      assert.equal(await exited, 0);
    }
  });
});
