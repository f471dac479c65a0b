/**
 * No function in src/ longer than MAX_FUNCTION_LINES, nested functions counted in the
 * function that holds them (a long closure is a long function): read with the TypeScript
 * compiler, every function, method, accessor, constructor and arrow function.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import ts from 'typescript';

const MAX_FUNCTION_LINES = 150;
const ROOT = path.resolve(__dirname, '../../..');

/** Every function-like node of `source` over `max` lines, as `file:line name (N lines)`. */
export function longFunctions(file: string, text: string, max: number): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body !== undefined) {
      const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const last = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      const lines = last - first + 1;
      if (lines > max) {
        const name = node.name !== undefined && ts.isIdentifier(node.name) ? node.name.text : '(anonymous)';
        found.push(`${file}:${first + 1} ${name} (${lines} lines)`);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe('the size of functions', () => {
  it(`no function in src/ is over ${MAX_FUNCTION_LINES} lines, nested functions included in their holder`, () => {
    const files = (fs.readdirSync(path.join(ROOT, 'src'), { recursive: true }) as string[]).filter((file) => file.endsWith('.ts'));
    assert.ok(files.length > 100, 'the sources were found');
    const long = files.flatMap((file) =>
      longFunctions(path.join('src', file), fs.readFileSync(path.join(ROOT, 'src', file), 'utf8'), MAX_FUNCTION_LINES),
    );
    assert.deepEqual(long, []);
  });

  it('the reader finds a long arrow function inside a method, and counts the lines it spans', () => {
    const body = Array.from({ length: 20 }, (_, i) => `    const v${i} = ${i};`).join('\n');
    const text = `class A {\n  m() {\n    const f = () => {\n${body}\n    };\n  }\n}\n`;
    assert.deepEqual(longFunctions('a.ts', text, 21), ['a.ts:2 m (24 lines)', 'a.ts:3 (anonymous) (22 lines)']);
    assert.deepEqual(longFunctions('a.ts', text, 24), []);
  });
});
