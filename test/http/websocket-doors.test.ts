/**
 * The WebSocket doors of a real `bin/slipway serve` (a process of its own, so that a crash
 * shows as its exit): hostile upgrade requests on both ports, with and without a key, and
 * hostile frames from a key holder. After each, the process must still answer /health, and
 * each attack must get an answer (an HTTP refusal, a JSON-RPC error or a close frame).
 * Then the limits: subscriptions per connection, per key and in total, strict signatures,
 * port + 1's header time-out and per-address connections, idle and unanswered pings, and a
 * revoked key's sockets closed within a second.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import { after, before, describe, it } from 'node:test';
import bs58 from 'bs58';
import WebSocket from 'ws';
import { makeDataDir } from '../helpers/gateway';
import { runCli, startServer, type ServerProcess } from '../helpers/process';
import { until } from '../helpers/until';

const LIMITS = {
  SLIPWAY_MAX_SUBSCRIPTIONS_PER_CONNECTION: '3',
  SLIPWAY_MAX_SUBSCRIPTIONS_PER_KEY: '5',
  SLIPWAY_MAX_SUBSCRIPTIONS: '8',
  SLIPWAY_HEADERS_TIMEOUT_MS: '1000',
  SLIPWAY_HTTP_REQUEST_TIMEOUT_MS: '2000',
  SLIPWAY_MAX_CONNECTIONS_PER_CLIENT: '20',
  SLIPWAY_IDLE_TIMEOUT_MS: '2000',
  SLIPWAY_WEBSOCKET_PING_MS: '500',
};

let server: ServerProcess;
let dataDir: string;
let key: string;
let ports: number[];
before(async () => {
  for (let attempt = 0; attempt < 5; attempt++) {
    dataDir = makeDataDir();
    server = await startServer(dataDir, LIMITS, ['--log-level', 'warn']);
    const ws = await until(() => server.stdout.some((line) => line.includes('ws://')), Boolean, 2_000).catch(() => false);
    if (ws) break;
    server.child.kill('SIGKILL');
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
  key = server.initialKey!;
  const port = Number(new URL(server.url).port);
  ports = [port, port + 1];
});
after(async () => {
  server.child.kill('SIGTERM');
  await server.exited;
  fs.rmSync(dataDir, { recursive: true, force: true });
});

async function assertAlive(what: string): Promise<void> {
  assert.equal(server.child.exitCode, null, `the gateway exited after ${what}: ${server.stderr.join('').slice(-2000)}`);
  const health = await fetch(`${server.url}/health`, { signal: AbortSignal.timeout(2_000) });
  assert.equal(health.status, 200, `/health after ${what}`);
}

/**
 * Sends raw bytes, returns what came back before the server closed (or 2 s passed); with
 * `then`, sends `then.send` once what came back includes `then.after`.
 */
function raw(port: number, bytes: string | Buffer, then?: { after: string; send: string }): Promise<string> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(bytes));
    let answer = '';
    let followed = then === undefined;
    socket.on('data', (chunk) => {
      answer += chunk.toString('latin1');
      if (!followed && answer.includes(then!.after)) {
        followed = true;
        socket.write(then!.send);
      }
    });
    socket.on('error', () => {});
    socket.on('close', () => resolve(answer));
    setTimeout(() => {
      socket.destroy();
      resolve(answer);
    }, 2_000).unref();
  });
}

const upgradeHeaders =
  'Connection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nHost: x\r\n';

function open(port: number, query = `?api-key=${key}`, options: WebSocket.ClientOptions = {}): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(`ws://127.0.0.1:${port}/${query}`, options);
    socket.once('open', () => resolve(socket));
    socket.once('error', reject);
  });
}

