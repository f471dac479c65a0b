/**
 * `npm run fuzz [-- --count N] [-- --seed S]`: the full fuzz run (100,000 hostile requests
 * by default) against a real gateway (`bin/slipway serve`, a process of its own, on the
 * embedded ledger), then a report: requests sent, answers by class, failures (with the seed
 * that replays each), and the gateway's RSS before and after. Exits 1 on any failure.
 */
import { parseArgs } from 'node:util';
import { Keypair } from '@solana/web3.js';
import fs from 'node:fs';
import { makeDataDir } from '../test/helpers/gateway';
import { startServer } from '../test/helpers/process';
import { connect, fundedKeypair, transferTx } from '../test/helpers/solana';
import { fuzzGateway } from '../test/fuzz/fuzz-gateway';

async function main(): Promise<number> {
  const { values } = parseArgs({ options: { count: { type: 'string', default: '100000' }, seed: { type: 'string' }, concurrency: { type: 'string', default: '8' } } });
  const count = Number(values.count);
  const seed = values.seed === undefined ? Math.floor(Math.random() * 2 ** 31) : Number(values.seed);
  const dir = makeDataDir();
  const server = await startServer(dir, { SLIPWAY_LOG_LEVEL: 'error' });
  const rss = () => Number(/VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${server.child.pid}/status`, 'utf8'))![1]) * 1024;
  try {
    const key = server.initialKey!;
    const connection = connect(server.url, key);
    const alice = await fundedKeypair(connection, 1_000);
    const validTransactions = await Promise.all(Array.from({ length: 20 }, (_, i) => transferTx(connection, alice, Keypair.generate().publicKey, 1_000_000 + i)));
    process.stdout.write(`fuzz: seed ${seed}, ${count} requests (replay with: npm run fuzz -- --seed ${seed} --count ${count})\n`);
    const started = Date.now();
    const report = await fuzzGateway({
      url: server.url,
      key,
      seed,
      count,
      concurrency: Number(values.concurrency),
      validTransactions,
      rss,
      onProgress: (sent) => sent % 10_000 === 0 && process.stdout.write(`  ${sent} sent (gateway RSS ${(rss() / 2 ** 20).toFixed(0)} MiB)\n`),
    });
    const seconds = (Date.now() - started) / 1000;
    process.stdout.write(`\nsent ${report.sent} in ${seconds.toFixed(1)} s; gateway RSS ${report.rssBeforeMiB!.toFixed(0)} → ${report.rssAfterMiB!.toFixed(0)} MiB; the gateway is ${server.child.exitCode === null ? 'still running' : `gone (exit ${server.child.exitCode})`}\n`);
    process.stdout.write(`answers by class (${report.classes.size}):\n`);
    for (const [name, n] of [...report.classes].sort((a, b) => b[1] - a[1])) process.stdout.write(`  ${String(n).padStart(7)}  ${name}\n`);
    process.stdout.write(`failures: ${report.failures.length}\n`);
    for (const f of report.failures.slice(0, 20)) process.stdout.write(`  #${f.index} ${f.kind} ${f.path}: ${f.problem}\n`);
    return report.failures.length === 0 && server.child.exitCode === null ? 0 : 1;
  } finally {
    server.child.kill('SIGTERM');
    await server.exited;
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`fuzz: ${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(1);
  },
);
