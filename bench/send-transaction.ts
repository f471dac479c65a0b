/**
 * What one sendTransaction costs, part by part, and end to end through HTTP on the
 * embedded ledger. Every transaction is distinct and validly signed (prepared before the
 * clock starts), so duplicate detection hides nothing. Figures vary with the machine:
 * compare parts with each other, not with another run. `npm run bench`.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { Keypair, LAMPORTS_PER_SOL, SystemProgram, Transaction } from '@solana/web3.js';
import { startApp } from '../src/app';
import { resolveConfig } from '../src/config';
import { LocalLedger } from '../src/ledger/local-ledger';
import { createSqliteJournal } from '../src/stores/journal-sqlite';
import { decodeStrictBase64 } from '../src/validation/strict-base64';
import { validateTransaction, type ValidatedTransaction } from '../src/validation/validate-transaction';
import { verifyTransactionSignatures } from '../src/validation/verify-signatures';
import { isWireDefect, parseWireTransaction } from '../src/validation/wire-transaction';

const COUNT = Number(process.env.BENCH_COUNT ?? 2000);

function microsPer(count: number, run: (i: number) => void): number {
  const started = performance.now();
  for (let i = 0; i < count; i++) run(i);
  return ((performance.now() - started) * 1000) / count;
}

function makeTransactions(blockhash: string, payer: Keypair, count: number): string[] {
  const recipient = Keypair.generate().publicKey;
  return Array.from({ length: count }, (_, i) => {
    const tx = new Transaction({ feePayer: payer.publicKey, recentBlockhash: blockhash }).add(
      SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: recipient, lamports: 1_000_000 + i }),
    );
    tx.sign(payer);
    return tx.serialize().toString('base64');
  });
}

async function main(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'slipway-bench-'));
  try {
    const payer = Keypair.generate();
    const ledger = LocalLedger.open({ slotMs: 400 });
    ledger.airdrop(payer.publicKey.toBytes(), BigInt(1000 * LAMPORTS_PER_SOL));
    const encoded = makeTransactions(ledger.latestBlockhash().blockhash, payer, COUNT);
    const bodies = encoded.map((tx, i) => JSON.stringify({ jsonrpc: '2.0', id: i, method: 'sendTransaction', params: [tx, { encoding: 'base64' }] }));
    const bytes = encoded.map((tx) => Buffer.from(tx, 'base64'));
    const validated = encoded.map((tx) => {
      const result = validateTransaction(tx, '');
      if (!result.ok) throw new Error(result.error.message);
      return result.value;
    });
    const journal = createSqliteJournal(path.join(dir, 'journal.sqlite'));

    const parts: [string, number][] = [
      ['JSON parse of the request body', microsPer(COUNT, (i) => JSON.parse(bodies[i]!))],
      ['Base64 decode (strict)', microsPer(COUNT, (i) => decodeStrictBase64(encoded[i]!))],
      ['wire parse + sanitize', microsPer(COUNT, (i) => parseWireTransaction(bytes[i]!))],
      [
        'signature verification (ed25519)',
        microsPer(COUNT, (i) => {
          const wire = parseWireTransaction(bytes[i]!);
          if (!isWireDefect(wire)) verifyTransactionSignatures(wire);
        }),
      ],
      ['validateTransaction (all edge checks)', microsPer(COUNT, (i) => validateTransaction(encoded[i]!, ''))],
    ];
    let started = performance.now();
    for (let i = 0; i < COUNT; i++) {
      await journal.record({ kind: 'transaction', keyId: 'bench', antiMev: false, bundleId: null, routes: ['embedded'], transactions: [{ signature: validated[i]!.signature, wire: validated[i]!.wire.bytes }] });
    }
    parts.push(['journal write (SQLite, WAL)', ((performance.now() - started) * 1000) / COUNT]);
    parts.push(['preflight simulation (LiteSVM)', microsPer(Math.min(COUNT, 500), (i) => ledger.simulate(validated[i] as ValidatedTransaction))]);
    parts.push(['execution (LiteSVM)', microsPer(COUNT, (i) => ledger.execute(validated[i] as ValidatedTransaction))]);
    await journal.close();

    // End to end: sequential requests over one keep-alive connection, fresh transactions.
    const app = await startApp(resolveConfig({ port: 0, dataDir: path.join(dir, 'app'), logLevel: 'silent' }, {}));
    const funded = Keypair.generate();
    const appLedger = app.ledger!;
    appLedger.airdrop(funded.publicKey.toBytes(), BigInt(1000 * LAMPORTS_PER_SOL));
    const e2e = makeTransactions(appLedger.latestBlockhash().blockhash, funded, Math.min(COUNT, 1000));
    const latencies: number[] = [];
    for (const [i, tx] of e2e.entries()) {
      const body = JSON.stringify({ jsonrpc: '2.0', id: i, method: 'sendTransaction', params: [tx, { encoding: 'base64', skipPreflight: i % 2 === 0 }] });
      started = performance.now();
      const response = await fetch(app.url, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': app.initialKey!.key }, body });
      const answer = (await response.json()) as { result?: string; error?: unknown };
      latencies.push((performance.now() - started) * 1000);
      if (answer.result === undefined) throw new Error(`request ${i} failed: ${JSON.stringify(answer.error)}`);
    }
    await app.close();
    latencies.sort((a, b) => a - b);
    const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))]!;

    process.stdout.write(`sendTransaction cost per transaction (${COUNT} distinct signed transfers, ${os.cpus().length} cores)\n\n`);
    for (const [name, micros] of parts) process.stdout.write(`  ${name.padEnd(40)} ${micros.toFixed(1).padStart(9)} µs\n`);
    process.stdout.write(
      `\n  end to end over HTTP (sequential, embedded ledger, half with preflight)\n` +
        `    p50 ${pct(50).toFixed(0)} µs   p90 ${pct(90).toFixed(0)} µs   p99 ${pct(99).toFixed(0)} µs   (${latencies.length} requests)\n`,
    );
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

void main();
