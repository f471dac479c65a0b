/**
 * `npm run fuzz:quic [-- --seed S] [-- --seconds N] [-- --case C]`: the QUIC fuzz without
 * sockets (test/quic/fuzz/quic-fuzz.ts): mutated datagrams at both endpoints, random frames
 * at client and server connections, altered TLS handshake messages at both handshakes, for
 * N seconds (60 by default, 300 at most). The seed is printed first; the same seed runs the
 * same cases in the same order, and `--case C` runs only case C of it. Exits 1 with the
 * seed, the case and the failing input when an exception escapes a state machine or an
 * invariant breaks.
 */
import { parseArgs } from 'node:util';
import { runQuicFuzz } from '../test/quic/fuzz/quic-fuzz';

const MAX_SECONDS = 300;

function main(): number {
  const { values } = parseArgs({
    options: {
      seed: { type: 'string' },
      seconds: { type: 'string', default: '60' },
      case: { type: 'string' },
    },
  });
  const seed = values.seed === undefined ? Math.floor(Math.random() * 2 ** 31) : Number(values.seed);
  const seconds = Number(values.seconds);
  const only = values.case === undefined ? undefined : Number(values.case);
  if (!Number.isInteger(seed) || seed < 0) throw new Error(`--seed must be a whole number of 0 or more, not ${values.seed}`);
  if (!(seconds > 0 && seconds <= MAX_SECONDS))
    throw new Error(`--seconds must be more than 0 and at most ${MAX_SECONDS}, not ${values.seconds}`);
  if (only !== undefined && !(Number.isInteger(only) && only >= 0))
    throw new Error(`--case must be a whole number of 0 or more, not ${values.case}`);
  process.stdout.write(
    `fuzz:quic: seed ${seed}, ${only === undefined ? `${seconds} s` : `case ${only} only`} (replay with: npm run fuzz:quic -- --seed ${seed} ${only === undefined ? `--seconds ${seconds}` : `--case ${only}`})\n`,
  );
  const started = performance.now();
  const report = runQuicFuzz({
    seed,
    seconds,
    only,
    onProgress: (cases) =>
      cases % 1_000 === 0 && process.stdout.write(`  ${cases} cases in ${((performance.now() - started) / 1000).toFixed(0)} s\n`),
  });
  const thrown = Object.entries(report.inputs)
    .map(([target, count]) => `${count} ${target}`)
    .join(', ');
  process.stdout.write(
    `fuzz:quic: seed ${seed}: ${report.cases} cases, inputs thrown: ${thrown}, in ${((performance.now() - started) / 1000).toFixed(1)} s\n`,
  );
  if (report.failure === undefined) {
    process.stdout.write('fuzz:quic: no failure\n');
    return 0;
  }
  const { caseNumber, target, problem, input } = report.failure;
  process.stdout.write(
    `fuzz:quic: FAILURE at seed ${seed}, case ${caseNumber} (${target}): ${problem}\n` +
      `  input (${input.length / 2} bytes, hex): ${input === '' ? '(none: not one input)' : input}\n` +
      `  replay: npm run fuzz:quic -- --seed ${seed} --case ${caseNumber}\n`,
  );
  return 1;
}

try {
  process.exitCode = main();
} catch (error) {
  process.stderr.write(`fuzz:quic: ${(error as Error).message}\n`);
  process.exitCode = 2;
}
