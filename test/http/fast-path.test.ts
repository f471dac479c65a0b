import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { Keypair, LAMPORTS_PER_SOL } from '@solana/web3.js';
import type { Authenticator } from '../../src/auth/authenticator';
import { fastPathRequestsTotal } from '../../src/metrics/metrics';
import { createFastPath, type Answerer } from '../../src/http/fast-path';
import type { ApiKeyRecord } from '../../src/stores/key-store';
import { useGateway } from '../helpers/use-gateway';
import { fundedKeypair, transferTx } from '../helpers/solana';

const ctx = useGateway();

/** The raw answer: status, content type and body text. */
async function raw(url: string, body: string, headers: Record<string, string> = {}) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': ctx.gw.key, ...headers },
    body,
  });
  return { status: response.status, type: response.headers.get('content-type'), body: await response.text() };
}

describe('the fast path for POST / and POST /submit-batch (cross-checked against the Fastify routes)', () => {
  it('answers exactly as Fastify does, for successes and for every kind of refusal', async () => {
    const alice = await fundedKeypair(ctx.connection);
    const txs = await Promise.all(
      [1, 2, 3].map((i) => transferTx(ctx.connection, alice, Keypair.generate().publicKey, i * LAMPORTS_PER_SOL * 0.01)),
    );
    const rpcBodies = [
      JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'sendTransaction', params: [txs[0], { encoding: 'base64' }] }),
      JSON.stringify({ jsonrpc: '2.0', id: 'x', method: 'sendTransaction', params: [txs[0], { encoding: 'base64' }] }), // a duplicate
      JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'sendTransaction', params: ['not base64!', { encoding: 'base64' }] }),
      JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'noSuchMethod', params: [] }),
      // getVersion, not getSlot: the two answers must not differ by a slot that passed between them.
      JSON.stringify([
        { jsonrpc: '2.0', id: 4, method: 'getVersion' },
        { jsonrpc: '2.0', method: 'getHealth' },
      ]),
      JSON.stringify({ jsonrpc: '2.0', method: 'getHealth' }), // a notification: 204
      '{"jsonrpc": "2.0", "id": 5, "method": ',
      '',
      '"just a string"',
    ];
    const served = async () => (await fastPathRequestsTotal.get()).values[0]?.value ?? 0;
    const before = await served();
    for (const body of rpcBodies) {
      const fast = await raw(`${ctx.gw.url}/`, body);
      const fastify = await raw(`${ctx.gw.url}/api/v1/transactions`, body); // a Jito path: always Fastify
      assert.deepEqual(fast, fastify, body);
    }
    const batchBodies = [
      JSON.stringify({ jsonrpc: '2.0', id: 1, params: { transactions: [txs[1], txs[2]], options: [] } }),
      JSON.stringify({ jsonrpc: '2.0', id: 1, params: { transactions: [txs[1], 'AAAA'], options: [] } }),
      JSON.stringify({ jsonrpc: '1.0', id: 1, params: { transactions: [txs[1]] } }),
      '[1, 2]',
      'not json',
    ];
    for (const body of batchBodies) {
      const fast = await raw(`${ctx.gw.url}/submit-batch`, body);
      const fastify = await raw(`${ctx.gw.url}/submit-batch?anti_mev=0`, body); // a query string: Fastify
      assert.deepEqual(fast, fastify, body);
    }
    assert.match((await raw(`${ctx.gw.url}/`, rpcBodies[0]!)).body, /"result":"\w{80,90}"/);
    // Every request to the exact paths (the empty body has a Content-Length of 0: taken too).
    assert.equal((await served()) - before, rpcBodies.length + batchBodies.length + 1);
  });
});

describe('what the fast path takes and what it leaves to Fastify', () => {
  it('takes only exact paths with a valid key, a length within the limit and no encoding', async () => {
    const key: ApiKeyRecord = {
      id: 'key_test',
      name: 'test',
      bundle: false,
      tps: null,
      bundlesPerSecond: null,
      readsPerSecond: null,
      webhookUrl: null,
      createdAt: '',
      revokedAt: null,
    };
    const authenticator: Authenticator = {
      authenticate: (presented) => (presented === 'good' ? key : null),
      unavailable: () => null,
      webhooks: () => new Map(),
      close: () => {},
    };
    const seen: unknown[] = [];
    const answer: Answerer = async (body) => {
      seen.push(body);
      return { status: 200, payload: { took: true } };
    };
    const fast = createFastPath({
      authenticator,
      admitKey: () => true,
      bodyLimit: 100,
      routes: { '/': answer, '/submit-batch': answer },
      failed: () => ({ status: 500 }),
    });
    const server = http.createServer((request, response) => {
      if (!fast(request, response)) {
        request.resume();
        response.writeHead(299).end('left');
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const call = async (path: string, init: Omit<RequestInit, 'headers'> & { headers?: Record<string, string> } = {}) => {
        const response = await fetch(base + path, {
          method: 'POST',
          body: '{"a":1}',
          ...init,
          headers: { 'content-type': 'application/json', 'x-api-key': 'good', ...init.headers },
        });
        await response.text();
        return response.status;
      };
      assert.equal(await call('/'), 200);
      assert.equal(await call('/submit-batch'), 200);
      assert.deepEqual(seen, [{ a: 1 }, { a: 1 }]);
      assert.equal(await call('/?anti_mev=1'), 299, 'a query string');
      assert.equal(await call('/api/v1/transactions'), 299, 'another path');
      assert.equal(await call('/', { headers: { 'x-api-key': 'bad' } }), 299, 'an unknown key (Fastify answers 401)');
      assert.equal(await call('/', { headers: { 'content-encoding': 'gzip' } }), 299, 'an encoded body');
      assert.equal(await call('/', { body: 'x'.repeat(101) }), 299, 'a body over the limit (Fastify answers 413)');
      assert.equal(
        await call('/', {
          body: new ReadableStream({ start: (c) => (c.enqueue(new TextEncoder().encode('{}')), c.close()) }),
          duplex: 'half',
        } as Omit<RequestInit, 'headers'>),
        299,
        'no Content-Length',
      );
      assert.equal((await fetch(`${base}/`, { headers: { 'x-api-key': 'good' } })).status, 299, 'GET');
      assert.equal(seen.length, 2);
    } finally {
      server.close();
    }
  });
});
