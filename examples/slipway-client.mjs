// Send a transfer, a batch and a bundle through Slipway with its own client, and follow them.
//   SLIPWAY_URL=http://127.0.0.1:8080 SLIPWAY_API_KEY=slw_… node examples/slipway-client.mjs
import { ComputeBudgetProgram, Connection, Keypair, LAMPORTS_PER_SOL, SystemProgram, Transaction } from '@solana/web3.js';
import { createSlipwayClient, SlipwayClientError } from 'slipway/client';

const url = process.env.SLIPWAY_URL ?? 'http://127.0.0.1:8080';
const apiKey = process.env.SLIPWAY_API_KEY;
const slipway = createSlipwayClient({ url, apiKey });
// Reads (airdrop, blockhash) go through the same gateway, with any Solana client.
const connection = new Connection(url, { commitment: 'confirmed', httpHeaders: { 'x-api-key': apiKey } });

const payer = Keypair.generate();
await connection.requestAirdrop(payer.publicKey, LAMPORTS_PER_SOL);
const until = async (ids, done) => {
  for (let i = 0; i < 100; i++) {
    const statuses = await slipway.getStatuses(ids);
    if (statuses.every(done)) return statuses;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`not final in 20 s: ${ids.join(', ')}`);
};
for (let i = 0; i < 100 && (await connection.getBalance(payer.publicKey)) === 0; i++)
  await new Promise((resolve) => setTimeout(resolve, 200));

const transfer = async (lamports, microLamports) => {
  const { blockhash } = await connection.getLatestBlockhash();
  const tx = new Transaction({ feePayer: payer.publicKey, recentBlockhash: blockhash });
  // A tight unit limit and a price: what a leader orders by is the fee per unit of block it takes.
  if (microLamports !== undefined)
    tx.add(ComputeBudgetProgram.setComputeUnitLimit({ units: 1_000 }), ComputeBudgetProgram.setComputeUnitPrice({ microLamports }));
  tx.add(SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: Keypair.generate().publicKey, lamports }));
  tx.sign(payer);
  return tx; // the client takes web3.js and kit transactions, bytes or Base64
};

// The price for a 90 % chance of landing within 8 slots, for this transaction as it will be sent.
const advice = await slipway.getLandingEstimate({ transaction: await transfer(1_000_000, 0), probability: 0.9, withinSlots: 8 });
const single = await slipway.sendTransaction(await transfer(1_000_000, advice.microLamportsPerComputeUnit));
const batch = await slipway.submitBatch([await transfer(2_000_000), await transfer(3_000_000)]);
const bundle = await slipway.sendBundle([await transfer(4_000_000), await transfer(5_000_000)]);
const final = await until([single, ...batch, bundle.bundleId], (s) => s !== null && s.state !== 'forwarded' && s.state !== 'held');
for (const status of final)
  console.log(`${status.kind} ${status.id}: ${status.state}${status.slot === null ? '' : ` in slot ${status.slot}`}`);

console.log(
  `advised ${advice.microLamportsPerComputeUnit} micro-lamports per unit for ${advice.probability * 100} % within ${advice.withinSlots} slots, from ${advice.evidence.outcomes} outcomes`,
);
try {
  await slipway.sendTransaction('AAAA');
} catch (error) {
  if (!(error instanceof SlipwayClientError)) throw error;
  console.log(`refused as expected: ${error.code} ${error.message}`);
}
