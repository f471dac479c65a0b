/**
 * Imports run one way: a folder of src/ imports only from the folders listed before it in
 * docs/ARCHITECTURE.md's layers. Read from the documentation, so that the rule and its
 * description cannot drift apart; every folder must be listed. And a folder entered through
 * one file (ENTRY_FILES) is entered only there: nothing outside it, in src/, test/ or bench/,
 * imports another of its files, except the tests that mirror it.
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
});
