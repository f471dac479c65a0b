/**
 * `npm run fuzz [-- --count N] [-- --seed S]`: the full fuzz run (100,000 hostile requests
 * by default) against a real gateway on the embedded ledger, then a report: requests sent,
 * answers by class, failures (with the seed and index that replay each), RSS before/after.
 * Exits 1 on any failure.
 */
import { parseArgs } from 'node:util';
import { Keypair } from '@solana/web3.js';
import { startTestGateway } from '../helpers/gateway';
import { connect, fundedKeypair, transferTx } from '../helpers/solana';
import { fuzzGateway } from './fuzz-gateway';

async function main(): Promise<number> {
  const { values } = parseArgs({ options: { count: { type: 'string', default: '100000' }, seed: { type: 'string' }, concurrency: { type: 'string', default: '8' } } });
  const count = Number(values.count);
  const seed = values.seed === undefined ? Math.floor(Math.random() * 2 ** 31) : Number(values.seed);
  const gw = await startTestGateway({ slotMs: 400 });
  try {
    const connection = connect(gw.url, gw.key);
    const alice = await fundedKeypair(connection, 1_000);
    const validTransactions = await Promise.all(Array.from({ length: 20 }, (_, i) => transferTx(connection, alice, Keypair.generate().publicKey, 1_000_000 + i)));
    process.stdout.write(`fuzz: seed ${seed}, ${count} requests (replay with: npm run fuzz -- --seed ${seed} --count ${count})\n`);
    const started = Date.now();
    const report = await fuzzGateway({
      url: gw.url,
      key: gw.key,
      seed,
      count,
      concurrency: Number(values.concurrency),
      validTransactions,
      onProgress: (sent) => sent % 10_000 === 0 && process.stdout.write(`  ${sent} sent\n`),
    });
    const seconds = (Date.now() - started) / 1000;
    process.stdout.write(`\nsent ${report.sent} in ${seconds.toFixed(1)} s; RSS ${report.rssBeforeMiB.toFixed(0)} → ${report.rssAfterMiB.toFixed(0)} MiB\n`);
    process.stdout.write(`answers by class (${report.classes.size}):\n`);
    for (const [name, n] of [...report.classes].sort((a, b) => b[1] - a[1])) process.stdout.write(`  ${String(n).padStart(7)}  ${name}\n`);
    process.stdout.write(`failures: ${report.failures.length}\n`);
    for (const f of report.failures.slice(0, 20)) process.stdout.write(`  #${f.index} ${f.kind} ${f.path}: ${f.problem}\n`);
    return report.failures.length === 0 ? 0 : 1;
  } finally {
    await gw.close();
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`fuzz: ${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(1);
  },
);
