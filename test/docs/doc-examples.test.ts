/**
 * The configuration files the docs show are ones Slipway accepts: each ```json block that
 * holds `upstreams` in docs/*.md is parsed as a configuration file, as `--config` would.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { parseConfigFile } from '../../src/config/config-file';

const DOCS = path.resolve(__dirname, '../../../docs');

describe('configuration examples in docs/', () => {
  const blocks = fs
    .readdirSync(DOCS)
    .filter((file) => file.endsWith('.md'))
    .flatMap((file) => [...fs.readFileSync(path.join(DOCS, file), 'utf8').matchAll(/```json\n([\s\S]*?)```/g)].map((match) => ({ file, json: match[1]! })))
    .filter(({ json }) => json.includes('"upstreams"'));

  it('there are some (MAINNET, CONFIG, DEPLOY)', () => {
    assert.ok(new Set(blocks.map((b) => b.file)).size >= 3, blocks.map((b) => b.file).join(', '));
  });
  for (const [i, { file, json }] of blocks.entries()) {
    it(`${file}, example ${i + 1}, is accepted`, () => {
      const config = parseConfigFile(JSON.parse(json), file);
      assert.ok(Object.keys(config.network.upstreams).length > 0);
    });
  }
});
