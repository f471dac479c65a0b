import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Keypair, LAMPORTS_PER_SOL } from '@solana/web3.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway';
import { comparable, leanHandovers, leanServed, RawConnection, request } from '../helpers/raw-http';
import { connect, fundedKeypair, transferTx } from '../helpers/solana';

const served = leanServed;
const handovers = leanHandovers;

let gw: TestGateway;
let port: number;
before(async () => {
  gw = await startTestGateway({ idleTimeoutMs: 2_000 });
  port = Number(new URL(gw.url).port);
});
after(async () => gw?.close());

describe('lean HTTP (leanHttp): submissions read and answered straight off the connection', () => {
  it('answers byte for byte as node:http does, for successes and refusals, on one connection', async () => {
    const connection = connect(gw.url, gw.key);
    const alice = await fundedKeypair(connection);
    const txs = await Promise.all(
      [1, 2].map((i) => transferTx(connection, alice, Keypair.generate().publicKey, i * LAMPORTS_PER_SOL * 0.01)),
    );
    const rpc = (id: number, tx: string) =>
      JSON.stringify({ jsonrpc: '2.0', id, method: 'sendTransaction', params: [tx, { encoding: 'base64' }] });
    const cases: [string, string][] = [
      ['/', rpc(1, txs[0]!)],
      ['/', rpc(2, txs[0]!)], // a duplicate
      ['/', rpc(3, 'not base64!')],
      ['/', JSON.stringify({ jsonrpc: '2.0', id: 4, method: 'getVersion' })],
      ['/', JSON.stringify({ jsonrpc: '2.0', method: 'getHealth' })], // a notification: 204
      ['/', '{"jsonrpc": "2.0", "id": 5, "method": '],
      ['/', ''],
      ['/submit-batch', JSON.stringify({ jsonrpc: '2.0', id: 1, params: { transactions: [txs[1], 'AAAA'], options: [] } })],
      ['/submit-batch', 'not json'],
    ];
    const lean = new RawConnection(port);
    // A byte above 0x7E in a header the gateway ignores: outside lean HTTP's form, so node:http serves it.
    const viaNode = new RawConnection(port);
    try {
      const before = await served();
      const formBefore = await handovers('form');
      for (const [path, body] of cases) {
        lean.write(request(path, gw.key, body));
        const a = await lean.next();
        viaNode.write(Buffer.from(request(path, gw.key, body, ['x-note: caf\xe9']), 'latin1'));
        const b = await viaNode.next();
        assert.deepEqual(comparable(a), comparable(b), `${path} ${body}`);
      }
      assert.equal((await served()) - before, cases.length, 'lean HTTP served every plain request');
      assert.equal((await handovers('form')) - formBefore, 1, 'the other connection was handed over once, and stayed');
      // The transaction it accepted is the gateway's: its status is known.
      const status = await fetch(gw.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': gw.key },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'getSignatureStatuses', params: [[JSON.parse(await sigOf(txs[0]!))]] }),
      });
      assert.equal(status.status, 200);
    } finally {
      lean.close();
      viaNode.close();
    }
  });

  it('answers pipelined requests in order, and a request that arrives in pieces', async () => {
    const lean = new RawConnection(port);
    try {
      const before = await served();
      const body = (id: number) => JSON.stringify({ jsonrpc: '2.0', id, method: 'getHealth' });
      lean.write(request('/', gw.key, body(1)) + request('/', gw.key, body(2)) + request('/', gw.key, body(3)));
      for (const id of [1, 2, 3]) assert.equal(JSON.parse((await lean.next())!.body).id, id);
      const whole = request('/', gw.key, body(4));
      for (const piece of [whole.slice(0, 10), whole.slice(10, 60), whole.slice(60, whole.length - 3), whole.slice(whole.length - 3)]) {
        lean.write(piece);
        await new Promise((resolve) => setTimeout(resolve, 30));
      }
      assert.equal(JSON.parse((await lean.next())!.body).id, 4);
      assert.equal((await served()) - before, 4);
    } finally {
      lean.close();
    }
  });

  it('a client that pipelines 20,000 requests before reading any answer gets every one, in order', async () => {
    const lean = new RawConnection(port);
    try {
      await new Promise((resolve) => lean.socket.once('connect', resolve));
      lean.socket.pause(); // reads no answer until everything is sent
      const count = 20_000;
      const all = Array.from({ length: count }, (_, i) =>
        request('/', gw.key, JSON.stringify({ jsonrpc: '2.0', id: i, method: 'getHealth', padding: 'x'.repeat(400) })),
      );
      for (const one of all) lean.socket.write(one);
      await new Promise((resolve) => setTimeout(resolve, 500));
      lean.socket.resume();
      for (let i = 0; i < count; i++) assert.equal(JSON.parse((await lean.next())!.body).id, i);
    } finally {
      lean.close();
    }
  });

  it('hands a connection to node:http when a request is outside its form, mid-connection too, and answers in order', async () => {
    const lean = new RawConnection(port);
    try {
      const formBefore = await handovers('form');
      lean.write(request('/', gw.key, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'getHealth' })));
      lean.write('GET /health HTTP/1.1\r\nHost: x\r\n\r\n');
      lean.write(request('/', gw.key, JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'getHealth' })));
      assert.equal(JSON.parse((await lean.next())!.body).id, 1);
      assert.match((await lean.next())!.body, /"status":"ok"/);
      assert.equal(JSON.parse((await lean.next())!.body).id, 2);
      assert.equal((await handovers('form')) - formBefore, 1);
    } finally {
      lean.close();
    }
  });

  it('leaves smuggling attempts and malformed framing to node:http, which refuses them; nothing is submitted', async () => {
    const attempts = [
      // Content-Length and Transfer-Encoding together.
      'POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nx-api-key: KEY\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
      // Two different Content-Lengths.
      'POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nx-api-key: KEY\r\nContent-Length: 2\r\nContent-Length: 40\r\n\r\n{}',
      // A bare LF ending a header line.
      'POST / HTTP/1.1\r\nHost: x\nContent-Type: application/json\r\nx-api-key: KEY\r\nContent-Length: 2\r\n\r\n{}',
      // obs-fold: a header continued on the next line.
      'POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nx-api-key: KEY\r\nContent-Length:\r\n 2\r\n\r\n{}',
      // A negative and a signed length.
      'POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nx-api-key: KEY\r\nContent-Length: -2\r\n\r\n{}',
      'POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nx-api-key: KEY\r\nContent-Length: +2\r\n\r\n{}',
      // A space before the colon.
      'POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nx-api-key: KEY\r\nContent-Length : 2\r\n\r\n{}',
      // Not HTTP at all.
      '\x00\x01\x02\xff garbage\r\n\r\n',
    ];
    for (const attempt of attempts) {
      const connection = new RawConnection(port);
      try {
        connection.write(Buffer.from(attempt.replace('KEY', gw.key), 'latin1'));
        const answer = await connection.next();
        assert.ok(answer === null || answer.status === 400, `${JSON.stringify(attempt)} answered ${answer?.status}`);
        if (answer !== null) assert.doesNotMatch(answer.body, /"result"/);
      } finally {
        connection.close();
      }
    }
    assert.equal((await fetch(`${gw.url}/health`)).status, 200, 'the gateway still answers');
  });

  it('hands over a request that does not arrive whole within a second; node:http then serves the rest', async () => {
    const lean = new RawConnection(port);
    try {
      const before = await handovers('incomplete');
      const whole = request('/', gw.key, JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'getHealth' }));
      lean.write(whole.slice(0, 40));
      await new Promise((resolve) => setTimeout(resolve, 1_300));
      assert.equal((await handovers('incomplete')) - before, 1);
      lean.write(whole.slice(40));
      assert.equal(JSON.parse((await lean.next())!.body).id, 7);
    } finally {
      lean.close();
    }
  });

  it('refuses on arrival through node:http (an unknown key), says Connection: close when asked, and closes idle connections', async () => {
    const refusedBefore = await handovers('refused');
    const unknown = new RawConnection(port);
    unknown.write(request('/', 'slw_unknown', '{}'));
    assert.equal((await unknown.next())!.status, 401);
    assert.equal((await handovers('refused')) - refusedBefore, 1);
    unknown.close();

    const closing = new RawConnection(port);
    closing.write(request('/', gw.key, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'getHealth' }), ['Connection: close']));
    const answer = (await closing.next())!;
    assert.deepEqual(
      answer.headers.find(([name]) => name === 'connection'),
      ['connection', 'close'],
    );
    assert.equal(await closing.closed(), true, 'the server closed it');

    const idle = new RawConnection(port);
    idle.write(request('/', gw.key, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'getHealth' })));
    await idle.next();
    assert.equal(await idle.closed(5_000), true, 'closed after idleTimeoutMs (2 s)');
  });

  it('survives a spray of hostile bytes on many connections at once', async () => {
    const shapes = [
      () => request('/', gw.key, '{'.repeat(100)),
      () => `POST / HTTP/1.1\r\n${'x-pad: y\r\n'.repeat(2_000)}\r\n`,
      () => request('/', gw.key, '{}').replace('Content-Length: 2', 'Content-Length: 999999999'),
      () => request('/', gw.key, '{}').replace('Content-Length: 2', 'Content-Length: 99999999999999999999'),
      () => `${request('/', gw.key, '{}')}\r\n\r\n\r\n`,
      () => Buffer.from(Array.from({ length: 600 }, () => Math.floor(Math.random() * 256))),
    ];
    const connections = Array.from({ length: 60 }, (_, i) => {
      const c = new RawConnection(port);
      c.write(shapes[i % shapes.length]!());
      if (i % 3 === 0) c.socket.end();
      return c;
    });
    await new Promise((resolve) => setTimeout(resolve, 500));
    connections.forEach((c) => c.close());
    const health = await fetch(`${gw.url}/health`);
    assert.equal(health.status, 200);
  });
});

describe('closing a gateway with connections in lean HTTP', () => {
  it('closes its idle lane connections at once: shutting down does not wait for their time-out', async () => {
    const own = await startTestGateway({ idleTimeoutMs: 60_000 });
    const lean = new RawConnection(Number(new URL(own.url).port));
    lean.write(request('/', own.key, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'getHealth' })));
    assert.equal((await lean.next())!.status, 200);
    const started = Date.now();
    await own.close();
    assert.ok(Date.now() - started < 10_000, `closed in ${Date.now() - started} ms`);
    assert.equal(await lean.closed(1_000), true);
  });
});

/** The first signature of a Base64 transaction, as a JSON string. */
async function sigOf(tx: string): Promise<string> {
  const { Transaction } = await import('@solana/web3.js');
  const bs58 = (await import('bs58')).default;
  return JSON.stringify(bs58.encode(Transaction.from(Buffer.from(tx, 'base64')).signatures[0]!.signature!));
}
