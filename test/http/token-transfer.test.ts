import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
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
import { Keypair, SystemProgram, Transaction, type Connection, type TransactionInstruction } from '@solana/web3.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway';
import { connect, fundedKeypair, waitForStatus } from '../helpers/solana';

let gw: TestGateway;
let connection: Connection;
before(async () => {
  gw = await startTestGateway();
  connection = connect(gw.url, gw.key);
});
after(() => gw.close());

async function sendSigned(payer: Keypair, signers: Keypair[], ...instructions: TransactionInstruction[]): Promise<string> {
  const tx = new Transaction({ feePayer: payer.publicKey, recentBlockhash: (await connection.getLatestBlockhash()).blockhash }).add(...instructions);
  tx.sign(payer, ...signers);
  const signature = await connection.sendRawTransaction(tx.serialize());
  const status = await waitForStatus(connection, signature);
  assert.equal(status.err, null);
  return signature;
}

describe('SPL token through the gateway', () => {
  it('creates a mint, mints, and transfers tokens between associated accounts', async () => {
    const alice = await fundedKeypair(connection);
    const bob = Keypair.generate();
    const mint = Keypair.generate();
    const rent = await connection.getMinimumBalanceForRentExemption(MINT_SIZE);
    await sendSigned(
      alice,
      [mint],
      SystemProgram.createAccount({ fromPubkey: alice.publicKey, newAccountPubkey: mint.publicKey, space: MINT_SIZE, lamports: rent, programId: TOKEN_PROGRAM_ID }),
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
    assert.equal((await getAccount(connection, aliceAta, 'processed')).amount, 750_000n);
    assert.equal((await getAccount(connection, bobAta, 'processed')).amount, 250_000n);
  });
});
