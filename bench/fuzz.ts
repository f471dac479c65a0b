/**
 * `npm run fuzz [-- --count N] [-- --seed S] [-- --door NAME]`: the full fuzz run (100,000
 * hostile requests and WebSocket actions by default, shared out over every door of the
 * gateway: POST bodies, read methods, batches, every method on every path, raw request
 * lines and headers on both ports, upgrades, WebSocket frames) against a real gateway
 * (`bin/slipway serve`, a process of its own, on the embedded ledger). Then a report per
 * door: what was sent, answers by class, process exits, 5xx, internal errors, failures
 * (with the seed that replays each), and the gateway's RSS before and after. Exits 1 on any
 * failure.
 */
import { parseArgs } from 'node:util';
import { distinctFailures } from '../test/fuzz/answer-checks';
import { DOORS, countsFor, fuzzGateway, type DoorName } from '../test/fuzz/fuzz-gateway';
import { startFuzzTarget } from '../test/fuzz/fuzz-target';

const mib = (value: number | null) => (value === null ? '?' : value.toFixed(0));

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      count: { type: 'string', default: '100000' },
      seed: { type: 'string' },
      concurrency: { type: 'string', default: '8' },
      door: { type: 'string', multiple: true },
    },
  });
  const total = Number(values.count);
  const seed = values.seed === undefined ? Math.floor(Math.random() * 2 ** 31) : Number(values.seed);
  const unknown = (values.door ?? []).filter((name) => !(name in DOORS));
  if (unknown.length > 0) throw new Error(`no door named ${unknown.join(', ')}; the doors: ${Object.keys(DOORS).join(', ')}`);
  const counts = countsFor(total);
  if (values.door !== undefined) for (const name of Object.keys(counts) as DoorName[]) if (!values.door.includes(name)) counts[name] = 0;
  const target = await startFuzzTarget();
  try {
    const doors = (Object.keys(counts) as DoorName[]).filter((name) => counts[name] > 0);
    process.stdout.write(
      `fuzz: seed ${seed}, ${total} requests and frames over ${doors.length} doors (replay with: npm run fuzz -- --seed ${seed} --count ${total})\n`,
    );
    for (const name of doors) process.stdout.write(`  ${String(counts[name]).padStart(7)}  ${name}\n`);
    const started = Date.now();
    const report = await fuzzGateway({
      target,
      seed,
      counts,
      concurrency: Number(values.concurrency),
      onProgress: (door, sent) =>
        sent % 5_000 === 0 && process.stdout.write(`  ${door}: ${sent} sent (gateway RSS ${mib(target.rssMiB())} MiB)\n`),
    });
    const seconds = (Date.now() - started) / 1000;
    let failures = 0;
    for (const [i, door] of report.doors.entries()) {
      failures += door.failures.length;
      process.stdout.write(
        `\ndoor ${i + 1}/${report.doors.length}, ${door.door}: sent ${door.sent}${door.frames > 0 ? ` (${door.frames} frames)` : ''} in ${door.seconds.toFixed(1)} s; gateway RSS ${mib(door.rssBeforeMiB)} → ${mib(door.rssAfterMiB)} MiB\n`,
      );
      process.stdout.write(
        `  process exits ${door.exits}, 5xx ${door.fiveXx}, internal errors ${door.internalErrors}, failures ${door.failures.length}\n`,
      );
      process.stdout.write(`  answers by class (${door.classes.size}):\n`);
      for (const [name, n] of [...door.classes].sort((a, b) => b[1] - a[1]))
        process.stdout.write(`    ${String(n).padStart(7)}  ${name}\n`);
      // Failures alike are shown once, with how many there were.
      const alike = distinctFailures(door.failures);
      for (const { first: f, count } of alike.slice(0, 12)) {
        process.stdout.write(
          `  FAILURE${count > 1 ? ` ×${count}, first` : ''} #${f.index} ${f.kind}: ${f.problem.slice(0, 500)}\n${f.sample === undefined ? '' : `      sent: ${f.sample.slice(0, 400)}\n`}`,
        );
      }
      if (alike.length > 12) process.stdout.write(`  … and ${alike.length - 12} more kinds of failure\n`);
    }
    const slowest = Math.max(0, ...report.health.map((c) => c.ms));
    const sent = report.doors.reduce((sum, d) => sum + d.sent, 0);
    process.stdout.write(
      `\nsummary: seed ${seed}, sent ${sent} in ${seconds.toFixed(1)} s; the gateway is ${target.alive() ? 'still running' : 'gone'}\n`,
    );
    process.stdout.write(
      `  ${'door'.padEnd(22)} ${'sent'.padStart(7)} ${'exits'.padStart(6)} ${'5xx'.padStart(5)} ${'internal'.padStart(9)} ${'failures'.padStart(9)}  RSS MiB\n`,
    );
    for (const d of report.doors) {
      process.stdout.write(
        `  ${d.door.padEnd(22)} ${String(d.sent).padStart(7)} ${String(d.exits).padStart(6)} ${String(d.fiveXx).padStart(5)} ${String(d.internalErrors).padStart(9)} ${String(d.failures.length).padStart(9)}  ${mib(d.rssBeforeMiB)} → ${mib(d.rssAfterMiB)}\n`,
      );
    }
    process.stdout.write(
      `  /health asked ${report.health.length} times, slowest ${slowest} ms, failed ${report.health.filter((c) => c.problem !== undefined).length}\n`,
    );
    process.stdout.write(`  gateway log lines at level error: ${report.errorLines.length}\n`);
    for (const line of report.errorLines.slice(0, 5)) process.stdout.write(`    ${line.slice(0, 400)}\n`);
    process.stdout.write(`failures: ${failures}\n`);
    return failures === 0 && target.exits === 0 && target.alive() ? 0 : 1;
  } finally {
    await target.close();
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`fuzz: ${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(1);
  },
);
