import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import zlib from 'node:zlib';
import { after, before, describe, it } from 'node:test';
import { makeDataDir, startTestGateway, type TestGateway } from '../helpers/gateway';
import { startServer, type ServerProcess } from '../helpers/process';

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

describe('a body of many megabytes, to a gateway in its own process', () => {
  let server: ServerProcess;
  let key: string;
  const dir = makeDataDir();
  before(async () => {
    server = await startServer(dir, { SLIPWAY_UPSTREAM: 'sink' });
    key = server.initialKey!;
  });
  after(async () => {
    server.child.kill('SIGTERM');
    await server.exited;
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('gets the refusal, not a broken pipe, and the connection serves the next request', async () => {
    // Refused before its body is read: were the connection closed there, the client would
    // still be writing and see EPIPE (16 MB is more than loopback takes at once). In the
    // test's own process the timing hides it: the gateway runs in a process of its own.
    const huge = Buffer.alloc(16_000_000, 0x20);
    for (const path of ['/', '/submit-batch', '/', '/submit-batch']) {
      const response = await fetch(server.url + path, { method: 'POST', headers: { 'x-api-key': key }, body: huge });
      const body = (await response.json()) as { error?: { message: string }; message?: string };
      assert.equal(body.error?.message ?? body.message, 'the request body is larger than 65536 bytes');
    }
    assert.equal((await fetch(server.url + '/health')).status, 200);
  });

  it('an endless body is read no further than 64 MiB: then its connection is cut', async () => {
    // A raw socket: Node's own client stops writing once its answer has come.
    const { hostname, port } = new URL(server.url);
    const socket = net.connect(Number(port), hostname);
    let answer = '';
    socket.on('data', (data: Buffer) => (answer += data.toString('latin1')));
    const cut = new Promise<void>((resolve) => socket.on('close', () => resolve()));
    socket.on('error', () => {});
    socket.write(`POST / HTTP/1.1\r\nHost: ${hostname}\r\nx-api-key: ${key}\r\nTransfer-Encoding: chunked\r\n\r\n`);
    const chunk = Buffer.concat([Buffer.from('100000\r\n'), Buffer.alloc(0x100000, 0x20), Buffer.from('\r\n')]);
    let written = 0;
    const pump = () => {
      while (!socket.destroyed && written < 1024 * 0x100000) {
        written += 0x100000;
        if (!socket.write(chunk)) return void socket.once('drain', pump);
      }
    };
    pump();
    await cut;
    assert.match(answer, /^HTTP\/1\.1 200 OK\r\n[\s\S]*the request body is larger than 65536 bytes/, 'the refusal was answered first');
    assert.ok(written >= 64 * 0x100000 && written < 1024 * 0x100000, `cut after ${written} bytes`);
    assert.equal((await fetch(server.url + '/health')).status, 200);
  });
});
