'use strict';
/**
 * Removes what tsc left in dist/ for sources that no longer exist (tsc writes outputs, it
 * never deletes them): after a source moves, its old output would still be found first —
 * `require('../stores/journal')` loads a stale dist/src/stores/journal.js before the folder's
 * journal/index.js — so a tree updated in place would run old code. scripts/ensure-ready.sh
 * runs it after each compile. `node scripts/prune-dist.js [ROOT]`.
 */
const fs = require('node:fs');
const path = require('node:path');

const OUTPUT = /\.(?:js|js\.map|d\.ts)$/;

/** dist/ files (relative to root) whose source (root/<same path>.ts) is gone. */
function staleOutputs(root) {
  const dist = path.join(root, 'dist');
  if (!fs.existsSync(dist)) return [];
  return fs
    .readdirSync(dist, { recursive: true })
    .filter((file) => OUTPUT.test(file) && !fs.existsSync(path.join(root, file.replace(OUTPUT, '.ts'))))
    .map((file) => path.join('dist', file));
}

/** Removes the stale outputs, then the folders they leave empty; answers what it removed. */
function pruneDist(root) {
  const stale = staleOutputs(root);
  for (const file of stale) fs.rmSync(path.join(root, file));
  const folders = [...new Set(stale.map((file) => path.dirname(file)))].sort((a, b) => b.length - a.length);
  for (const folder of folders) {
    const full = path.join(root, folder);
    if (fs.existsSync(full) && fs.readdirSync(full).length === 0) fs.rmdirSync(full);
  }
  return stale;
}

module.exports = { staleOutputs, pruneDist };

if (require.main === module) {
  const removed = pruneDist(path.resolve(process.argv[2] ?? path.join(__dirname, '..')));
  if (removed.length > 0) process.stderr.write(`slipway: removed ${removed.length} compiled files whose sources are gone\n`);
}
