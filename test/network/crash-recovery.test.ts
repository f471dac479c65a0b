import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { Connection, Keypair } from '@solana/web3.js';
import { startCluster } from '../helpers/cluster';
import { makeDataDir } from '../helpers/gateway';
import { runCli, startServer } from '../helpers/process';
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
    fs.writeFileSync(configFile, JSON.stringify({ upstreams: { rpc: { type: 'rpc', urls: [node.url] } }, rebroadcast: { intervalMs: 100 } }));
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
        const answer = await rpc(server.url, key, 'sendTransaction', [await transferTx(c, alice, bob.publicKey, 1_000_000 + i), { encoding: 'base64' }]);
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
      assert.ok(entries.every((e) => e.transactions.every((t) => t.state === 'forwarded')), 'journaled, not yet landed');

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
