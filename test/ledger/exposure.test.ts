import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Keypair } from '@solana/web3.js';
import { resolveConfig } from '../../src/config/config';
import { defaultValidatorIdentities } from '../../src/ledger/leader-schedule';
import { PUBLIC_FORWARD_SLOTS } from '../../src/ledger/local-ledger';
import { startCluster, type Cluster } from '../helpers/cluster';
import { post } from '../helpers/rpc';
import { connect, fundedKeypair, transferTx, waitForStatus } from '../helpers/solana';

const identities = defaultValidatorIdentities();
const sandwichers = identities.slice(0, 3);

interface ExposureView {
  slot: number;
  leader: string;
  path: 'public' | 'private';
  exposedTo: string[];
  sandwichedBy: string | null;
}

describe('exposure to sandwiching leaders, recorded by the local cluster', () => {
  let cluster: Cluster;
  before(async () => {
    cluster = await startCluster(1, 20, { sandwichers });
  });
  after(() => cluster.close());

  const call = async (path: string, method: string, params: unknown[]) =>
    (await post(`${cluster.nodes[0]!.url}${path}`, { jsonrpc: '2.0', id: 1, method, params })).body;

  it('a transaction sent to the RPC node is seen by the upcoming leaders; one sent to the block engine by its own leader only', async () => {
    const connection = connect(cluster.nodes[0]!.url, '');
    const alice = await fundedKeypair(connection);
    const sent: { signature: string; path: 'public' | 'private' }[] = [];
    for (let i = 0; i < 24; i++) {
      const tx = await transferTx(connection, alice, Keypair.generate().publicKey, 1_000_000 + i);
      const path = i % 2 === 0 ? 'public' : 'private';
      const answer = await call(path === 'public' ? '/' : '/api/v1/transactions', 'sendTransaction', [tx, { encoding: 'base64' }]);
      assert.equal(typeof answer.result, 'string', JSON.stringify(answer));
      sent.push({ signature: answer.result, path });
      await new Promise((resolve) => setTimeout(resolve, 7)); // spread over slots (20 ms each)
    }
    await waitForStatus(connection, sent.at(-1)!.signature);
    const exposures = (await call('/', 'getTransactionExposure', [sent.map((s) => s.signature)])).result.value as ExposureView[];
    let sandwiched = 0;
    for (const [i, { signature, path }] of sent.entries()) {
      const exposure = exposures[i]!;
      const status = (await connection.getSignatureStatuses([signature])).value[0]!;
      assert.equal(exposure.slot, status.slot, 'landed in the slot its status says');
      const upcoming = (await connection.getSlotLeaders(exposure.slot, PUBLIC_FORWARD_SLOTS)).map((k) => k.toBase58());
      assert.equal(exposure.leader, upcoming[0], 'the landing slot’s leader');
      assert.equal(exposure.path, path);
      assert.deepEqual(exposure.exposedTo, path === 'private' ? [upcoming[0]] : [...new Set(upcoming)]);
      assert.equal(exposure.sandwichedBy, exposure.exposedTo.find((identity) => sandwichers.includes(identity)) ?? null);
      if (exposure.sandwichedBy !== null) sandwiched++;
    }
    assert.ok(
      sandwiched > 0 && sandwiched < sent.length,
      `3 of 8 leaders sandwich: some transactions and not all are exposed (${sandwiched} of ${sent.length})`,
    );
    const unknown = (await call('/', 'getTransactionExposure', [['1'.repeat(64)]])).result.value;
    assert.deepEqual(unknown, [null]);
  });

  it('refuses a sandwiching identity that is not in the schedule, naming it', () => {
    const stranger = Keypair.generate().publicKey.toBase58();
    assert.throws(
      () => resolveConfig({ ledgerSandwichers: stranger }, {}),
      new RegExp(`ledgerSandwichers: ${stranger} is not one of the leader schedule's validators`),
    );
    assert.deepEqual(resolveConfig({ ledgerSandwichers: sandwichers.join(',') }, {}).ledgerSandwichers, sandwichers);
  });
});
