/**
 * `npm test` runs every file that defines tests, and counts nothing else: a file that
 * defines tests is named *.test.ts (or the runner would skip it), a *.test.ts file defines
 * tests (or loads a file that does), and the runner's list is exactly those files, compiled.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { compiledTest, testSources } from '../run';

const ROOT = path.resolve(__dirname, '../../..');
const TEST_FUNCTIONS = /import\s*{([^}]*)}\s*from\s*'node:test'/;
const LOADS_A_TEST_FILE = /require\('[^']+\.test'\)/;

function definesTests(source: string): boolean {
  const imported =
    TEST_FUNCTIONS.exec(source)?.[1]
      ?.split(',')
      .map((name) => name.trim().split(/\s+as\s+/)[0]) ?? [];
  return imported.some((name) => ['test', 'it', 'describe', 'suite'].includes(name!)) || LOADS_A_TEST_FILE.test(source);
}

const allSources = (fs.readdirSync(path.join(ROOT, 'test'), { recursive: true }) as string[])
  .filter((file) => file.endsWith('.ts'))
  .map((file) => path.join('test', file));

test('every file under test/ that defines tests is one the runner runs', () => {
  const run = new Set(testSources(ROOT));
  const skipped = allSources.filter((file) => !run.has(file) && definesTests(fs.readFileSync(path.join(ROOT, file), 'utf8')));
  assert.deepEqual(skipped, [], 'these define tests but are not named *.test.ts, so npm test would not run them');
});

test('every file the runner runs defines tests, and is compiled', () => {
  const sources = testSources(ROOT);
  assert.ok(sources.length > 50, `found only ${sources.length} test files`);
  const empty = sources.filter((file) => !definesTests(fs.readFileSync(path.join(ROOT, file), 'utf8')));
  assert.deepEqual(empty, [], 'these are named *.test.ts but define no tests (helpers belong in test/helpers)');
  const missing = sources.filter((file) => !fs.existsSync(compiledTest(file, ROOT)));
  assert.deepEqual(missing, []);
});
