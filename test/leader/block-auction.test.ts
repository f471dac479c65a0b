/**
 * The block engine's auction by hand: a bundle's tip is what it transfers to the tip
 * accounts, bids are ranked by tip per unit of cost, the room bounds what wins, and a bid
 * that wins no auction in its rounds has lost, told the lowest rate that won.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Keypair, PublicKey, SystemProgram, Transaction } from '@solana/web3.js';
import { AUCTION_ROUNDS, bidRate, BlockAuction, tipOf, type Bid } from '../../src/leader/block-auction';
import { JITO_TIP_ACCOUNTS } from '../../src/core/jito-tip-accounts';
import { isWireDefect, parseWireTransaction } from '../../src/validation/wire-transaction';

const payer = Keypair.generate();
const blockhash = Keypair.generate().publicKey.toBase58();

function wireOf(...transfers: [PublicKey, number][]) {
  const tx = new Transaction({ feePayer: payer.publicKey, recentBlockhash: blockhash });
  for (const [to, lamports] of transfers) tx.add(SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: to, lamports }));
  tx.sign(payer);
  const wire = parseWireTransaction(tx.serialize());
  assert.ok(!isWireDefect(wire));
  return wire;
}

let seq = 0;
const bid = (id: string, tip: number, cost: number): Bid => ({ id, tip: BigInt(tip), cost, seq: seq++ });

describe('the block engine auction', () => {
  it('counts as tip only the lamports transferred to the tip accounts, across the bundle', () => {
    const tipAccount = new PublicKey(JITO_TIP_ACCOUNTS[3]!);
    const other = Keypair.generate().publicKey;
    assert.equal(tipOf([wireOf([other, 50_000], [tipAccount, 2_000]), wireOf([tipAccount, 500])]), 2_500n);
    assert.equal(tipOf([wireOf([other, 50_000])]), 0n);
  });

  it('ranks bids by tip per unit of cost, not by tip alone', () => {
    const auction = new BlockAuction<Bid>();
    auction.submit(bid('big-tip-costly', 10_000, 100_000));
    auction.submit(bid('small-tip-cheap', 2_000, 10_000));
    assert.ok(bidRate(2_000n, 10_000) > bidRate(10_000n, 100_000));
    assert.deepEqual(
      auction.run(100_000).winners.map((b) => b.id),
      ['small-tip-cheap'],
      'the costly one no longer fits in what the cheaper one left',
    );
  });

  it('passes over a bid that does not fit the room for a smaller one below it', () => {
    const auction = new BlockAuction<Bid>();
    auction.submit(bid('best', 9_000, 60_000));
    auction.submit(bid('too-big', 8_000, 60_000));
    auction.submit(bid('small', 1_000, 30_000));
    assert.deepEqual(
      auction.run(100_000).winners.map((b) => b.id),
      ['best', 'small'],
    );
    assert.equal(auction.has('too-big'), true, 'it bids again at the next auction');
  });

  it(`a bid that wins none of its ${AUCTION_ROUNDS} auctions has lost, told the lowest rate that won`, () => {
    const auction = new BlockAuction<Bid>();
    auction.submit(bid('loser', 1_000, 50_000));
    for (let round = 1; round <= AUCTION_ROUNDS; round++) {
      const winner = bid(`winner-${round}`, 5_000, 50_000);
      auction.submit(winner);
      const { winners, lost } = auction.run(50_000);
      assert.deepEqual(
        winners.map((b) => b.id),
        [winner.id],
      );
      if (round < AUCTION_ROUNDS) assert.deepEqual(lost, []);
      else assert.deepEqual(lost, [{ bid: lost[0]!.bid, winningRate: bidRate(5_000n, 50_000) }]);
    }
    assert.equal(auction.has('loser'), false);
  });

  it('takes a bundle submitted twice once', () => {
    const auction = new BlockAuction<Bid>();
    auction.submit(bid('same', 1_000, 1_000));
    auction.submit(bid('same', 1_000, 1_000));
    assert.equal(auction.size, 1);
  });
});
