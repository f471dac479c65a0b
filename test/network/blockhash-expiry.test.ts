/**
 * A transaction that never lands before its blockhash expires, sent by @solana/web3.js
 * through a gateway in front of an RPC node that takes it and drops it: the tracker
 * rebroadcasts it until the blockhash is no longer valid (150 slots), then it ends
 * `expired` with `blockhash_expired` — in getSubmissionStatuses (read by the typed client),
 * `bin/slipway submissions show`, the metric by reason and the log line.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Connection, Keypair, LAMPORTS_PER_SOL, SystemProgram, Transaction } from '@solana/web3.js';
import { createSlipwayClient } from '../../src/client';
import { countingJournal, type EndedTransaction, type Journal } from '../../src/stores/journal';
import { startCluster, type Cluster } from '../helpers/cluster';
import { startTestGateway, type TestGateway } from '../helpers/gateway';
import { runCli } from '../helpers/process';
import { until } from '../helpers/until';

const SLOT_MS = 20;

describe('an expired blockhash, through a real client', () => {
  let cluster: Cluster;
  let gw: TestGateway;
  before(async () => {
    cluster = await startCluster(1, SLOT_MS);
    gw = await startTestGateway(
      { slotMs: String(SLOT_MS) },
      {
        upstreams: { rpc: { type: 'rpc', urls: [cluster.nodes[0]!.url] } },
        rebroadcast: { intervalMs: 100, maxAttempts: 10_000, queueCapacity: 1000 },
      },
    );
  });
  after(async () => {
    await gw.close();
    await cluster.close();
  });

  it('ends expired with blockhash_expired, shown by every reader', async () => {
    const payer = Keypair.generate();
    cluster.ledger.airdrop(payer.publicKey.toBytes(), BigInt(LAMPORTS_PER_SOL));
    const connection = new Connection(`${gw.url}/?api-key=${gw.key}`, 'confirmed');
    const { blockhash } = await connection.getLatestBlockhash();
    const tx = new Transaction({ feePayer: payer.publicKey, recentBlockhash: blockhash }).add(
      SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: Keypair.generate().publicKey, lamports: 1_000_000 }),
    );
    tx.sign(payer);
    // The node answers every send and drops it: nothing ever lands.
    cluster.nodes[0]!.fault('drop');
    const signature = await connection.sendRawTransaction(tx.serialize(), { skipPreflight: true });

    const client = createSlipwayClient({ url: gw.url, apiKey: gw.key });
    const status = await until(
      async () => (await client.getStatuses([signature]))[0],
      (s) => s?.state !== 'forwarded',
      20_000,
    );
    assert.deepEqual([status?.state, status?.reasonCode], ['expired', 'blockhash_expired'], JSON.stringify(status));
    assert.equal(status?.transactions[0]?.reasonCode, 'blockhash_expired');
    assert.ok((status?.transactions[0]?.sends ?? 0) > 1, 'it was rebroadcast meanwhile');

    const shown = await runCli(['submissions', 'show', signature, '--data-dir', gw.dataDir]);
    assert.equal(shown.code, 0, shown.stderr);
    assert.match(
      shown.stdout,
      new RegExp(`${signature}  expired  sends \\d+  blockhash_expired \\(its blockhash expired before it landed\\)`),
    );
    const metrics = await (await fetch(`${gw.url}/metrics`)).text();
    assert.match(metrics, /^slipway_outcome_reasons_total\{reason="blockhash_expired"\} [1-9]\d*$/m);
  });

  it('each transaction that ends without landing is logged once with its code and words', async () => {
    const lines: EndedTransaction[] = [];
    const recorded = { record: async () => 7, update: async () => {} } as unknown as Journal;
    const journal = countingJournal(recorded, (line) => lines.push(line));
    const expired = {
      seq: 7,
      position: 0,
      id: 'sigA',
      state: 'expired',
      reasonCode: 'blockhash_expired',
      reason: 'its blockhash expired before it landed',
    } as const;
    await journal.update([
      expired,
      { seq: 7, position: 1, state: 'landed', slot: 9 },
      { seq: 7, position: 2, id: 'sigC', state: 'failed', slot: 9, reasonCode: null, reason: null },
    ]);
    assert.deepEqual(lines, [expired, { seq: 7, position: 2, id: 'sigC', state: 'failed', reasonCode: 'failed_on_chain', reason: null }]);
  });
});
