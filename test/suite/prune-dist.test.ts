/**
 * scripts/prune-dist.js: what tsc left in dist/ for sources that moved or went away is
 * removed after a compile, so that a tree updated in place never loads an old output
 * instead of a folder's index.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { pruneDist } = require('../../../scripts/prune-dist.js') as { pruneDist: (root: string) => string[] };

function tree(files: Record<string, string>): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'slipway-prune-'));
  for (const [file, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
    fs.writeFileSync(path.join(root, file), text);
  }
  return root;
}

describe('pruning dist/ after a compile', () => {
  it('removes the outputs of a source that moved into a folder, so require finds the folder index, and keeps the rest', () => {
    const root = tree({
      'src/stores/journal/index.ts': '',
      'src/app.ts': '',
      'dist/src/stores/journal.js': 'module.exports = "stale";',
      'dist/src/stores/journal.js.map': '{}',
      'dist/src/stores/journal.d.ts': '',
      'dist/src/stores/journal/index.js': 'module.exports = "current";',
      'dist/src/app.js': '',
      'dist/src/app.d.ts': '',
      'dist/src/gone/only.js': '',
    });
    try {
      const removed = pruneDist(root).sort();
      assert.deepEqual(removed, [
        path.join('dist/src/gone/only.js'),
        path.join('dist/src/stores/journal.d.ts'),
        path.join('dist/src/stores/journal.js'),
        path.join('dist/src/stores/journal.js.map'),
      ]);
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      assert.equal(require(path.join(root, 'dist/src/stores/journal')), 'current');
      assert.ok(fs.existsSync(path.join(root, 'dist/src/app.js')));
      assert.ok(fs.existsSync(path.join(root, 'dist/src/app.d.ts')));
      assert.equal(fs.existsSync(path.join(root, 'dist/src/gone')), false, 'a folder left empty goes too');
      assert.deepEqual(pruneDist(root), [], 'nothing more the second time');
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });
});
