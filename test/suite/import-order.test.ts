/**
 * Imports run one way: a folder of src/ imports only from the folders listed before it in
 * docs/ARCHITECTURE.md's layers. Read from the documentation, so that the rule and its
 * description cannot drift apart; every folder must be listed. And a folder entered through
 * one file (ENTRY_FILES) is entered only there: nothing outside it, in src/, test/ or bench/,
 * imports another of its files, except the tests that mirror it.
 *
 * And no file reaches itself through its imports, type imports included: files that import
 * each other are one piece that cannot be read, tested or moved apart.
 *
 * Imports are read by TypeScript's own parser, so that every form counts: `import … from`,
 * a side-effect `import '…'`, `export … from`, `import x = require('…')`, `require('…')`,
 * `import('…')` and a type's `import('…').T`.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import ts from 'typescript';

const ROOT = path.resolve(__dirname, '../../..');
const SRC = path.join(ROOT, 'src');

/** Folders whose entry file is their public surface (docs/ARCHITECTURE.md, "Where the large nouns live"). */
const ENTRY_FILES = ['src/stores/journal/index.ts'];

/** The layers, lowest first, as docs/ARCHITECTURE.md lists them. */
function documentedLayers(): string[] {
  const doc = fs.readFileSync(path.join(ROOT, 'docs', 'ARCHITECTURE.md'), 'utf8');
  const section = doc.slice(doc.indexOf('<!-- layers:'), doc.indexOf('<!-- end of layers -->'));
  return [...section.matchAll(/^\d+\. `([^`]+)`/gm)].map((match) => match[1]!);
}

/** Every module a source text names, in every form an import can take, as written. */
function moduleSpecifiers(fileName: string, text: string): string[] {
  const found: string[] = [];
  const named = (node: ts.Node | undefined) => {
    if (node !== undefined && ts.isStringLiteralLike(node)) found.push(node.text);
  };
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) named(node.moduleSpecifier);
    else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference))
      named(node.moduleReference.expression);
    else if (
      ts.isCallExpression(node) &&
      (node.expression.kind === ts.SyntaxKind.ImportKeyword || (ts.isIdentifier(node.expression) && node.expression.text === 'require'))
    )
      named(node.arguments[0]);
    else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) named(node.argument.literal);
    ts.forEachChild(node, visit);
  };
  visit(ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS));
  return found;
}

/** Every relative import of the .ts files under `folders`, as the importing file and the file or folder it names (both absolute, without extension). */
function relativeImports(...folders: string[]): { file: string; spec: string; target: string }[] {
  const found: { file: string; spec: string; target: string }[] = [];
  for (const folder of folders) {
    for (const entry of fs.readdirSync(path.join(ROOT, folder), { recursive: true }) as string[]) {
      if (!entry.endsWith('.ts')) continue;
      const file = path.join(ROOT, folder, entry);
      for (const spec of moduleSpecifiers(file, fs.readFileSync(file, 'utf8'))) {
        if (spec.startsWith('./') || spec.startsWith('../'))
          found.push({ file, spec, target: path.resolve(path.dirname(file), spec).replace(/\.(js|ts)$/, '') });
      }
    }
  }
  return found;
}

/** The file an import names: `x.ts`, or a folder's `index.ts`. */
function resolvedFile(target: string): string | null {
  for (const candidate of [`${target}.ts`, path.join(target, 'index.ts')]) if (fs.existsSync(candidate)) return candidate;
  return null;
}

/** One circle of imports among `imports`, as the files around it (the first again at the end), or null. */
function findCircle(imports: readonly { file: string; target: string }[]): string[] | null {
  const edges = new Map<string, string[]>();
  for (const { file, target } of imports) {
    const to = resolvedFile(target) ?? target;
    edges.set(file, [...(edges.get(file) ?? []), to]);
  }
  const done = new Set<string>();
  const trail: string[] = [];
  const onTrail = new Set<string>();
  const visit = (file: string): string[] | null => {
    if (onTrail.has(file)) return [...trail.slice(trail.indexOf(file)), file];
    if (done.has(file)) return null;
    trail.push(file);
    onTrail.add(file);
    for (const next of edges.get(file) ?? []) {
      const circle = visit(next);
      if (circle !== null) return circle;
    }
    trail.pop();
    onTrail.delete(file);
    done.add(file);
    return null;
  };
  for (const file of edges.keys()) {
    const circle = visit(file);
    if (circle !== null) return circle;
  }
  return null;
}

const folderOf = (file: string) => {
  const relative = path.relative(SRC, file);
  return relative.includes(path.sep) ? relative.split(path.sep)[0]! : '(root)';
};
const within = (file: string, folder: string) => file.startsWith(folder + path.sep);

describe('imports', () => {
  const layers = documentedLayers();

  it('are read in every form: import, side effect, export from, import = require, require, import(), import types', () => {
    const text = `
      import a from './a';
      import type { B } from '../b';
      import './c';
      export { d } from './d';
      export * from './e';
      import f = require('./f');
      const g = require('./g');
      const h = import('./h');
      let i: import('./i').I;
      const notAnImport = './j';
    `;
    assert.deepEqual(moduleSpecifiers('sample.ts', text), ['./a', '../b', './c', './d', './e', './f', './g', './h', './i']);
  });

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
    const against = relativeImports('src')
      .map(({ file, spec, target }) => ({ file, spec, from: folderOf(file), to: folderOf(target) }))
      .filter(({ from, to }) => from !== to && rank.get(to)! > rank.get(from)!);
    assert.deepEqual(
      against.map(
        ({ file, spec, from, to }) => `${path.relative(ROOT, file)} imports ${spec}: ${from} may not import from ${to}, listed after it`,
      ),
      [],
    );
  });

  it('enter a folder with an entry file through that file alone, from src/, test/ and bench/', () => {
    const imports = relativeImports('src', 'test', 'bench');
    const past: string[] = [];
    for (const entryFile of ENTRY_FILES) {
      assert.ok(fs.existsSync(path.join(ROOT, entryFile)), `${entryFile} is gone: take it off ENTRY_FILES`);
      const folder = path.join(ROOT, path.dirname(entryFile));
      const entry = path.join(ROOT, entryFile).replace(/\.ts$/, '');
      const mirror = path.join(ROOT, 'test', path.relative(SRC, folder)); // its own tests may reach its parts
      for (const { file, spec, target } of imports) {
        if (within(target, folder) && target !== entry && !within(file, folder) && !within(file, mirror)) {
          past.push(
            `${path.relative(ROOT, file)} imports ${spec}: import it from ${path.relative(path.dirname(file), folder)} (${entryFile}) instead`,
          );
        }
      }
    }
    assert.deepEqual(past, []);
  });

  it('of the typed client (slipway/client, shipped alone) reach nothing of Slipway but core', () => {
    const client = path.join(SRC, 'client');
    const outside = relativeImports('src/client')
      .filter(({ target }) => !within(target, client) && !within(target, path.join(SRC, 'core')))
      .map(({ file, spec }) => `${path.relative(ROOT, file)} imports ${spec}`);
    assert.deepEqual(outside, []);
  });
  it('form no circle: no file of src/ or bench/ reaches itself through its imports', () => {
    const a = path.join(ROOT, 'a.ts');
    const b = path.join(ROOT, 'b.ts');
    assert.deepEqual(
      findCircle([
        { file: a, target: b },
        { file: b, target: a },
      ]),
      [a, b, a],
      'a circle of two is found',
    );
    assert.equal(findCircle([{ file: a, target: b }]), null);
    const circle = findCircle(relativeImports('src', 'bench'));
    assert.equal(
      circle,
      null,
      `${(circle ?? []).map((file) => path.relative(ROOT, file)).join(' -> ')}: move what they share to a file both import`,
    );
  });
});
