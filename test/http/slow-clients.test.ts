/**
 * Slow and idle clients: one that sends its headers a byte at a time (slowloris), its body
 * slowly, or nothing at all is cut off at the configured time-outs, while other clients are
 * served meanwhile; an idle keep-alive connection is closed after idleTimeoutMs.
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, it } from 'node:test';
import { startTestGateway, type TestGateway } from '../helpers/gateway';
import { rpc } from '../helpers/rpc';

describe('slow clients', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startTestGateway({ headersTimeoutMs: 1_000, httpRequestTimeoutMs: 2_000, idleTimeoutMs: 1_500 });
  });
  after(() => gw.close());

  /** Opens a connection, writes `head`, then `drip` every 200 ms until the server closes it; resolves with what it answered and when. */
  const dripping = (head: string, drip: string) =>
    new Promise<{ ms: number; answer: string }>((resolve) => {
      const { port } = new URL(gw.url);
      const socket = net.connect(Number(port), '127.0.0.1');
      const started = Date.now();
      let answer = '';
      socket.on('data', (chunk) => (answer += chunk.toString()));
      socket.on('error', () => {});
      socket.on('close', () => {
        clearInterval(timer);
        resolve({ ms: Date.now() - started, answer });
      });
      socket.write(head);
      const timer = setInterval(() => socket.writable && socket.write(drip), 200);
    });

  it('a client that never finishes its headers is cut off after headersTimeoutMs; others are served meanwhile', async () => {
    const slow = dripping('POST / HTTP/1.1\r\nHost: slipway\r\n', 'X-Slow: a\r\n');
    const started = Date.now();
    const served = await rpc(gw.url, gw.key, 'getSlot');
    assert.equal(served.status, 200);
    assert.ok(Date.now() - started < 500, 'served while the slow one dripped');
    const { ms, answer } = await slow;
    assert.ok(ms >= 900 && ms < 3_000, `cut after ${ms} ms`);
    assert.match(answer, /^HTTP\/1\.1 408/);
    assert.ok(
      answer.endsWith(
        '{"code":-32600,"message":"the request took too long to arrive: send its headers within 1 s and all of it within 2 s"}',
      ),
      answer,
    );
  });

  it('a client that sends its body too slowly is cut off after httpRequestTimeoutMs', async () => {
    const head = `POST / HTTP/1.1\r\nHost: slipway\r\nContent-Type: application/json\r\nx-api-key: ${gw.key}\r\nContent-Length: 1000\r\n\r\n`;
    const { ms, answer } = await dripping(head, ' ');
    assert.ok(ms >= 1_900 && ms < 4_000, `cut after ${ms} ms`);
    assert.match(answer, /^HTTP\/1\.1 408/);
  });

  it('a connection that never sends a request is answered 408 after headersTimeoutMs; an idle keep-alive one is closed after idleTimeoutMs', async () => {
    const { ms: silentMs, answer } = await dripping('', '');
    assert.ok(silentMs >= 900 && silentMs < 3_000, `silent connection cut after ${silentMs} ms`);
    assert.match(answer, /^HTTP\/1\.1 408/);
    const { ms: idleMs, answer: served } = await dripping('GET /health HTTP/1.1\r\nHost: slipway\r\n\r\n', '');
    assert.match(served, /^HTTP\/1\.1 200 OK/);
    assert.ok(idleMs >= 1_400 && idleMs < 4_000, `idle keep-alive connection closed after ${idleMs} ms`);
  });

  it('headers over 16 KiB: HTTP 431 with a JSON body saying so; anything that is not HTTP: 400', async () => {
    const big = await fetch(gw.url, { method: 'POST', headers: { 'x-api-key': gw.key, 'x-big': 'a'.repeat(20_000) }, body: '{}' });
    assert.equal(big.status, 431);
    assert.deepEqual(await big.json(), { code: -32600, message: 'the request headers are larger than 16384 bytes' });
    const garbage = await new Promise<string>((resolve) => {
      const socket = net.connect(Number(new URL(gw.url).port), '127.0.0.1');
      let answer = '';
      socket.on('data', (chunk) => (answer += chunk.toString()));
      socket.on('close', () => resolve(answer));
      socket.on('error', () => {});
      socket.write('\x16\x03\x01 not http at all\r\n\r\n');
    });
    assert.match(garbage, /^HTTP\/1\.1 400 Bad Request/);
    assert.ok(garbage.endsWith('{"code":-32600,"message":"the request is not valid HTTP/1.1"}'), garbage);
  });
});
