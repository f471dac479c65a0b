import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  MINT_SIZE,
  TOKEN_PROGRAM_ID,
  createAssociatedTokenAccountInstruction,
  createInitializeMint2Instruction,
  createMintToInstruction,
  createTransferInstruction,
  getAccount,
  getAssociatedTokenAddressSync,
} from '@solana/spl-token';
import { Keypair, SystemProgram, Transaction, type TransactionInstruction } from '@solana/web3.js';
import { useGateway } from '../helpers/use-gateway';
import { fundedKeypair, waitForStatus } from '../helpers/solana';

const ctx = useGateway();

async function sendSigned(payer: Keypair, signers: Keypair[], ...instructions: TransactionInstruction[]): Promise<string> {
  const tx = new Transaction({ feePayer: payer.publicKey, recentBlockhash: (await ctx.connection.getLatestBlockhash()).blockhash }).add(
    ...instructions,
  );
  tx.sign(payer, ...signers);
  const signature = await ctx.connection.sendRawTransaction(tx.serialize());
  const status = await waitForStatus(ctx.connection, signature);
  assert.equal(status.err, null);
  return signature;
}

describe('SPL token through the gateway', () => {
  it('creates a mint, mints, and transfers tokens between associated accounts', async () => {
    const alice = await fundedKeypair(ctx.connection);
    const bob = Keypair.generate();
    const mint = Keypair.generate();
    const rent = await ctx.connection.getMinimumBalanceForRentExemption(MINT_SIZE);
    await sendSigned(
      alice,
      [mint],
      SystemProgram.createAccount({
        fromPubkey: alice.publicKey,
        newAccountPubkey: mint.publicKey,
        space: MINT_SIZE,
        lamports: rent,
        programId: TOKEN_PROGRAM_ID,
      }),
      createInitializeMint2Instruction(mint.publicKey, 6, alice.publicKey, null),
    );
    const aliceAta = getAssociatedTokenAddressSync(mint.publicKey, alice.publicKey);
    const bobAta = getAssociatedTokenAddressSync(mint.publicKey, bob.publicKey);
    await sendSigned(
      alice,
      [],
      createAssociatedTokenAccountInstruction(alice.publicKey, aliceAta, alice.publicKey, mint.publicKey),
      createAssociatedTokenAccountInstruction(alice.publicKey, bobAta, bob.publicKey, mint.publicKey),
      createMintToInstruction(mint.publicKey, aliceAta, alice.publicKey, 1_000_000n),
    );
    await sendSigned(alice, [], createTransferInstruction(aliceAta, bobAta, alice.publicKey, 250_000n));
    assert.equal((await getAccount(ctx.connection, aliceAta, 'processed')).amount, 750_000n);
    assert.equal((await getAccount(ctx.connection, bobAta, 'processed')).amount, 250_000n);
  });
});
