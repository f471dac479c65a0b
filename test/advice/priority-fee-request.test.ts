/**
 * getPriorityFeeEstimate's params in Helius's shape: what is taken (the accounts given or the
 * transaction's writable ones; Helius's defaults, which change with the presence of options)
 * and every refusal, each naming the parameter.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Keypair, SystemProgram, Transaction } from '@solana/web3.js';
import bs58 from 'bs58';
import { MAX_ACCOUNTS, parsePriorityFeeRequest, type PriorityFeeRequest } from '../../src/advice/priority-fee-request';

const payer = Keypair.generate();
const to = Keypair.generate().publicKey;
const tx = new Transaction({ feePayer: payer.publicKey, recentBlockhash: Keypair.generate().publicKey.toBase58() }).add(
  SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: to, lamports: 1 }),
);
tx.sign(payer);
const wire = tx.serialize();
const parsed = (params: unknown[]) => parsePriorityFeeRequest(params) as PriorityFeeRequest;

describe('getPriorityFeeEstimate params', () => {
  it("takes a transaction's writable accounts, in base58 by default or base64", () => {
    const expected = [payer.publicKey.toBase58(), to.toBase58()];
    assert.deepEqual(parsed([{ transaction: bs58.encode(wire) }]).accounts, expected);
    assert.deepEqual(parsed([{ transaction: wire.toString('base64'), options: { transactionEncoding: 'base64' } }]).accounts, expected);
  });

  it("follows Helius's defaults: without options votes count and empty slots do not; with options (even empty) the reverse", () => {
    const bare = parsed([{ accountKeys: [to.toBase58()] }]);
    assert.deepEqual([bare.includeVote, bare.emptySlotAsZero, bare.lookbackSlots, bare.level], [true, false, 150, undefined]);
    const withOptions = parsed([{ accountKeys: [to.toBase58()], options: {} }]);
    assert.deepEqual([withOptions.includeVote, withOptions.emptySlotAsZero], [false, true]);
    assert.equal(parsed([{ options: { priorityLevel: 'Default' } }]).level, 'medium');
    assert.equal(parsed([{ options: { priorityLevel: 'VeryHigh', lookbackSlots: 20 } }]).lookbackSlots, 20);
    assert.deepEqual(parsed([]).accounts, []);
  });

  it('refuses what is wrong, naming the parameter', () => {
    const cases: [unknown[], string | RegExp][] = [
      [[{}, {}], 'getPriorityFeeEstimate takes one parameter, an object; got 2'],
      [['x'], 'params[0] must be an object: {transaction} or {accountKeys}, and options'],
      [[{ account_keys: [] }], 'params[0].account_keys is not a field of the request (transaction, accountKeys, options)'],
      [[{ transaction: 'x', accountKeys: [] }], 'params[0] takes transaction or accountKeys, not both'],
      [
        [{ options: { priorityLevel: 'HIGH' } }],
        /^params\[0\]\.options\.priorityLevel must be one of Min, Low, Medium, High, VeryHigh, UnsafeMax, Default; got "HIGH"$/,
      ],
      [[{ options: { priorityLevel: '__proto__' } }], /^params\[0\]\.options\.priorityLevel must be one of .*; got "__proto__"$/],
      [[{ options: { priorityLevel: 'constructor' } }], /^params\[0\]\.options\.priorityLevel must be one of .*; got "constructor"$/],
      [[{ options: { lookbackSlots: 151 } }], 'params[0].options.lookbackSlots must be an integer from 1 to 150; got 151'],
      [[{ options: { lookbackSlots: 0 } }], 'params[0].options.lookbackSlots must be an integer from 1 to 150; got 0'],
      [[{ options: { recommended: false, includeVote: true } }], 'params[0].options.recommended cannot be combined with includeVote'],
      [[{ options: { includeDetails: 'yes' } }], 'params[0].options.includeDetails must be true or false'],
      [[{ options: { foo: 1 } }], 'params[0].options.foo is not an option of getPriorityFeeEstimate'],
      [[{ options: 5 }], 'params[0].options must be an object'],
      [[{ accountKeys: 'abc' }], 'params[0].accountKeys must be an array of base58 account addresses'],
      [[{ accountKeys: ['not-base58!'] }], 'params[0].accountKeys[0] is not a base58 account address'],
      [
        [{ accountKeys: Array.from({ length: MAX_ACCOUNTS + 1 }, () => to.toBase58()) }],
        'params[0].accountKeys has 129 accounts; at most 128',
      ],
      [[{ transaction: 5 }], 'params[0].transaction must be a string: a serialized transaction'],
      [[{ transaction: '0OIl' }], 'params[0].transaction is not valid base58'],
      [[{ transaction: 'a$b=', options: { transactionEncoding: 'base64' } }], /^params\[0\]\.transaction is not valid base64: /],
      [
        [{ transaction: 'abc', options: { transactionEncoding: 'json' } }],
        'params[0].options.transactionEncoding must be base58 or base64; got "json"',
      ],
      [[{ transaction: bs58.encode(Buffer.from([1, 2, 3])) }], /^params\[0\]\.transaction does not decode as a transaction: /],
      [
        [{ transaction: '1'.repeat(100_000) }],
        'params[0].transaction is 100000 characters of base58; a transaction (1,232 bytes at most) takes at most 1684',
      ],
    ];
    for (const [params, message] of cases) {
      const answer = parsePriorityFeeRequest(params);
      assert.equal(typeof answer, 'string', JSON.stringify(params).slice(0, 80));
      if (typeof message === 'string') assert.equal(answer, message);
      else assert.match(answer as string, message);
    }
  });
});
