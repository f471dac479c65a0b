/**
 * `slipway demo`: the whole job, end to end, on a fresh embedded ledger in a temporary
 * directory: a single transaction, a batch with one member failing on chain, a bundle
 * that lands and one that is rejected with no effect. Real keys, real signatures, real
 * execution, through the gateway's HTTP API; balances prove each outcome.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Connection, Keypair, LAMPORTS_PER_SOL, PublicKey, SystemProgram, Transaction } from '@solana/web3.js';
import { startApp } from '../app';
import { resolveConfig } from '../config/config';

const SOL = LAMPORTS_PER_SOL;

export async function runDemo(_args: string[]): Promise<number> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'slipway-demo-'));
  const app = await startApp(resolveConfig({ port: 0, dataDir, slotMs: 100, logLevel: 'warn' }, {}));
  const key = app.initialKey!.key;
  const say = (line = '') => process.stdout.write(line + '\n');
  let failures = 0;
  const check = (what: string, ok: boolean) => {
    say(`   ${ok ? 'ok  ' : 'FAIL'} ${what}`);
    if (!ok) failures++;
  };
  try {
    const connection = new Connection(app.url, { commitment: 'confirmed', httpHeaders: { 'x-api-key': key } });
    const call = async (route: string, body: unknown) => {
      const response = await fetch(app.url + route, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': key },
        body: JSON.stringify(body),
      });
      // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the demo prints what it reads, field by field
      return (await response.json()) as any;
    };
    const transfer = async (from: Keypair, to: PublicKey, lamports: number) => {
      const tx = new Transaction({ feePayer: from.publicKey, recentBlockhash: (await connection.getLatestBlockhash()).blockhash }).add(
        SystemProgram.transfer({ fromPubkey: from.publicKey, toPubkey: to, lamports }),
      );
      tx.sign(from);
      return tx.serialize().toString('base64');
    };
    const settle = async (signatures: string[]) => {
      for (let i = 0; i < 100; i++) {
        const { value } = await connection.getSignatureStatuses(signatures);
        if (value.every((s) => s?.confirmationStatus === 'confirmed' || s?.confirmationStatus === 'finalized')) return value;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      return (await connection.getSignatureStatuses(signatures)).value;
    };
    const balance = (who: Keypair) => connection.getBalance(who.publicKey, 'processed');
    const sol = (lamports: number) => `${(lamports / SOL).toFixed(6)} SOL`;

    say(`Slipway demo: gateway on ${app.url}, embedded ledger in ${dataDir}`);
    const [alice, bob, carol, dave, erin, frank, gina] = Array.from({ length: 7 }, () => Keypair.generate()) as Keypair[] & { length: 7 };
    say('\n1. Fund alice (10 SOL) and bob (1 SOL) with airdrops');
    await settle([await connection.requestAirdrop(alice!.publicKey, 10 * SOL), await connection.requestAirdrop(bob!.publicKey, SOL)]);
    check(
      `alice has ${sol(await balance(alice!))}, bob has ${sol(await balance(bob!))}`,
      (await balance(alice!)) === 10 * SOL && (await balance(bob!)) === SOL,
    );

    say('\n2. sendTransaction: alice sends 1 SOL to carol');
    const single = await call('/', {
      jsonrpc: '2.0',
      id: 1,
      method: 'sendTransaction',
      params: [await transfer(alice!, carol!.publicKey, SOL), { encoding: 'base64' }],
    });
    say(`   signature ${single.result}`);
    await settle([single.result]);
    check(`carol has ${sol(await balance(carol!))}`, (await balance(carol!)) === SOL);

    say('\n3. /submit-batch: alice→dave 0.5 SOL, bob→erin 5 SOL (more than bob has), alice→erin 0.25 SOL');
    const batch = await call('/submit-batch', {
      jsonrpc: '2.0',
      id: 1,
      params: {
        transactions: [
          await transfer(alice!, dave!.publicKey, SOL / 2),
          await transfer(bob!, erin!.publicKey, 5 * SOL),
          await transfer(alice!, erin!.publicKey, SOL / 4),
        ],
        options: [],
      },
    });
    say(`   answer: code ${batch.code}, ${batch.message}, ${batch.signatures.length} signatures`);
    const statuses = await settle(batch.signatures);
    statuses.forEach((s, i) => say(`   member ${i + 1}: ${s?.err === null ? 'landed' : `failed on chain: ${JSON.stringify(s?.err)}`}`));
    check(
      `dave has ${sol(await balance(dave!))}, erin has ${sol(await balance(erin!))}: the others landed`,
      (await balance(dave!)) === SOL / 2 && (await balance(erin!)) === SOL / 4,
    );
    check(`bob has ${sol(await balance(bob!))}: the failed member cost only its fee`, (await balance(bob!)) === SOL - 5000);

    say('\n4. sendBundle that lands: alice→frank 2 SOL, then frank→alice 1 SOL (works only in order)');
    const bundle = await call('/', {
      jsonrpc: '2.0',
      id: 1,
      method: 'sendBundle',
      params: [[await transfer(alice!, frank!.publicKey, 2 * SOL), await transfer(frank!, alice!.publicKey, SOL)], { encoding: 'base64' }],
    });
    say(`   bundle ID ${bundle.result}`);
    check(`frank has ${sol(await balance(frank!))}`, (await balance(frank!)) === SOL - 5000);

    say('\n5. sendBundle that is refused on its simulation: alice→gina 1 SOL, then bob→gina 5 SOL (fails)');
    const aliceBefore = await balance(alice!);
    const bobBefore = await balance(bob!);
    const rejected = await call('/', {
      jsonrpc: '2.0',
      id: 1,
      method: 'sendBundle',
      params: [[await transfer(alice!, gina!.publicKey, SOL), await transfer(bob!, gina!.publicKey, 5 * SOL)], { encoding: 'base64' }],
    });
    say(`   error ${rejected.error?.code}: ${rejected.error?.message}`);
    check(
      `gina has ${sol(await balance(gina!))}, alice and bob unchanged (not even fees): no effect remains`,
      (await balance(gina!)) === 0 && (await balance(alice!)) === aliceBefore && (await balance(bob!)) === bobBefore,
    );

    say(failures === 0 ? '\nEvery outcome holds.' : `\n${failures} check(s) failed.`);
    return failures === 0 ? 0 : 1;
  } finally {
    await app.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}
