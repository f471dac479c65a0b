/**
 * Popular Solana clients, unchanged, against Slipway on both shapes a user starts with: the
 * default `bin/slipway serve` (embedded ledger) and a gateway in front of `bin/slipway
 * ledger` (RPC node and block engine). Each builds, sends and confirms a transfer with its
 * own helpers (gill's prepareTransaction, which simulates to size the compute limit, then
 * sendAndConfirmTransaction; @solana-developers/helpers' sendTransaction; anchor's
 * AnchorProvider.sendAndConfirm; umi's sendTransaction and confirmTransaction; kit's
 * sendAndConfirmTransactionFactory; a jito-js-rpc bundle tipping the 1,000-lamport minimum),
 * and the recipient's balance is checked.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { after, before, describe, it } from 'node:test';
import { Connection, Keypair, LAMPORTS_PER_SOL, PublicKey, SystemProgram, Transaction } from '@solana/web3.js';
import * as kit from '@solana/kit';
import * as gill from 'gill';
import { AnchorProvider, Wallet } from '@coral-xyz/anchor';
import { createUmi } from '@metaplex-foundation/umi-bundle-defaults';
import { keypairIdentity, transactionBuilder } from '@metaplex-foundation/umi';
import { fromWeb3JsInstruction } from '@metaplex-foundation/umi-web3js-adapters';
import { sendTransaction as helpersSendTransaction } from '@solana-developers/helpers';
import { JitoJsonRpcClient } from 'jito-js-rpc';
import bs58 from 'bs58';
import { createSlipwayClient } from '../../src/client';
import { makeDataDir } from '../helpers/gateway';
import { SLIPWAY, startServer, type ServerProcess } from '../helpers/process';
import { until } from '../helpers/until';

const AMOUNT = 1_000_000;
const JITO_MINIMUM_TIP = 1_000;

interface Shape {
  readonly name: string;
  /** Bundles go to a block engine, which wants its minimum tip (the embedded ledger executes them itself). */
  readonly engine: boolean;
  start(): Promise<{ server: ServerProcess; stop(): Promise<void> }>;
}

function startLedger(dir: string): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(SLIPWAY, ['ledger', '--port', '0', '--data-dir', dir, '--slot-ms', '50'], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, SLIPWAY_LOG_LEVEL: 'warn' },
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the ledger did not start')), 30_000);
    readline.createInterface({ input: child.stdout! }).on('line', (line) => {
      const match = /listening on (http:\/\/\S+)/.exec(line);
      if (match) {
        clearTimeout(timer);
        resolve({ child, url: match[1]! });
      }
    });
  });
}

const SHAPES: Shape[] = [
  {
    name: 'the default bin/slipway serve (embedded ledger)',
    engine: false,
    async start() {
      const dir = makeDataDir();
      const server = await startServer(dir, { SLIPWAY_LOG_LEVEL: 'warn' });
      return {
        server,
        async stop() {
          server.child.kill('SIGTERM');
          await server.exited;
          fs.rmSync(dir, { recursive: true, force: true });
        },
      };
    },
  },
  {
    name: 'a gateway in front of bin/slipway ledger',
    engine: true,
    async start() {
      const ledgerDir = makeDataDir();
      const dir = makeDataDir();
      const ledger = await startLedger(ledgerDir);
      const config = path.join(dir, 'slipway.config.json');
      fs.writeFileSync(
        config,
        JSON.stringify({
          upstreams: { rpc: { type: 'rpc', urls: [ledger.url] }, engine: { type: 'jito', urls: [`${ledger.url}/api/v1`] } },
        }),
      );
      const server = await startServer(dir, { SLIPWAY_CONFIG: config, SLIPWAY_LOG_LEVEL: 'warn' });
      return {
        server,
        async stop() {
          server.child.kill('SIGTERM');
          await server.exited;
          // It saves its state as it stops: remove its folder once it has.
          const exited = new Promise((resolve) => ledger.child.once('exit', resolve));
          ledger.child.kill('SIGTERM');
          await exited;
          for (const d of [dir, ledgerDir]) fs.rmSync(d, { recursive: true, force: true });
        },
      };
    },
  },
];

