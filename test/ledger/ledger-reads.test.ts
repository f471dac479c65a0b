/**
 * The local ledgers' reads that standard clients call on the way to sending
 * (simulateTransaction, getFeeForMessage, getRecentPrioritizationFees, getTokenAccountBalance,
 * getSignaturesForAddress), in Agave's shapes, checked against what the ledger really does:
 * a simulated transfer's accounts against the balances after executing it, a quoted fee
 * against the lamports actually charged. Also: Jito's tip accounts at genesis, and a landed
 * bundle sent again.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { describe, it } from 'node:test';
import { ComputeBudgetProgram, Keypair, PublicKey, SystemProgram, Transaction, TransactionInstruction } from '@solana/web3.js';
import {
  MINT_SIZE,
  TOKEN_PROGRAM_ID,
  createAmountToUiAmountInstruction,
  createAssociatedTokenAccountInstruction,
  createInitializeMint2Instruction,
  createMintToInstruction,
  getAssociatedTokenAddressSync,
} from '@solana/spl-token';
import bs58 from 'bs58';
import { JITO_TIP_ACCOUNTS } from '../../src/core/jito-tip-accounts';
import { ledgerMethod } from '../../src/ledger/ledger-rpc';
import { LocalLedger } from '../../src/ledger/local-ledger';
import { uiAmountString } from '../../src/ledger/token-rpc';
import { computeBundleId } from '../../src/core/bundle-id';
import { validateTransaction, type ValidatedTransaction } from '../../src/validation/validate-transaction';
import { makeDataDir } from '../helpers/gateway';

const MEMO_PROGRAM = new PublicKey('MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr');

function setup() {
  const ledger = LocalLedger.open({ slotMs: 1_000_000 });
  const call = (method: string, params: unknown[]): any => ledgerMethod(method)!(ledger, params);
  const balance = (key: PublicKey): number => call('getBalance', [key.toBase58()]).result.value;
  const funded = (lamports = 10_000_000_000) => {
    const keypair = Keypair.generate();
    assert.ok('signature' in ledger.airdrop(keypair.publicKey.toBytes(), BigInt(lamports)));
    return keypair;
  };
  const sign = (
    payer: Keypair,
    instructions: TransactionInstruction[],
    signers: Keypair[] = [],
    blockhash = ledger.latestBlockhash().blockhash,
  ) => {
    const tx = new Transaction({ feePayer: payer.publicKey, recentBlockhash: blockhash }).add(...instructions);
    tx.sign(payer, ...signers);
    return tx;
  };
  const validated = (tx: Transaction): ValidatedTransaction => {
    const result = validateTransaction(tx.serialize().toString('base64'), '');
    assert.ok(result.ok);
    return result.value;
  };
  const execute = (tx: Transaction) => {
    const outcome = ledger.execute(validated(tx));
    assert.equal(outcome.err, null, outcome.errText ?? '');
    return outcome;
  };
  const transfer = (from: Keypair, to: PublicKey, lamports: number) =>
    SystemProgram.transfer({ fromPubkey: from.publicKey, toPubkey: to, lamports });
  return { ledger, call, balance, funded, sign, validated, execute, transfer };
}

describe('simulateTransaction on the local ledger', () => {
  it('reports the accounts as the transfer would leave them, commits nothing, and matches the execution', () => {
    const { ledger, call, balance, funded, sign, execute, transfer } = setup();
    const alice = funded();
    const bob = Keypair.generate().publicKey;
    const tx = sign(alice, [transfer(alice, bob, 1_000_000)]);
    const before = balance(alice.publicKey);
    const answer = call('simulateTransaction', [
      tx.serialize().toString('base64'),
      { encoding: 'base64', accounts: { addresses: [bob.toBase58(), alice.publicKey.toBase58()] } },
    ]);
    const value = answer.result.value;
    assert.equal(value.err, null);
    assert.deepEqual(
      value.accounts.map((a: { lamports: number }) => a.lamports),
      [1_000_000, before - 1_000_000 - 5_000],
    );
    assert.deepEqual(value.accounts[0].data, ['', 'base64']);
    assert.equal(value.accounts[0].owner, '11111111111111111111111111111111');
    assert.ok(value.unitsConsumed > 0);
    assert.ok(value.logs.includes('Program 11111111111111111111111111111111 success'));
    assert.equal(value.returnData, null);
    assert.equal(value.innerInstructions, null);
    assert.equal(value.replacementBlockhash, null);
    assert.equal(answer.result.context.slot, ledger.currentSlot);
    assert.equal(balance(bob), 0, 'nothing committed');
    execute(tx);
    assert.deepEqual(
      [balance(bob), balance(alice.publicKey)],
      value.accounts.map((a: { lamports: number }) => a.lamports),
    );
  });

  it('takes base58 by default; an unsigned transaction simulates (as kit estimates compute units)', () => {
    const { call, funded, transfer, ledger } = setup();
    const alice = funded();
    const tx = new Transaction({ feePayer: alice.publicKey, recentBlockhash: ledger.latestBlockhash().blockhash }).add(
      transfer(alice, Keypair.generate().publicKey, 5_000_000),
    );
    const unsigned = tx.serialize({ requireAllSignatures: false, verifySignatures: false });
    assert.equal(call('simulateTransaction', [bs58.encode(unsigned)]).result.value.err, null);
    const verified = call('simulateTransaction', [bs58.encode(unsigned), { sigVerify: true }]).result.value;
    assert.equal(verified.err, 'SignatureFailure');
    assert.deepEqual(verified.logs, []);
  });

  it('sigVerify checks signatures; replaceRecentBlockhash runs a transaction whose blockhash expired', () => {
    const { call, funded, sign, transfer, ledger } = setup();
    const alice = funded();
    const bob = Keypair.generate().publicKey;
    const good = sign(alice, [transfer(alice, bob, 1_000_000)]).serialize();
    assert.equal(call('simulateTransaction', [good.toString('base64'), { encoding: 'base64', sigVerify: true }]).result.value.err, null);
    const forged = Buffer.from(good);
    forged[5]! ^= 1;
    assert.equal(
      call('simulateTransaction', [forged.toString('base64'), { encoding: 'base64', sigVerify: true }]).result.value.err,
      'SignatureFailure',
    );
    assert.equal(
      call('simulateTransaction', [forged.toString('base64'), { encoding: 'base64' }]).result.value.err,
      null,
      'not verified unless asked',
    );

    const stale = sign(alice, [transfer(alice, bob, 2_000_000)], [], bs58.encode(Buffer.alloc(32, 7)))
      .serialize()
      .toString('base64');
    assert.equal(call('simulateTransaction', [stale, { encoding: 'base64' }]).result.value.err, 'BlockhashNotFound');
    const replaced = call('simulateTransaction', [stale, { encoding: 'base64', replaceRecentBlockhash: true }]).result.value;
    assert.equal(replaced.err, null);
    assert.deepEqual(replaced.replacementBlockhash, ledger.latestBlockhash());
    assert.deepEqual(call('simulateTransaction', [stale, { encoding: 'base64', replaceRecentBlockhash: true, sigVerify: true }]).error, {
      code: -32602,
      message: 'sigVerify may not be used with replaceRecentBlockhash',
    });
  });

  it('refuses what Agave refuses, with its messages', () => {
    const { call, funded, sign, transfer, ledger } = setup();
    const alice = funded();
    const tx = sign(alice, [transfer(alice, Keypair.generate().publicKey, 1_000_000)])
      .serialize()
      .toString('base64');
    const addresses = Array.from({ length: 4 }, () => Keypair.generate().publicKey.toBase58());
    assert.equal(
      call('simulateTransaction', [tx, { encoding: 'base64', accounts: { addresses } }]).error.message,
      'Too many accounts provided; max 3',
    );
    assert.equal(
      call('simulateTransaction', [tx, { encoding: 'base64', accounts: { addresses: [], encoding: 'base58' } }]).error.message,
      'base58 encoding not supported',
    );
    assert.equal(
      call('simulateTransaction', [tx, { encoding: 'hex' }]).error.message,
      'unsupported encoding: hex. Supported encodings: base58, base64',
    );
    const many = Array.from({ length: 101 }, () => Keypair.generate().publicKey.toBase58());
    assert.deepEqual(call('getMultipleAccounts', [many]).error, { code: -32602, message: 'Too many inputs provided; max 100' });
    assert.equal(call('getMultipleAccounts', [many.slice(0, 100)]).result.value.length, 100);
    assert.deepEqual(call('simulateTransaction', [tx, { encoding: 'base64', minContextSlot: ledger.currentSlot + 10 }]).error, {
      code: -32016,
      message: 'Minimum context slot has not been reached',
      data: { contextSlot: ledger.currentSlot },
    });
    assert.equal(call('simulateTransaction', [tx, { encoding: 'base64', commitment: 'max' }]).error.code, -32602);
    assert.equal(call('simulateTransaction', [42]).error.code, -32602);
  });

  it('reports inner instructions and return data', () => {
    const { call, funded, sign, execute, ledger } = setup();
    const alice = funded();
    const mint = Keypair.generate();
    execute(
      sign(
        alice,
        [
          SystemProgram.createAccount({
            fromPubkey: alice.publicKey,
            newAccountPubkey: mint.publicKey,
            lamports: Number(ledger.minimumBalanceForRentExemption(MINT_SIZE)),
            space: MINT_SIZE,
            programId: TOKEN_PROGRAM_ID,
          }),
          createInitializeMint2Instruction(mint.publicKey, 6, alice.publicKey, null),
        ],
        [mint],
      ),
    );
    const ata = getAssociatedTokenAddressSync(mint.publicKey, alice.publicKey);
    const create = sign(alice, [createAssociatedTokenAccountInstruction(alice.publicKey, ata, alice.publicKey, mint.publicKey)])
      .serialize()
      .toString('base64');
    const value = call('simulateTransaction', [create, { encoding: 'base64', innerInstructions: true }]).result.value;
    assert.equal(value.err, null);
    assert.equal(value.innerInstructions.length, 1);
    assert.equal(value.innerInstructions[0].index, 0);
    const programs = value.innerInstructions[0].instructions.map((ix: { programId: string }) => ix.programId);
    assert.ok(programs.includes('11111111111111111111111111111111') && programs.includes(TOKEN_PROGRAM_ID.toBase58()), programs.join());
    assert.ok(value.innerInstructions[0].instructions.every((ix: { stackHeight: number }) => ix.stackHeight === 2));

    const uiAmount = sign(alice, [createAmountToUiAmountInstruction(mint.publicKey, 1_500_000n)])
      .serialize()
      .toString('base64');
    const returned = call('simulateTransaction', [uiAmount, { encoding: 'base64' }]).result.value;
    assert.deepEqual(returned.returnData, {
      programId: TOKEN_PROGRAM_ID.toBase58(),
      data: [Buffer.from('1.5').toString('base64'), 'base64'],
    });
  });
});

describe('fees on the local ledger', () => {
  it('getFeeForMessage quotes exactly what executing the message charges; null once its blockhash expired', () => {
    const { call, funded, sign, execute, transfer, balance } = setup();
    const alice = funded();
    const cases: TransactionInstruction[][] = [
      [transfer(alice, Keypair.generate().publicKey, 1_000_000)],
      [
        ComputeBudgetProgram.setComputeUnitLimit({ units: 50_000 }),
        ComputeBudgetProgram.setComputeUnitPrice({ microLamports: 123_457 }),
        transfer(alice, Keypair.generate().publicKey, 1_000_000),
      ],
      [ComputeBudgetProgram.setComputeUnitPrice({ microLamports: 1_000_001 }), transfer(alice, Keypair.generate().publicKey, 1_000_000)],
      [
        ComputeBudgetProgram.setComputeUnitPrice({ microLamports: 3 }),
        transfer(alice, Keypair.generate().publicKey, 1_000_000),
        new TransactionInstruction({ programId: MEMO_PROGRAM, keys: [], data: Buffer.from('fee') }),
      ],
    ];
    for (const instructions of cases) {
      const tx = sign(alice, instructions);
      const quoted = call('getFeeForMessage', [tx.serializeMessage().toString('base64')]).result.value;
      const before = balance(alice.publicKey);
      execute(tx);
      assert.equal(
        before - balance(alice.publicKey) - 1_000_000,
        quoted,
        instructions.map((ix) => ix.programId.toBase58().slice(0, 6)).join(),
      );
    }
    const stale = sign(alice, [transfer(alice, Keypair.generate().publicKey, 1_000_000)], [], bs58.encode(Buffer.alloc(32, 9)));
    assert.equal(call('getFeeForMessage', [stale.serializeMessage().toString('base64')]).result.value, null);
    assert.equal(call('getFeeForMessage', ['AQABAg==']).error.code, -32602);
    assert.equal(call('getFeeForMessage', [7]).error.code, -32602);
  });

  it('getRecentPrioritizationFees: per recent slot, the lowest price paid, raised to the lowest paid for the accounts asked', () => {
    const { ledger, call, funded, sign, execute, transfer } = setup();
    const alice = funded();
    const busy = Keypair.generate().publicKey;
    const quiet = Keypair.generate().publicKey;
    ledger.advanceSlot();
    const slot = ledger.currentSlot;
    execute(sign(alice, [ComputeBudgetProgram.setComputeUnitPrice({ microLamports: 7_777 }), transfer(alice, busy, 1_000_000)]));
    execute(sign(alice, [ComputeBudgetProgram.setComputeUnitPrice({ microLamports: 100 }), transfer(alice, quiet, 1_000_000)]));
    ledger.advanceSlot();
    const at = (accounts: PublicKey[]) =>
      (
        call('getRecentPrioritizationFees', [accounts.map((a) => a.toBase58())]).result as { slot: number; prioritizationFee: number }[]
      ).find((f) => f.slot === slot)?.prioritizationFee;
    assert.equal(at([]), 100);
    assert.equal(at([busy]), 7_777);
    assert.equal(at([quiet, busy]), 7_777);
    assert.equal(at([Keypair.generate().publicKey]), 100);
    const all = call('getRecentPrioritizationFees', []).result as { slot: number; prioritizationFee: number }[];
    assert.equal(all.at(-1)!.slot, ledger.currentSlot);
    assert.equal(all.find((f) => f.slot === slot + 1)!.prioritizationFee, 0, 'a slot without transactions');
    assert.equal(
      call('getRecentPrioritizationFees', [Array.from({ length: 129 }, () => busy.toBase58())]).error.message,
      'Too many inputs provided; max 128',
    );
  });
});

describe('getTokenAccountBalance and getSignaturesForAddress on the local ledger', () => {
  it("answers a token account's balance with its mint's decimals", () => {
    const { call, funded, sign, execute, ledger } = setup();
    const alice = funded();
    const mint = Keypair.generate();
    const ata = getAssociatedTokenAddressSync(mint.publicKey, alice.publicKey);
    execute(
      sign(
        alice,
        [
          SystemProgram.createAccount({
            fromPubkey: alice.publicKey,
            newAccountPubkey: mint.publicKey,
            lamports: Number(ledger.minimumBalanceForRentExemption(MINT_SIZE)),
            space: MINT_SIZE,
            programId: TOKEN_PROGRAM_ID,
          }),
          createInitializeMint2Instruction(mint.publicKey, 6, alice.publicKey, null),
          createAssociatedTokenAccountInstruction(alice.publicKey, ata, alice.publicKey, mint.publicKey),
          createMintToInstruction(mint.publicKey, ata, alice.publicKey, 1_500_000n),
        ],
        [mint],
      ),
    );
    assert.deepEqual(call('getTokenAccountBalance', [ata.toBase58()]).result.value, {
      amount: '1500000',
      decimals: 6,
      uiAmount: 1.5,
      uiAmountString: '1.5',
    });
    assert.equal(call('getTokenAccountBalance', [alice.publicKey.toBase58()]).error.message, 'Invalid param: not a Token account');
    assert.equal(call('getTokenAccountBalance', [mint.publicKey.toBase58()]).error.message, 'Invalid param: not a Token account');
    assert.equal(
      call('getTokenAccountBalance', [Keypair.generate().publicKey.toBase58()]).error.message,
      'Invalid param: could not find account',
    );
    assert.deepEqual(
      [uiAmountString(0n, 6), uiAmountString(100n, 2), uiAmountString(1n, 9), uiAmountString(1_230n, 3), uiAmountString(42n, 0)],
      ['0', '1', '0.000000001', '1.23', '42'],
    );
  });

  it('lists the signatures that touched an address, newest first, with before, until, limit and memos', () => {
    const { ledger, call, funded, sign, execute, transfer } = setup();
    const alice = funded();
    const bob = Keypair.generate().publicKey;
    const signatures: string[] = [];
    for (let i = 0; i < 4; i++) {
      const memo = new TransactionInstruction({ programId: MEMO_PROGRAM, keys: [], data: Buffer.from(`payment ${i}`) });
      signatures.push(execute(sign(alice, [transfer(alice, bob, 1_000_000 + i), ...(i === 2 ? [memo] : [])])).signature);
      ledger.advanceSlot();
    }
    execute(sign(alice, [transfer(alice, Keypair.generate().publicKey, 1_000_000)]));
    const list = (config: object = {}) =>
      call('getSignaturesForAddress', [bob.toBase58(), config]).result as {
        signature: string;
        memo: string | null;
        confirmationStatus: string;
        err: unknown;
      }[];
    assert.deepEqual(
      list().map((e) => e.signature),
      [...signatures].reverse(),
    );
    assert.deepEqual(
      list({ limit: 2 }).map((e) => e.signature),
      [signatures[3], signatures[2]],
    );
    assert.deepEqual(
      list({ before: signatures[3], until: signatures[0] }).map((e) => e.signature),
      [signatures[2], signatures[1]],
    );
    assert.equal(list().find((e) => e.signature === signatures[2])!.memo, '[9] payment 2');
    assert.equal(list().find((e) => e.signature === signatures[1])!.memo, null);
    assert.ok(list().every((e) => e.confirmationStatus === 'confirmed' && e.err === null));
    assert.equal(list({ commitment: 'finalized' }).length, 0, 'nothing is 32 slots deep yet');
    assert.equal(
      call('getSignaturesForAddress', [bob.toBase58(), { commitment: 'processed' }]).error.message,
      'Method does not support commitment below `confirmed`',
    );
    assert.equal(call('getSignaturesForAddress', [bob.toBase58(), { limit: 1_001 }]).error.message, 'Invalid limit; max 1000');
  });
});

describe("Jito's tip accounts on the local ledger", () => {
  it('exist rent-exempt at genesis and after a restore, so that a bundle tipping the 1,000-lamport minimum lands', () => {
    const { ledger, balance, funded, sign, validated, transfer } = setup();
    const rentExempt = Number(ledger.minimumBalanceForRentExemption(0));
    for (const tip of JITO_TIP_ACCOUNTS) assert.equal(balance(new PublicKey(tip)), rentExempt);
    const alice = funded();
    const tipAccount = new PublicKey(JITO_TIP_ACCOUNTS[3]!);
    const tx = validated(sign(alice, [transfer(alice, Keypair.generate().publicKey, 1_000_000), transfer(alice, tipAccount, 1_000)]));
    const bundleId = computeBundleId([tx.signature]);
    const outcome = ledger.executeBundle(bundleId, [tx]);
    assert.equal(outcome.landed, true);
    assert.equal(balance(tipAccount), rentExempt + 1_000);

    // The same bundle again (its first answer lost): it stays landed, nothing runs twice.
    assert.equal(ledger.executeBundle(bundleId, [tx]).landed, true);
    assert.equal(ledger.getBundle(bundleId)!.landed, true);
    assert.equal(balance(tipAccount), rentExempt + 1_000);

    const dir = makeDataDir();
    try {
      ledger.save(dir);
      const restored = LocalLedger.open({ slotMs: 1_000_000 }, dir);
      const restoredBalance = (tip: string) => Number(restored.getAccount(new PublicKey(tip).toBytes())?.lamports ?? 0n);
      assert.equal(restoredBalance(JITO_TIP_ACCOUNTS[3]!), rentExempt + 1_000);
      assert.equal(restoredBalance(JITO_TIP_ACCOUNTS[0]!), rentExempt);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
