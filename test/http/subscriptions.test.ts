import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { getTransferSolInstruction } from '@solana-program/system';
import {
  appendTransactionMessageInstruction,
  createSolanaRpc,
  createSolanaRpcSubscriptions,
  createTransactionMessage,
  generateKeyPairSigner,
  getSignatureFromTransaction,
  lamports,
  pipe,
  sendAndConfirmTransactionFactory,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
} from '@solana/kit';
import { Connection, Keypair, LAMPORTS_PER_SOL, PublicKey, SystemProgram, Transaction, sendAndConfirmTransaction } from '@solana/web3.js';
import WebSocket from 'ws';
import { startTestGateway, type TestGateway } from '../helpers/gateway';
import { balanceOf, connect, fundedKeypair, waitForStatus } from '../helpers/solana';

let gw: TestGateway;
before(async () => {
  // Port + 1 must be free for the default WebSocket endpoint; with port 0, try a few times.
  for (let i = 0; i < 5; i++) {
    gw = await startTestGateway();
    if (gw.app.pubsubUrl !== undefined) return;
    await gw.close();
  }
  throw new Error('no free port pair for the gateway and its WebSocket port');
});
after(() => gw.close());

const wsUrl = () => `${gw.url.replace('http', 'ws')}/?api-key=${gw.key}`;

describe('WebSocket subscriptions', () => {
  it('@solana/web3.js sendAndConfirmTransaction works unchanged, on port + 1 where web3.js looks by default', async () => {
    const connection = new Connection(`${gw.url}/?api-key=${gw.key}`, 'confirmed');
    const alice = await fundedKeypair(connect(gw.url, gw.key));
    const bob = Keypair.generate();
    const tx = new Transaction().add(
      SystemProgram.transfer({ fromPubkey: alice.publicKey, toPubkey: bob.publicKey, lamports: LAMPORTS_PER_SOL }),
    );
    const signature = await sendAndConfirmTransaction(connection, tx, [alice]);
    assert.equal(typeof signature, 'string');
    assert.equal(await balanceOf(connection, bob.publicKey), LAMPORTS_PER_SOL);
  });

  it('@solana/web3.js confirmTransaction on the main port', async () => {
    const connection = new Connection(gw.url, { commitment: 'confirmed', httpHeaders: { 'x-api-key': gw.key }, wsEndpoint: wsUrl() });
    const alice = await fundedKeypair(connection);
    const bob = Keypair.generate();
    const latest = await connection.getLatestBlockhash();
    const tx = new Transaction({ feePayer: alice.publicKey, ...latest }).add(
      SystemProgram.transfer({ fromPubkey: alice.publicKey, toPubkey: bob.publicKey, lamports: 2_000_000 }),
    );
    tx.sign(alice);
    const signature = await connection.sendRawTransaction(tx.serialize());
    const confirmed = await connection.confirmTransaction({ signature, ...latest }, 'confirmed');
    assert.equal(confirmed.value.err, null);
    assert.equal(await balanceOf(connection, bob.publicKey), 2_000_000);
  });

  it("@solana/kit's sendAndConfirmTransaction works unchanged", async () => {
    const rpc = createSolanaRpc(gw.url, { headers: { 'x-api-key': gw.key } });
    const rpcSubscriptions = createSolanaRpcSubscriptions(wsUrl());
    const payer = await generateKeyPairSigner();
    const recipient = await generateKeyPairSigner();
    const web3 = connect(gw.url, gw.key);
    await fundedKeypair(web3).then(async (funder) => {
      const tx = new Transaction({ feePayer: funder.publicKey, recentBlockhash: (await web3.getLatestBlockhash()).blockhash }).add(
        SystemProgram.transfer({ fromPubkey: funder.publicKey, toPubkey: new PublicKey(payer.address), lamports: LAMPORTS_PER_SOL }),
      );
      tx.sign(funder);
      await waitForStatus(web3, await web3.sendRawTransaction(tx.serialize()));
    });
    const { value: latest } = await rpc.getLatestBlockhash().send();
    const message = pipe(
      createTransactionMessage({ version: 0 }),
      (m) => setTransactionMessageFeePayerSigner(payer, m),
      (m) => setTransactionMessageLifetimeUsingBlockhash(latest, m),
      (m) =>
        appendTransactionMessageInstruction(
          getTransferSolInstruction({ source: payer, destination: recipient.address, amount: lamports(3_000_000n) }),
          m,
        ),
    );
    const signed = await signTransactionMessageWithSigners(message);
    await sendAndConfirmTransactionFactory({ rpc, rpcSubscriptions })(signed as never, { commitment: 'confirmed' });
    const { value } = await rpc.getBalance(recipient.address).send();
    assert.equal(value, 3_000_000n);
    assert.equal(typeof getSignatureFromTransaction(signed), 'string');
  });

  it('slotSubscribe notifies new slots', async () => {
    const socket = new WebSocket(wsUrl());
    await new Promise((resolve) => socket.once('open', resolve));
    const slots: number[] = [];
    const done = new Promise<void>((resolve) =>
      socket.on('message', (data) => {
        const message = JSON.parse(data.toString());
        if (message.method === 'slotNotification') slots.push(message.params.result.slot);
        if (slots.length === 3) resolve();
      }),
    );
    socket.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'slotSubscribe' }));
    await done;
    socket.close();
    assert.ok(slots[0]! < slots[1]! && slots[1]! < slots[2]!, `increasing: ${slots}`);
  });

  it('refuses a connection without a valid key, with 401', async () => {
    for (const url of [gw.url.replace('http', 'ws'), `${gw.url.replace('http', 'ws')}/?api-key=slw_nope`]) {
      const socket = new WebSocket(url);
      const status = await new Promise<number>((resolve) => socket.on('unexpected-response', (_req, res) => resolve(res.statusCode!)));
      assert.equal(status, 401);
    }
  });
});