/** The next message on `socket`, parsed, or its close. */
function next(socket: WebSocket): Promise<{ message?: any; close?: { code: number; reason: string } }> {
  return new Promise((resolve) => {
    const onMessage = (data: WebSocket.RawData) => {
      socket.off('close', onClose);
      resolve({ message: JSON.parse(data.toString()) });
    };
    const onClose = (code: number, reason: Buffer) => {
      socket.off('message', onMessage);
      resolve({ close: { code, reason: reason.toString() } });
    };
    socket.once('message', onMessage);
    socket.once('close', onClose);
  });
}

async function call(socket: WebSocket, request: unknown) {
  const answer = next(socket);
  socket.send(typeof request === 'string' ? request : JSON.stringify(request));
  return answer;
}

const signature = () => bs58.encode(Buffer.from(Array.from({ length: 64 }, () => Math.floor(Math.random() * 256))));
const subscribe = (socket: WebSocket, id = 1) =>
  call(socket, { jsonrpc: '2.0', id, method: 'signatureSubscribe', params: [signature(), { commitment: 'confirmed' }] });

describe('hostile upgrade requests, on the main port and on port + 1', () => {
  const targets = ['//', 'http://[::1', '/%', '/?api-key=%ZZ', '*', 'http://x:99999/', `/${'a'.repeat(8000)}`];
  for (const target of targets) {
    it(`GET ${target.slice(0, 24)} with Upgrade: websocket and no key is refused, and the process goes on`, async () => {
      for (const port of ports) {
        const answer = await raw(port, `GET ${target} HTTP/1.1\r\n${upgradeHeaders}\r\n`);
        assert.match(answer, /^HTTP\/1\.1 (400|401|404|431) /, `port ${port}: ${answer.slice(0, 200)}`);
        await assertAlive(`GET ${target.slice(0, 24)} on port ${port}`);
      }
    });
  }

  it('the same targets with a valid key are refused or served, and the process goes on', async () => {
    for (const port of ports) {
      for (const target of ['//', 'http://[::1', '/%']) {
        const answer = await raw(port, `GET ${target} HTTP/1.1\r\nx-api-key: ${key}\r\n${upgradeHeaders}\r\n`);
        assert.match(answer, /^HTTP\/1\.1 (101|400) /, `${target} on ${port}: ${answer.slice(0, 200)}`);
      }
    }
    await assertAlive('upgrades with a key');
  });

  it('upgrades that are not WebSocket handshakes are refused: wrong version, no key header, a body, HTTP/1.0', async () => {
    const variants = [
      `GET /?api-key=${key} HTTP/1.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 7\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n`,
      `GET /?api-key=${key} HTTP/1.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\n\r\n`,
      `POST /?api-key=${key} HTTP/1.1\r\n${upgradeHeaders}Content-Length: 5\r\n\r\nhello`,
      `GET /?api-key=${key} HTTP/1.0\r\n${upgradeHeaders}\r\n`,
    ];
    for (const port of ports) {
      for (const request of variants) {
        const answer = await raw(port, request);
        assert.match(answer, /^HTTP\/1\.[01] (400|405|426) /, `${request.split('\r\n')[0]} on ${port}: ${answer.slice(0, 200)}`);
      }
    }
    await assertAlive('handshakes that are not WebSocket');
  });

  it("a WebSocket handshake without a usable key or version is refused in Slipway's shape, naming the header", async () => {
    const handshake = (headers: string) =>
      `GET /?api-key=${key} HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n${headers}\r\n`;
    for (const port of ports) {
      for (const [headers, message] of [
        ['Sec-WebSocket-Version: 13\r\n', 'a WebSocket handshake needs a Sec-WebSocket-Key header: 16 random bytes in Base64'],
        [
          'Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: short\r\n',
          'a WebSocket handshake needs a Sec-WebSocket-Key header: 16 random bytes in Base64',
        ],
        ['Sec-WebSocket-Version: 7\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n', 'Sec-WebSocket-Version must be 13 (got "7")'],
        ['Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n', 'Sec-WebSocket-Version must be 13 (got null)'],
      ] as const) {
        const answer = await raw(port, handshake(headers));
        assert.match(answer, /^HTTP\/1\.1 400 /, `port ${port}: ${answer.slice(0, 200)}`);
        assert.match(answer, /content-type: application\/json/i);
        assert.deepEqual(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)), { code: 400, message });
      }
    }
    await assertAlive('handshakes without a usable key or version');
  });

  it('an upgrade to anything but a WebSocket (curl --http2 asks for h2c) is ignored on the main port, as RFC 9110 allows, and answered 426 on port + 1', async () => {
    const body = JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'getSlot' });
    const h2c = (close: boolean) =>
      `POST / HTTP/1.1\r\nHost: x\r\nConnection: Upgrade, HTTP2-Settings${close ? ', close' : ''}\r\nUpgrade: h2c\r\n` +
      `HTTP2-Settings: AAMAAABkAAQCAAAAAAIAAAAA\r\nx-api-key: ${key}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`;
    const served = await raw(ports[0]!, h2c(true));
    assert.match(served, /^HTTP\/1\.1 200 /, served.slice(0, 200));
    assert.match(served, /connection: close/i, 'the close token of Connection is kept');
    assert.match(served, /\{"jsonrpc":"2\.0","result":\d+,"id":7\}$/);
    // On a connection node:http already holds (a request before it), and a request after its
    // answer on the same connection. (Bytes sent behind an upgrade request before its answer
    // are the other protocol's to node:http's parser from Node.js 22 on, and wait for a time-out.)
    const pipelined = await raw(ports[0]!, `GET /health HTTP/1.1\r\nHost: x\r\n\r\n${h2c(false)}`, {
      after: '"id":7}',
      send: 'GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n',
    });
    assert.equal(pipelined.match(/HTTP\/1\.1 200 /g)?.length, 3, pipelined.slice(0, 900));
    assert.match(pipelined, /"result":\d+,"id":7/);
    const health = await raw(ports[0]!, 'GET /health HTTP/1.1\r\nHost: x\r\nConnection: Upgrade, close\r\nUpgrade: h2c\r\n\r\n');
    assert.match(health, /^HTTP\/1\.1 200 [^]*"status":"ok"/, health.slice(0, 300));
    // With a chunked body node:http would leave it unread: refused at once, saying what to do.
    const chunked = await raw(
      ports[0]!,
      `POST / HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: h2c\r\nx-api-key: ${key}\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n`,
    );
    assert.match(chunked, /^HTTP\/1\.1 400 /, chunked.slice(0, 200));
    assert.match(chunked, /"message":"Upgrade is served for WebSocket handshakes only: send this request without it"/);
    const beside = await raw(ports[1]!, h2c(true));
    assert.match(beside, /^HTTP\/1\.1 426 /, beside.slice(0, 200));
    assert.match(beside, /this port serves WebSocket subscriptions only/);
    await assertAlive('upgrades to h2c');
  });

  it('port + 1 cuts off a client that does not finish its headers (headersTimeoutMs)', async () => {
    const started = Date.now();
    const answer = await raw(ports[1]!, 'GET / HTTP/1.1\r\nConnection: Upgrade\r\n');
    const elapsed = Date.now() - started;
    assert.ok(elapsed < 1_900, `closed after ${elapsed} ms`);
    assert.match(answer, /^HTTP\/1\.1 (400|408) |^$/);
  });

  it('port + 1 answers plain HTTP requests with 426', async () => {
    const answer = await fetch(`http://127.0.0.1:${ports[1]}/`);
    assert.equal(answer.status, 426);
  });
});

