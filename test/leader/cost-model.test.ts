/**
 * The cost of known transactions equals Agave's formula (cost-model crate), each term worked
 * out by hand here: 720 a signature, 300 a write lock, data bytes / 4, the compute-unit limit
 * asked for or the default, 8 per 32 KiB of the loaded-accounts limit.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  ComputeBudgetProgram,
  Ed25519Program,
  Keypair,
  PublicKey,
  SystemProgram,
  Transaction,
  TransactionInstruction,
} from '@solana/web3.js';
import { createTransferInstruction } from '@solana/spl-token';
import { transactionCost } from '../../src/leader/cost-model';
import { isWireDefect, parseWireTransaction, type WireTransaction } from '../../src/validation/wire-transaction';

const payer = Keypair.generate();
const blockhash = new PublicKey(Buffer.alloc(32, 9)).toBase58();
/** The default loaded-accounts limit, 64 MiB, in pages of 32 KiB at 8 units each. */
const DEFAULT_LOADED = ((64 * 1024 * 1024) / (32 * 1024)) * 8;

function wireOf(...instructions: TransactionInstruction[]): WireTransaction {
  const tx = new Transaction({ feePayer: payer.publicKey, recentBlockhash: blockhash }).add(...instructions);
  tx.sign(payer);
  const wire = parseWireTransaction(tx.serialize({ requireAllSignatures: false, verifySignatures: false }));
  assert.ok(!isWireDefect(wire));
  return wire;
}
const transfer = () => SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: Keypair.generate().publicKey, lamports: 1 });

describe("Agave's cost model", () => {
  it('a SOL transfer: 1 signature, 2 write locks (the System Program is read-only), 12 data bytes, a builtin instruction, the default loaded limit', () => {
    const cost = transactionCost(wireOf(transfer()));
    assert.deepEqual(cost, {
      signature: 720,
      writeLock: 600,
      dataBytes: 3,
      execution: 3_000,
      loadedAccountsData: DEFAULT_LOADED,
      total: 720 + 600 + 3 + 3_000 + 16_384,
      writeLocks: 2,
    });
  });

  it('compute-budget instructions: the limit asked for is the execution cost, the loaded-accounts limit in pages, their data counted', () => {
    const cost = transactionCost(
      wireOf(
        ComputeBudgetProgram.setComputeUnitLimit({ units: 450 }),
        ComputeBudgetProgram.setComputeUnitPrice({ microLamports: 1_000 }),
        new TransactionInstruction({ programId: ComputeBudgetProgram.programId, keys: [], data: Buffer.from([4, 0x01, 0x80, 0, 0]) }), // 32,769 bytes: 2 pages
        transfer(),
      ),
    );
    assert.equal(cost.execution, 450);
    assert.equal(cost.loadedAccountsData, 16);
    assert.equal(cost.dataBytes, Math.floor((5 + 9 + 5 + 12) / 4));
    assert.equal(cost.total, 720 + 600 + 7 + 450 + 16);
  });

  it('a compute-budget instruction given twice fails the transaction: no execution or loaded-data cost', () => {
    const cost = transactionCost(
      wireOf(
        ComputeBudgetProgram.setComputeUnitLimit({ units: 450 }),
        ComputeBudgetProgram.setComputeUnitLimit({ units: 500 }),
        transfer(),
      ),
    );
    assert.equal(cost.execution, 0);
    assert.equal(cost.loadedAccountsData, 0);
    assert.equal(cost.total, 720 + 600 + Math.floor(22 / 4));
  });

  it('a program call and a token transfer: 200,000 units by default for an instruction to a program that is not built in', () => {
    const program = Keypair.generate().publicKey;
    const writable = Keypair.generate().publicKey;
    const call = transactionCost(
      wireOf(
        new TransactionInstruction({
          programId: program,
          keys: [{ pubkey: writable, isSigner: false, isWritable: true }],
          data: Buffer.alloc(10),
        }),
      ),
    );
    assert.deepEqual(
      [call.execution, call.writeLocks, call.dataBytes, call.total],
      [200_000, 2, 2, 720 + 600 + 2 + 200_000 + DEFAULT_LOADED],
    );
    const token = transactionCost(
      wireOf(createTransferInstruction(Keypair.generate().publicKey, Keypair.generate().publicKey, payer.publicKey, 5)),
    );
    // Source and destination writable, the owner the fee payer; data: 1 + 8 bytes.
    assert.deepEqual(
      [token.execution, token.writeLocks, token.dataBytes, token.total],
      [200_000, 3, 2, 720 + 900 + 2 + 200_000 + DEFAULT_LOADED],
    );
  });

  it("a precompile's signatures are paid at its price, and its instruction reserves a builtin's 3,000 units", () => {
    const signer = Keypair.generate();
    const message = Buffer.from('hello');
    const verify = Ed25519Program.createInstructionWithPrivateKey({ privateKey: signer.secretKey, message });
    const cost = transactionCost(wireOf(verify, transfer()));
    assert.equal(cost.signature, 720 + 2_400);
    assert.equal(cost.execution, 3_000 + 3_000);
    assert.equal(cost.dataBytes, Math.floor((verify.data.length + 12) / 4));
  });

  it('an invoked program and a sysvar marked writable are not write-locked (Agave demotes them)', () => {
    const program = Keypair.generate().publicKey;
    const clock = new PublicKey('SysvarC1ock11111111111111111111111111111111');
    const ix = new TransactionInstruction({
      programId: program,
      keys: [
        { pubkey: program, isSigner: false, isWritable: true },
        { pubkey: clock, isSigner: false, isWritable: true },
      ],
      data: Buffer.alloc(0),
    });
    const cost = transactionCost(wireOf(ix));
    assert.equal(cost.writeLocks, 1); // the fee payer alone
    assert.equal(cost.writeLock, 300);
  });
});