for (const shape of SHAPES) {
  describe(`standard clients, unchanged, against ${shape.name}`, () => {
    let running: Awaited<ReturnType<Shape['start']>>;
    let url: string;
    let key: string;
    let connection: Connection;
    before(async () => {
      running = await shape.start();
      key = running.server.initialKey!;
      url = `${running.server.url}/?api-key=${key}`;
      connection = new Connection(url, 'confirmed');
    });
    after(async () => {
      // web3.js keeps its WebSocket (opened by the confirmations) and reconnects forever once
      // the server is gone: close it first, by the client, which it does not reconnect from.
      const socket = (connection as unknown as { _rpcWebSocket: { setAutoReconnect(on: boolean): void; close(): void } })._rpcWebSocket;
      socket.setAutoReconnect(false);
      socket.close();
      await running.stop();
    });

    const funded = async (): Promise<Keypair> => {
      const keypair = Keypair.generate();
      const signature = await connection.requestAirdrop(keypair.publicKey, 2 * LAMPORTS_PER_SOL);
      await until(
        async () => (await connection.getSignatureStatuses([signature])).value[0]?.confirmationStatus,
        (s) => s === 'confirmed' || s === 'finalized',
        10_000,
      );
      return keypair;
    };
    const transfer = (from: Keypair, to: PublicKey, lamports = AMOUNT) =>
      SystemProgram.transfer({ fromPubkey: from.publicKey, toPubkey: to, lamports });
    const balance = (address: PublicKey) => connection.getBalance(address, 'confirmed');

    it('gill: prepareTransaction (simulates for the compute limit), then sendAndConfirmTransaction', async () => {
      const port = Number(new URL(running.server.url).port);
      // gill looks for WebSockets on 8900 for local hosts; Slipway serves them on port + 1.
      const client = gill.createSolanaClient({ urlOrMoniker: url, rpcSubscriptionsConfig: { port: port + 1 } });
      const payer = await gill.createKeyPairSignerFromBytes(Uint8Array.from((await funded()).secretKey));
      const recipient = Keypair.generate().publicKey;
      const data = Buffer.alloc(12);
      data.writeUInt32LE(2, 0); // the System Program's Transfer
      data.writeBigUInt64LE(BigInt(AMOUNT), 4);
      const transaction = gill.createTransaction({
        version: 'legacy',
        feePayer: payer,
        instructions: [
          {
            programAddress: gill.address('11111111111111111111111111111111'),
            accounts: [
              { address: payer.address, role: gill.AccountRole.WRITABLE_SIGNER },
              { address: gill.address(recipient.toBase58()), role: gill.AccountRole.WRITABLE },
            ],
            data: new Uint8Array(data),
          },
        ],
      });
      const prepared = await gill.prepareTransaction({ transaction, rpc: client.rpc });
      assert.ok(prepared.instructions.length === 2, 'a compute limit from the simulation was added');
      const signature = await client.sendAndConfirmTransaction(prepared);
      assert.equal((await connection.getSignatureStatuses([signature])).value[0]?.err, null);
      assert.equal(await balance(recipient), AMOUNT);
    });

    it('@solana-developers/helpers: sendTransaction (simulates, adds compute budget, retries until confirmed)', async () => {
      const payer = await funded();
      const recipient = Keypair.generate().publicKey;
      const log = console.log;
      console.log = () => {}; // it reports each step on the console
      try {
        await helpersSendTransaction(connection, new Transaction().add(transfer(payer, recipient)), [payer]);
      } finally {
        console.log = log;
      }
      assert.equal(await balance(recipient), AMOUNT);
    });

    it('anchor: AnchorProvider.sendAndConfirm', async () => {
      const payer = await funded();
      const provider = new AnchorProvider(connection, new Wallet(payer), { commitment: 'confirmed' });
      const recipient = Keypair.generate().publicKey;
      const signature = await provider.sendAndConfirm(new Transaction().add(transfer(payer, recipient)));
      assert.equal(typeof signature, 'string');
      assert.equal(await balance(recipient), AMOUNT);
    });

    it('umi: sendTransaction, then confirmTransaction with the blockhash strategy', async () => {
      const payer = await funded();
      const umi = createUmi(connection); // umi over the same web3.js connection, whose WebSocket is closed after
      umi.use(keypairIdentity(umi.eddsa.createKeypairFromSecretKey(payer.secretKey)));
      const recipient = Keypair.generate().publicKey;
      const blockhash = await umi.rpc.getLatestBlockhash();
      const tx = await transactionBuilder()
        .add({ instruction: fromWeb3JsInstruction(transfer(payer, recipient)), signers: [umi.identity], bytesCreatedOnChain: 0 })
        .setBlockhash(blockhash)
        .buildAndSign(umi);
      const signature = await umi.rpc.sendTransaction(tx);
      const confirmed = await umi.rpc.confirmTransaction(signature, { strategy: { type: 'blockhash', ...blockhash } });
      assert.equal(confirmed.value.err, null);
      assert.equal(await balance(recipient), AMOUNT);
    });

    it("kit: sendAndConfirmTransactionFactory over the gateway's subscriptions", async () => {
      const rpc = kit.createSolanaRpc(url);
      const rpcSubscriptions = kit.createSolanaRpcSubscriptions(url.replace(/^http/, 'ws'));
      const payer = await kit.createKeyPairSignerFromBytes(Uint8Array.from((await funded()).secretKey));
      const recipient = Keypair.generate().publicKey;
      const { value: latestBlockhash } = await rpc.getLatestBlockhash().send();
      const data = Buffer.alloc(12);
      data.writeUInt32LE(2, 0);
      data.writeBigUInt64LE(BigInt(AMOUNT), 4);
      const message = kit.pipe(
        kit.createTransactionMessage({ version: 0 }),
        (m) => kit.setTransactionMessageFeePayerSigner(payer, m),
        (m) => kit.setTransactionMessageLifetimeUsingBlockhash(latestBlockhash, m),
        (m) =>
          kit.appendTransactionMessageInstruction(
            {
              programAddress: kit.address('11111111111111111111111111111111'),
              accounts: [
                { address: payer.address, role: kit.AccountRole.WRITABLE_SIGNER, signer: payer },
                { address: kit.address(recipient.toBase58()), role: kit.AccountRole.WRITABLE },
              ],
              data: new Uint8Array(data),
            },
            m,
          ),
      );
      const tx = await kit.signTransactionMessageWithSigners(message);
      kit.assertIsTransactionWithBlockhashLifetime(tx);
      await kit.sendAndConfirmTransactionFactory({ rpc, rpcSubscriptions })(tx, { commitment: 'confirmed' });
      assert.equal(await balance(recipient), AMOUNT);
    });

    it('jito-js-rpc: a bundle tipping the 1,000-lamport minimum to an account from getTipAccounts lands on a fresh ledger', async () => {
      const jito = new JitoJsonRpcClient(`${running.server.url}/api/v1`, key);
      const tips = (await jito.getTipAccounts()) as { result: string[] };
      const tipAccount = new PublicKey(tips.result[0]!);
      const tipBefore = await balance(tipAccount);
      const payer = await funded();
      const recipient = Keypair.generate().publicKey;
      const { blockhash } = await connection.getLatestBlockhash();
      const tx = new Transaction({ feePayer: payer.publicKey, recentBlockhash: blockhash }).add(
        transfer(payer, recipient),
        transfer(payer, tipAccount, JITO_MINIMUM_TIP),
      );
      tx.sign(payer);
      const sent = (await jito.sendBundle([[tx.serialize().toString('base64')], { encoding: 'base64' }])) as {
        result?: string;
        error?: unknown;
      };
      assert.equal(typeof sent.result, 'string', JSON.stringify(sent.error));
      const status = await until(
        async () =>
          ((await jito.getInFlightBundleStatuses([[sent.result!]])) as { result: { value: { status: string }[] } }).result.value[0]?.status,
        (s) => s === 'Landed' || s === 'Failed' || s === 'Invalid',
        10_000,
      );
      assert.equal(status, 'Landed');
      assert.equal(await balance(recipient), AMOUNT);
      assert.equal(await balance(tipAccount), tipBefore + JITO_MINIMUM_TIP);
    });

    it(
      'jito-js-rpc: a bundle tipping less than the minimum is refused (-32093, naming the tip and the minimum) and ends tip_below_minimum',
      {
        skip: !shape.engine && 'the embedded ledger takes bundles without a tip',
      },
      async () => {
        const jito = new JitoJsonRpcClient(`${running.server.url}/api/v1`, key);
        const tipAccount = new PublicKey(((await jito.getTipAccounts()) as { result: string[] }).result[0]!);
        const payer = await funded();
        const { blockhash } = await connection.getLatestBlockhash();
        const tx = new Transaction({ feePayer: payer.publicKey, recentBlockhash: blockhash }).add(
          transfer(payer, Keypair.generate().publicKey),
          transfer(payer, tipAccount, JITO_MINIMUM_TIP - 1),
        );
        tx.sign(payer);
        const sent = (await jito.sendBundle([[tx.serialize().toString('base64')], { encoding: 'base64' }])) as {
          error?: { code: number; message: string };
        };
        assert.equal(sent.error?.code, -32093, JSON.stringify(sent));
        assert.match(sent.error.message, /tips 999 lamports to the block engine's tip accounts; at least 1000 are needed/);
        const signature = bs58.encode(tx.signatures[0]!.signature!);
        const client = createSlipwayClient({ url: running.server.url, apiKey: key });
        const [status] = await client.getStatuses([signature]);
        assert.deepEqual([status?.kind, status?.reasonCode], ['refused', 'tip_below_minimum']);
        const metrics = await (await fetch(`${running.server.url}/metrics`)).text();
        assert.match(metrics, /^slipway_outcome_reasons_total\{reason="tip_below_minimum"\} 1$/m);
      },
    );
  });
}
