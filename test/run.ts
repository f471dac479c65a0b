/**
 * `npm test`: runs every test file by name, with the Node.js that runs this script.
 *
 * The test files are `test/**\/*.test.ts` (compiled to dist/test); nothing else under test/
 * is run, so helpers are never counted as tests. Named files rather than a folder or a glob:
 * `node --test dist/test/` reads a folder as a module on Node 22 and 24, and Node 20 reads
 * no globs. test/suite/test-files.test.ts fails when a file defines tests that this would not run.
 *
 * Children (bin/slipway, other node processes) get this Node first on PATH, so the whole
 * suite runs on one runtime: `PATH=/opt/node24/bin:$PATH npm test`, or
 * `/opt/node24/bin/node dist/test/run.js`. Arguments: `--flags` go to `node --test`; any
 * other word keeps only the test files whose path contains it.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '../..');
/** Longer than any test takes on a slow day (the longest, the cluster's kill -9 spray, about a minute). */
const TEST_TIMEOUT_MS = 600_000;

/** The test sources (test/**\/*.test.ts), relative to the project root, sorted. */
export function testSources(root = ROOT): string[] {
  return (fs.readdirSync(path.join(root, 'test'), { recursive: true }) as string[])
    .filter((file) => file.endsWith('.test.ts'))
    .map((file) => path.join('test', file))
    .sort();
}

/** Where `node --test` finds a test source once compiled. */
export function compiledTest(source: string, root = ROOT): string {
  return path.join(root, 'dist', source.replace(/\.ts$/, '.js'));
}

if (require.main === module) {
  const args = process.argv.slice(2);
  const flags = args.filter((arg) => arg.startsWith('--'));
  const words = args.filter((arg) => !arg.startsWith('--'));
  const files = testSources()
    .filter((source) => words.length === 0 || words.some((word) => source.includes(word)))
    .map((source) => compiledTest(source));
  if (files.length === 0) {
    process.stderr.write(`no test file matches ${words.join(' ')}\n`);
    process.exit(1);
  }
  const env = { ...process.env, PATH: `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH ?? ''}` };
  // A test that hangs fails after TEST_TIMEOUT_MS instead of holding the whole run until CI gives up.
  const child = spawn(process.execPath, ['--test', '--test-concurrency=2', `--test-timeout=${TEST_TIMEOUT_MS}`, ...flags, ...files], {
    stdio: 'inherit',
    env,
  });
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => child.kill(signal));
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
}