describe('hostile frames from a key holder', () => {
  const frames: [string, string | Buffer, boolean][] = [
    ['null', 'null', false],
    ['a method that is an object with toString', '{"jsonrpc":"2.0","id":1,"method":{"toString":1}}', false],
    ['an array', '[]', false],
    ['a number', '1', false],
    ['a string', '"x"', false],
    ['not JSON', '{', false],
    ['params an object', '{"jsonrpc":"2.0","id":1,"method":"signatureSubscribe","params":{"a":1}}', false],
    ['params[1] a string', `{"jsonrpc":"2.0","id":1,"method":"signatureSubscribe","params":["${signature()}","confirmed"]}`, false],
    [
      'commitment toString',
      `{"jsonrpc":"2.0","id":1,"method":"signatureSubscribe","params":["${signature()}",{"commitment":"toString"}]}`,
      false,
    ],
    ['a signature of 64 KiB', `{"jsonrpc":"2.0","id":1,"method":"signatureSubscribe","params":["${'1'.repeat(60_000)}"]}`, false],
    [
      'a signature of the wrong length',
      `{"jsonrpc":"2.0","id":1,"method":"signatureSubscribe","params":["${bs58.encode(Buffer.alloc(32, 1))}"]}`,
      false,
    ],
    ['an id that is an object', '{"jsonrpc":"2.0","id":{},"method":"slotSubscribe"}', false],
    ['an id of 10,000 characters', `{"jsonrpc":"2.0","id":"${'i'.repeat(10_000)}","method":"slotSubscribe"}`, false],
    ['an unsubscribe of -1', '{"jsonrpc":"2.0","id":1,"method":"slotUnsubscribe","params":[-1]}', false],
    ['an unsubscribe of someone else', '{"jsonrpc":"2.0","id":1,"method":"slotUnsubscribe","params":[1]}', false],
    ['a binary frame', Buffer.from([0, 1, 2, 3]), true],
    ['__proto__ as method', '{"jsonrpc":"2.0","id":1,"method":"__proto__"}', false],
  ];
  for (const [name, frame, binary] of frames) {
    it(`${name}: a JSON-RPC error, the connection stays usable, the process goes on`, async () => {
      const socket = await open(ports[0]!);
      try {
        const answer = await new Promise<any>((resolve) => {
          socket.once('message', (data) => resolve(JSON.parse(data.toString())));
          socket.send(frame, { binary });
        });
        assert.equal(typeof answer.error?.code, 'number', JSON.stringify(answer).slice(0, 300));
        assert.ok(JSON.stringify(answer).length < 600, `the answer echoes the input: ${JSON.stringify(answer).length} bytes`);
        const again = await call(socket, { jsonrpc: '2.0', id: 2, method: 'slotSubscribe' });
        assert.equal(typeof again.message?.result, 'number');
      } finally {
        socket.close();
      }
      await assertAlive(name);
    });
  }

  it('frames ws itself refuses (invalid UTF-8, over 64 KiB, a bad opcode) close that connection only', async () => {
    for (const send of [
      (socket: WebSocket) => socket.send(Buffer.from([0xff, 0xfe, 0xfd]), { binary: false }),
      (socket: WebSocket) => socket.send('x'.repeat(70_000)),
      (socket: WebSocket) => (socket as unknown as { _socket: net.Socket })._socket.write(Buffer.from([0x83, 0x80, 0, 0, 0, 0])),
    ]) {
      const socket = await open(ports[1]!);
      const closed = new Promise<number>((resolve) => socket.once('close', (code) => resolve(code)));
      socket.on('error', () => {});
      send(socket);
      assert.ok([1002, 1006, 1007, 1009].includes(await closed));
      await assertAlive('a refused frame');
    }
  });
});

