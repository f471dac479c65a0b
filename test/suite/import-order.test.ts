/**
 * Imports run one way: a folder of src/ imports only from the folders listed before it in
 * docs/ARCHITECTURE.md's layers. Read from the documentation, so that the rule and its
 * description cannot drift apart; every folder must be listed.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';

const ROOT = path.resolve(__dirname, '../../..');
const SRC = path.join(ROOT, 'src');

/** The layers, lowest first, as docs/ARCHITECTURE.md lists them. */
function documentedLayers(): string[] {
  const doc = fs.readFileSync(path.join(ROOT, 'docs', 'ARCHITECTURE.md'), 'utf8');
  const section = doc.slice(doc.indexOf('<!-- layers:'), doc.indexOf('<!-- end of layers -->'));
  return [...section.matchAll(/^\d+\. `([^`]+)`/gm)].map((match) => match[1]!);
}

/** Every relative import in src/, as [file, its folder, the imported file's folder]. */
function imports(): { file: string; from: string; to: string; spec: string }[] {
  const found: { file: string; from: string; to: string; spec: string }[] = [];
  const folderOf = (file: string) => {
    const relative = path.relative(SRC, file);
    return relative.includes(path.sep) ? relative.split(path.sep)[0]! : '(root)';
  };
  for (const entry of fs.readdirSync(SRC, { recursive: true }) as string[]) {
    if (!entry.endsWith('.ts')) continue;
    const file = path.join(SRC, entry);
    const text = fs.readFileSync(file, 'utf8');
    for (const match of text.matchAll(/(?:^(?:import|export)[^'"]*?from\s+|import\(\s*|require\(\s*)'(\.{1,2}\/[^']+)'/gm)) {
      const target = path.resolve(path.dirname(file), match[1]!);
      found.push({ file: path.relative(ROOT, file), from: folderOf(file), to: folderOf(target), spec: match[1]! });
    }
  }
  return found;
}

describe('imports', () => {
  const layers = documentedLayers();

  it('every folder of src/ is a documented layer', () => {
    const folders = fs
      .readdirSync(SRC, { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name);
    assert.deepEqual(
      folders.filter((folder) => !layers.includes(folder)),
      [],
      'add them to docs/ARCHITECTURE.md, in their place',
    );
    assert.ok(layers.includes('(root)'));
  });

  it('run one way: no folder imports from a folder listed after it', () => {
    const rank = new Map(layers.map((layer, index) => [layer, index]));
    const against = imports().filter(({ from, to }) => from !== to && rank.get(to)! > rank.get(from)!);
    assert.deepEqual(
      against.map(({ file, spec, from, to }) => `${file} imports ${spec}: ${from} may not import from ${to}, listed after it`),
      [],
    );
  });
});
