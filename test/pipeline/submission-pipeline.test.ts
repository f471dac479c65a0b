/**
 * The pipeline, router and tracker built directly, over an in-memory journal and upstreams
 * that count what they are asked: what each promises is seen where it happens, not through
 * a ledger that would hide a second send (a real ledger refuses an already-processed
 * signature, so an end-to-end test of "not sent twice" passes either way).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { countingUpstream, pipelineOver, signedTransfer } from '../helpers/pipeline-doubles';

const PREFLIGHT = { skipPreflight: false, preflightCommitment: 'processed', maxRetries: undefined, minContextSlot: undefined } as const;
const context = { keyId: 'key_a', antiMev: false };

describe('submission pipeline', () => {
  it('sends the same bytes once, however often and however concurrently they are submitted, and journals them once', async () => {
    const { pipeline, journal, upstreams } = pipelineOver();
    const tx = signedTransfer();
    const answers = await Promise.all([1, 2, 3].map(() => pipeline.sendTransaction(tx, PREFLIGHT, context)));
    answers.push(await pipeline.sendTransaction(tx, PREFLIGHT, context));
    for (const answer of answers) assert.ok(answer.ok && answer.value.value === tx.signature);
    assert.deepEqual(
      answers.map((answer) => answer.ok && answer.value.outcome),
      ['accepted', 'duplicate', 'duplicate', 'duplicate'],
      'the first is sent, the others are duplicates',
    );
    assert.equal(upstreams[0]!.sent.length, 1, 'forwarded once');
    assert.equal(journal.entries.length, 1, 'journaled once');
  });

  it('a batch member already sent alone is not sent again; the others are', async () => {
    const { pipeline, upstreams } = pipelineOver();
    const [alone, other] = [signedTransfer(1), signedTransfer(2)];
    await pipeline.sendTransaction(alone!, PREFLIGHT, context);
    const batch = await pipeline.submitBatch([alone!, other!], context);
    assert.deepEqual(batch, { ok: true, value: { value: [alone!.signature, other!.signature], outcome: 'accepted' } });
    assert.deepEqual(
      upstreams[0]!.sent.map((tx) => tx.signature),
      [alone!.signature, other!.signature],
    );
  });

  it('forwards to every upstream of the route, and journals the route by name', async () => {
    const { pipeline, journal, upstreams } = pipelineOver([countingUpstream('a'), countingUpstream('b')]);
    const tx = signedTransfer();
    assert.deepEqual(await pipeline.sendTransaction(tx, PREFLIGHT, context), {
      ok: true,
      value: { value: tx.signature, outcome: 'accepted' },
    });
    assert.deepEqual(
      upstreams.map((u) => u.sent.length),
      [1, 1],
    );
    assert.deepEqual(journal.entries[0]!.routes, ['a', 'b']);
    assert.equal(upstreams[0]!.simulated.length, 1, 'the preflight runs once, on the first upstream that simulates');
  });

  it('a preflight failure is refused with its error: nothing is sent or journaled', async () => {
    const { pipeline, journal, upstreams } = pipelineOver();
    upstreams[0]!.behaviour.simulateErr = { InstructionError: [0, { Custom: 1 }] };
    const answer = await pipeline.sendTransaction(signedTransfer(), PREFLIGHT, context);
    assert.equal(answer.ok, false);
    assert.equal(!answer.ok && answer.error.kind, 'PREFLIGHT_FAILURE');
    assert.equal(upstreams[0]!.sent.length, 0);
    assert.equal(journal.entries.length, 0);
  });

  it('a preflight saying the network already processed it (a resend after a lost answer): answered with its signature, journaled and followed, not sent', async () => {
    const { pipeline, journal, upstreams } = pipelineOver();
    upstreams[0]!.behaviour.simulateErr = 'AlreadyProcessed';
    const tx = signedTransfer();
    assert.deepEqual(await pipeline.sendTransaction(tx, PREFLIGHT, context), {
      ok: true,
      value: { value: tx.signature, outcome: 'duplicate' },
    });
    assert.equal(upstreams[0]!.sent.length, 0);
    assert.equal(journal.entries[0]!.transactions[0]!.state, 'forwarded');
  });

  it('a bundle is sent once to its route and journaled with its ID', async () => {
    const { pipeline, journal, upstreams } = pipelineOver();
    const txs = [signedTransfer(1), signedTransfer(2)];
    const answer = await pipeline.sendBundle(txs, context);
    assert.ok(answer.ok && answer.value.outcome === 'accepted');
    const receipt = answer.value.value;
    assert.deepEqual(upstreams[0]!.bundles, [receipt.bundleId]);
    assert.equal(journal.entries[0]!.bundleId, receipt.bundleId);
    assert.deepEqual(
      receipt.signatures,
      txs.map((tx) => tx.signature),
    );
  });
});

describe('submission tracker', () => {
  it('follows a forwarded transaction until its upstream reports it landed, and journals the slot', async () => {
    const { pipeline, journal, tracker, upstreams } = pipelineOver();
    const tx = signedTransfer();
    await pipeline.sendTransaction(tx, PREFLIGHT, context);
    await tracker.runRound();
    assert.equal(journal.entries[0]!.transactions[0]!.state, 'forwarded', 'not landed yet');
    upstreams[0]!.behaviour.landedSlot = 123;
    await tracker.runRound();
    assert.equal(journal.entries[0]!.transactions[0]!.state, 'landed');
    assert.equal(journal.entries[0]!.transactions[0]!.slot, 123);
    assert.deepEqual(tracker.following(), [], 'no longer followed');
  });
});
