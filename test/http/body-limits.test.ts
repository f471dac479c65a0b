import assert from 'node:assert/strict';
import zlib from 'node:zlib';
import { after, before, describe, it } from 'node:test';
import { startTestGateway, type TestGateway } from '../helpers/gateway';

let gw: TestGateway;
before(async () => {
  gw = await startTestGateway();
});
after(() => gw.close());

async function raw(path: string, body: Buffer | string, headers: Record<string, string> = {}) {
  const response = await fetch(gw.url + path, { method: 'POST', headers: { 'x-api-key': gw.key, ...headers }, body });
  return { status: response.status, body: (await response.json()) as any };
}

describe('request bodies', () => {
  it('refuses a body over 64 KiB in each path shape', async () => {
    const big = 'x'.repeat(70_000);
    const root = await raw('/', big);
    assert.equal(root.status, 200);
    assert.deepEqual(root.body.error, { code: -32600, message: 'the request body is larger than 65536 bytes' });
    const batch = await raw('/submit-batch', big);
    assert.deepEqual([batch.status, batch.body], [413, { code: -32600, message: 'the request body is larger than 65536 bytes' }]);
  });

  it('refuses JSON nested more than 32 levels deep, in each path shape, before looking at it', async () => {
    const nested = (depth: number) =>
      JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'getSignatureStatuses',
        params: [JSON.parse(`${'['.repeat(depth - 2)}${']'.repeat(depth - 2)}`)],
      });
    const deep = await raw('/', nested(33), { 'content-type': 'application/json' });
    assert.deepEqual(
      [deep.status, deep.body.error],
      [200, { code: -32600, message: 'Invalid Request: the JSON nests more than 32 levels deep' }],
    );
    const batch = await raw('/submit-batch', `{"params":{"transactions":${'['.repeat(40)}${']'.repeat(40)}}}`);
    assert.deepEqual(
      [batch.status, batch.body],
      [400, { code: -32600, message: 'Invalid Request: the JSON nests more than 32 levels deep' }],
    );
    // 32 levels are read, and refused (or answered) for what they say.
    const fits = await raw('/', nested(32), { 'content-type': 'application/json' });
    assert.notEqual(fits.body.error?.message, 'Invalid Request: the JSON nests more than 32 levels deep');
    // 20,000 levels (as deep as the body limit allows): the same answer, at once.
    const deepest = await raw('/', `${'['.repeat(20_000)}${']'.repeat(20_000)}`, { 'content-type': 'application/json' });
    assert.equal(deepest.body.error.message, 'Invalid Request: the JSON nests more than 32 levels deep');
  });

  it('refuses compressed bodies rather than guessing', async () => {
    const gzipped = zlib.gzipSync(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'getSlot' }));
    const root = await raw('/', gzipped, { 'content-encoding': 'gzip', 'content-type': 'application/json' });
    assert.equal(root.body.error.code, -32600);
    assert.match(root.body.error.message, /compressed bodies are not accepted/);
    const batch = await raw('/submit-batch', gzipped, { 'content-encoding': 'gzip' });
    assert.equal(batch.status, 415);
  });

  it('reads JSON whatever the Content-Type says', async () => {
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'getHealth' });
    for (const type of ['application/json', 'text/plain', 'application/x-www-form-urlencoded']) {
      const answer = await raw('/', body, { 'content-type': type });
      assert.equal(answer.body.result, 'ok', type);
    }
  });

  it('refuses an empty body', async () => {
    const answer = await raw('/', '', { 'content-type': 'application/json' });
    assert.equal(answer.status, 200);
    assert.deepEqual(answer.body.error, { code: -32700, message: 'Parse error: the body is empty: send a JSON request' });
    const batch = await raw('/submit-batch', '');
    assert.deepEqual([batch.status, batch.body], [400, { code: -32700, message: 'Parse error: the body is empty: send a JSON request' }]);
  });
});
