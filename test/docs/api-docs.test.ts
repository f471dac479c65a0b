/**
 * docs/openapi.json and docs/METHODS.md are what `npm run docs` makes from the code, and
 * every JSON-RPC method they list is served by a gateway.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { methodsMarkdown, openApiDocument, SERVED_METHODS } from '../../src/http/api-description';
import { useGateway } from '../helpers/use-gateway';
import { rpc } from '../helpers/rpc';

const DOCS = path.resolve(__dirname, '../../../docs');
const ctx = useGateway();

describe('the generated API reference', () => {
  it('docs/openapi.json and docs/METHODS.md are current (npm run docs writes them)', () => {
    assert.equal(fs.readFileSync(path.join(DOCS, 'openapi.json'), 'utf8'), `${JSON.stringify(openApiDocument(), null, 2)}\n`, 'run npm run docs');
    assert.equal(fs.readFileSync(path.join(DOCS, 'METHODS.md'), 'utf8'), methodsMarkdown(), 'run npm run docs');
  });

  it('every path it describes is served', async () => {
    const described = openApiDocument().paths as Record<string, Record<string, unknown>>;
    for (const p of Object.keys(described)) {
      // The method it is described with (a path with one: each of Slipway's is served by one method).
      const method = Object.keys(described[p]!)[0]!.toUpperCase();
      const response = await fetch(`${ctx.gw.url}${p}`, { method, headers: { 'x-api-key': ctx.gw.key }, body: method === 'POST' ? '{}' : undefined, signal: AbortSignal.timeout(2_000) }).catch((error: Error) => error);
      // The event stream never ends: its headers arriving is enough.
      assert.ok(!(response instanceof Error) && response.status !== 404, `${method} ${p}`);
      if (!(response instanceof Error)) await response.body?.cancel();
    }
    assert.equal((await fetch(`${ctx.gw.url}/not-a-path`)).status, 404);
  });

  it('every JSON-RPC method it lists is served (never "method not found")', async () => {
    for (const method of SERVED_METHODS) {
      const answer = await rpc(ctx.gw.url, ctx.gw.key, method, []);
      assert.notEqual(answer.body.error?.code, -32601, `${method}: ${JSON.stringify(answer.body)}`);
    }
  });
});
