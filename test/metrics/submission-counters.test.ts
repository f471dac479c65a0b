import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Keypair, LAMPORTS_PER_SOL } from '@solana/web3.js';
import { submissionsTotal, transactionsTotal } from '../../src/metrics/metrics';
import { useGateway } from '../helpers/use-gateway';
import { post } from '../helpers/rpc';
import { fundedKeypair, transferTx } from '../helpers/solana';

const ctx = useGateway();

/** The counter's value for one label set, as prom-client reports it. */
async function valueOf(counter: typeof submissionsTotal | typeof transactionsTotal, labels: Record<string, string>): Promise<number> {
  const { values } = await counter.get();
  return values.find((v) => Object.entries(labels).every(([k, l]) => v.labels[k] === l))?.value ?? Number.NaN;
}

describe('submission counters (counted on the hot path, handed to prom-client when it collects)', () => {
  it('count accepted, duplicate and refused sendTransaction submissions and the transactions sent', async () => {
    const accepted = { operation: 'sendTransaction', outcome: 'accepted' };
    const duplicate = { operation: 'sendTransaction', outcome: 'duplicate' };
    const before = {
      accepted: await valueOf(submissionsTotal, accepted),
      duplicate: await valueOf(submissionsTotal, duplicate),
      sent: await valueOf(transactionsTotal, { operation: 'sendTransaction' }),
      bundles: await valueOf(submissionsTotal, { operation: 'sendBundle', outcome: 'accepted' }),
    };
    // Every series exists from the start, at zero until counted.
    assert.equal(before.bundles, 0);

    const alice = await fundedKeypair(ctx.connection);
    const tx = await transferTx(ctx.connection, alice, Keypair.generate().publicKey, LAMPORTS_PER_SOL / 10);
    const send = () =>
      post(
        `${ctx.gw.url}/`,
        { jsonrpc: '2.0', id: 1, method: 'sendTransaction', params: [tx, { encoding: 'base64' }] },
        { 'x-api-key': ctx.gw.key },
      );
    const first = await send();
    const again = await send();
    assert.equal(typeof first.body.result, 'string');
    assert.equal(again.body.result, first.body.result);

    assert.equal(await valueOf(submissionsTotal, accepted), before.accepted + 1);
    assert.equal(await valueOf(submissionsTotal, duplicate), before.duplicate + 1);
    assert.equal(await valueOf(transactionsTotal, { operation: 'sendTransaction' }), before.sent + 1);
    // Collected twice without new submissions: nothing is counted again.
    assert.equal(await valueOf(submissionsTotal, accepted), before.accepted + 1);
  });
});