describe('limits', () => {
  it('subscriptions per connection, per key and in total are refused past their limit, saying which', async () => {
    const first = await open(ports[0]!);
    const second = await open(ports[1]!);
    try {
      for (let i = 0; i < 3; i++) assert.equal(typeof (await subscribe(first, i)).message.result, 'number');
      const perConnection = await subscribe(first, 9);
      assert.equal(perConnection.message.error.code, -32602);
      assert.match(perConnection.message.error.message, /at most 3 subscriptions per connection \(maxSubscriptionsPerConnection\)/);
      for (let i = 0; i < 2; i++) assert.equal(typeof (await subscribe(second, i)).message.result, 'number');
      const perKey = await subscribe(second, 9);
      assert.match(perKey.message.error.message, /at most 5 subscriptions per API key \(maxSubscriptionsPerKey\)/);
      // Another key takes the total to its limit of 8.
      const other = JSON.parse((await runCli(['keys', 'create', '--name', 'other', '--json', '--data-dir', dataDir])).stdout).key as string;
      await new Promise((resolve) => setTimeout(resolve, 1_200)); // the gateway reloads keys within a second
      const third = await open(ports[0]!, `?api-key=${other}`);
      const fourth = await open(ports[1]!, `?api-key=${other}`);
      try {
        for (let i = 0; i < 2; i++) assert.equal(typeof (await subscribe(third, i)).message.result, 'number');
        assert.equal(typeof (await subscribe(fourth, 1)).message.result, 'number');
        const total = await subscribe(third, 9);
        assert.match(total.message.error.message, /limit of 8 subscriptions \(maxSubscriptions\)/);
      } finally {
        third.close();
        fourth.close();
      }
    } finally {
      first.close();
      second.close();
    }
  });

  it('a socket with no subscription is closed after idleTimeoutMs; one that does not answer pings after two ping intervals', async () => {
    const idle = await open(ports[0]!);
    const idleClose = await next(idle);
    assert.equal(idleClose.close?.code, 1000);
    assert.match(idleClose.close!.reason, /idle/);
    const silent = await open(ports[1]!, `?api-key=${key}`, { autoPong: false });
    silent.on('error', () => {});
    assert.equal(typeof (await subscribe(silent)).message.result, 'number');
    const started = Date.now();
    const gone = await new Promise<number>((resolve) => silent.once('close', (code) => resolve(code)));
    assert.equal(gone, 1006);
    assert.ok(Date.now() - started < 2_500);
  });

  it('the connections of one address are limited on port + 1 as on the main port', async () => {
    const sockets = await Promise.all(Array.from({ length: 20 }, () => open(ports[1]!).catch((error: Error) => error)));
    try {
      const refused = await open(ports[1]!).then(
        (socket) => {
          socket.close();
          return 'opened';
        },
        (error: Error) => error.message,
      );
      assert.match(refused, /429/);
    } finally {
      const open = sockets.filter((socket): socket is WebSocket => socket instanceof WebSocket);
      await Promise.all(open.map((socket) => new Promise((resolve) => (socket.once('close', resolve), socket.close()))));
    }
    await new Promise((resolve) => setTimeout(resolve, 100)); // the server sees the closes
    await assertAlive('connections past the limit');
  });

  it("a revoked key's sockets are closed within a second", async (t) => {
    const created = JSON.parse((await runCli(['keys', 'create', '--name', 'doomed', '--json', '--data-dir', dataDir])).stdout) as {
      id: string;
      key: string;
    };
    await new Promise((resolve) => setTimeout(resolve, 1_200));
    const socket = await open(ports[1]!, `?api-key=${created.key}`);
    assert.equal(typeof (await call(socket, { jsonrpc: '2.0', id: 1, method: 'slotSubscribe' })).message.result, 'number');
    const closed = new Promise<{ code: number; reason: string; at: number }>((resolve) =>
      socket.on('close', (code, reason) => resolve({ code, reason: reason.toString(), at: Date.now() })),
    );
    const revoked = await runCli(['keys', 'revoke', created.id, '--data-dir', dataDir]);
    assert.equal(revoked.code, 0);
    const revokedAt = Date.now();
    const close = await closed;
    assert.equal(close.code, 1008);
    assert.match(close.reason, /revoked/);
    t.diagnostic(`revocation to close: ${close.at - revokedAt} ms after \`keys revoke\` exited`);
    assert.ok(close.at - revokedAt < 1_500, `closed ${close.at - revokedAt} ms after revocation`);
  });
});
