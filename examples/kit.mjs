// Send a transfer through Slipway with @solana/kit, and wait until it has landed.
//   SLIPWAY_URL=http://127.0.0.1:8080 SLIPWAY_API_KEY=slw_… node examples/kit.mjs
import {
  AccountRole,
  address,
  appendTransactionMessageInstruction,
  createSolanaRpc,
  createTransactionMessage,
  generateKeyPairSigner,
  getBase64EncodedWireTransaction,
  getSignatureFromTransaction,
  lamports,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
} from '@solana/kit';

const rpc = createSolanaRpc(process.env.SLIPWAY_URL ?? 'http://127.0.0.1:8080', { headers: { 'x-api-key': process.env.SLIPWAY_API_KEY } });

const waitForLanding = async (signature) => {
  for (let i = 0; i < 100; i++) {
    const { value } = await rpc.getSignatureStatuses([signature]).send();
    if (value[0]?.confirmationStatus === 'confirmed' || value[0]?.confirmationStatus === 'finalized') return value[0];
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`${signature} did not land in 20 s`);
};

const payer = await generateKeyPairSigner();
await waitForLanding(await rpc.requestAirdrop(payer.address, lamports(1_000_000_000n)).send());

const recipient = (await generateKeyPairSigner()).address;
const { value: latestBlockhash } = await rpc.getLatestBlockhash().send();
const data = new Uint8Array(12);
new DataView(data.buffer).setUint32(0, 2, true); // the System Program's Transfer
new DataView(data.buffer).setBigUint64(4, 1_000_000n, true);
const message = pipe(
  createTransactionMessage({ version: 0 }),
  (m) => setTransactionMessageFeePayerSigner(payer, m),
  (m) => setTransactionMessageLifetimeUsingBlockhash(latestBlockhash, m),
  (m) =>
    appendTransactionMessageInstruction(
      {
        programAddress: address('11111111111111111111111111111111'),
        accounts: [
          { address: payer.address, role: AccountRole.WRITABLE_SIGNER, signer: payer },
          { address: recipient, role: AccountRole.WRITABLE },
        ],
        data,
      },
      m,
    ),
);
const tx = await signTransactionMessageWithSigners(message);
const signature = await rpc.sendTransaction(getBase64EncodedWireTransaction(tx), { encoding: 'base64' }).send();
if (signature !== getSignatureFromTransaction(tx)) throw new Error('the gateway answered another signature');
const status = await waitForLanding(signature);
console.log(`landed ${signature} in slot ${status.slot}`);
