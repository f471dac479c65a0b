// Send a transfer through Slipway with @solana/web3.js 1.x, and wait until it has landed.
//   SLIPWAY_URL=http://127.0.0.1:8080 SLIPWAY_API_KEY=slw_… node examples/web3js.mjs
// On the embedded ledger the payer is funded with requestAirdrop; on mainnet use a funded keypair.
import { Connection, Keypair, LAMPORTS_PER_SOL, SystemProgram, Transaction } from '@solana/web3.js';

const url = process.env.SLIPWAY_URL ?? 'http://127.0.0.1:8080';
const connection = new Connection(url, { commitment: 'confirmed', httpHeaders: { 'x-api-key': process.env.SLIPWAY_API_KEY } });

const waitForLanding = async (signature) => {
  for (let i = 0; i < 100; i++) {
    const { value } = await connection.getSignatureStatuses([signature]);
    if (value[0]?.confirmationStatus === 'confirmed' || value[0]?.confirmationStatus === 'finalized') return value[0];
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`${signature} did not land in 20 s`);
};

const payer = Keypair.generate();
await waitForLanding(await connection.requestAirdrop(payer.publicKey, LAMPORTS_PER_SOL));

const recipient = Keypair.generate().publicKey;
const { blockhash } = await connection.getLatestBlockhash();
const tx = new Transaction({ feePayer: payer.publicKey, recentBlockhash: blockhash }).add(
  SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: recipient, lamports: 1_000_000 }),
);
tx.sign(payer);
const signature = await connection.sendRawTransaction(tx.serialize());
const status = await waitForLanding(signature);
console.log(
  `landed ${signature} in slot ${status.slot}; the recipient has ${await connection.getBalance(recipient, 'confirmed')} lamports`,
);
