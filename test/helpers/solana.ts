/**
 * Real Solana transactions for tests, built and signed with @solana/web3.js 1.x against
 * the gateway's own blockhash.
 */
import {
  Connection,
  Keypair,
  LAMPORTS_PER_SOL,
  PublicKey,
  SystemProgram,
  Transaction,
  TransactionInstruction,
  type TransactionSignature,
} from '@solana/web3.js';

export function connect(url: string, key: string): Connection {
  return new Connection(url, { commitment: 'confirmed', httpHeaders: { 'x-api-key': key }, disableRetryOnRateLimit: true });
}

/** Funds a new keypair with an airdrop and waits until it is confirmed. */
export async function fundedKeypair(connection: Connection, sol = 10): Promise<Keypair> {
  const keypair = Keypair.generate();
  const signature = await connection.requestAirdrop(keypair.publicKey, sol * LAMPORTS_PER_SOL);
  await waitForStatus(connection, signature);
  return keypair;
}

/** Polls getSignatureStatuses until the signature is confirmed (web3.js's confirmTransaction needs WebSockets). */
export async function waitForStatus(connection: Connection, signature: TransactionSignature, timeoutMs = 5000) {
  const started = Date.now();
  for (;;) {
    const { value } = await connection.getSignatureStatuses([signature]);
    const status = value[0];
    if (status && (status.confirmationStatus === 'confirmed' || status.confirmationStatus === 'finalized')) return status;
    if (Date.now() - started > timeoutMs)
      throw new Error(`${signature} not confirmed after ${timeoutMs} ms (status ${JSON.stringify(status)})`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** A signed legacy transfer, Base64 encoded. `memo` makes otherwise identical transfers distinct. */
export async function transferTx(connection: Connection, from: Keypair, to: PublicKey, lamports: number, memo?: string): Promise<string> {
  const { blockhash } = await connection.getLatestBlockhash();
  const tx = new Transaction({ feePayer: from.publicKey, recentBlockhash: blockhash }).add(
    SystemProgram.transfer({ fromPubkey: from.publicKey, toPubkey: to, lamports }),
  );
  if (memo !== undefined) tx.add(memoInstruction(memo, from.publicKey));
  tx.sign(from);
  return tx.serialize().toString('base64');
}

export const MEMO_PROGRAM = new PublicKey('MemoSq4gqABAXKb96qnH1TysNcWxMyWCqXgDLGmfcHr');

/** SPL Memo is not loaded in LiteSVM; referencing an absent program makes a transaction fail. */
export function memoInstruction(text: string, signer: PublicKey): TransactionInstruction {
  return new TransactionInstruction({
    programId: MEMO_PROGRAM,
    keys: [{ pubkey: signer, isSigner: true, isWritable: false }],
    data: Buffer.from(text),
  });
}

/** A transfer that fails on chain: it moves more lamports than the sender has. */
export async function failingTransferTx(connection: Connection, from: Keypair, to: PublicKey): Promise<string> {
  return transferTx(connection, from, to, 1_000_000 * LAMPORTS_PER_SOL);
}

export const balanceOf = async (connection: Connection, key: PublicKey) => connection.getBalance(key, 'processed');
