/**
 * Attacks on lean HTTP (lean-http.ts, lean-request.ts): inputs and sequences where the
 * lane could answer otherwise than node:http would, disagree with it about where a request
 * ends, hold connections or admission places, or stall a shutdown. Each case sends the same
 * bytes on a connection lean HTTP serves and on one node:http serves (handed over by a first
 * request outside lean HTTP's form) and compares, or checks lean HTTP against what node:http
 * is known to do.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createKey, startTestGateway, waitForKey, type TestGateway } from '../helpers/gateway';
import {
  RawConnection,
  request,
  type ConnectionOptions,
  type RawResponse,
  comparable,
  leanHandovers,
  leanServed,
} from '../helpers/raw-http';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const rpc = (id: number, method = 'getHealth') => JSON.stringify({ jsonrpc: '2.0', id, method });
const HEALTH = 'GET /health HTTP/1.1\r\nHost: x\r\n\r\n';

const served = leanServed;
const handovers = leanHandovers;

/** A connection node:http serves: its first request (GET /health) is outside lean HTTP's form. */
async function nodeConnection(port: number, options: ConnectionOptions = {}): Promise<RawConnection> {
  const connection = new RawConnection(port, options);
  connection.write(HEALTH);
  const answer = await connection.next();
  assert.equal(answer?.status, 200, 'the warm-up request is answered');
  return connection;
}

/**
 * Sends `bytes` (then, when `end`, the client's FIN) on a lane connection and on a node:http
 * one; returns both sequences of answers, read until the server ends the connection or
 * `quietMs` passes without a new answer.
 */
async function bothWays(
  port: number,
  bytes: string | Buffer,
  { end = false, quietMs = 1_500 }: { end?: boolean; quietMs?: number } = {},
): Promise<{ lean: ReturnType<typeof comparable>[]; node: ReturnType<typeof comparable>[]; leanClosed: boolean; nodeClosed: boolean }> {
  const lean = new RawConnection(port);
  const viaNode = await nodeConnection(port);
  const collect = async (connection: RawConnection) => {
    connection.write(bytes);
    if (end) connection.socket.end();
    const answers: ReturnType<typeof comparable>[] = [];
    for (;;) {
      let answer: RawResponse | null;
      try {
        answer = await connection.next(quietMs);
      } catch {
        break; // quiet: no further answer
      }
      if (answer === null) break;
      answers.push(comparable(answer));
    }
    return answers;
  };
  try {
    const [a, b] = await Promise.all([collect(lean), collect(viaNode)]);
    return { lean: a, node: b, leanClosed: lean.ended, nodeClosed: viaNode.ended };
  } finally {
    lean.close();
    viaNode.close();
  }
}

/** Each of `variants` sent both ways: where the answers (or whether the connection closed after them) differ. */
async function differencesOf(variants: string[]): Promise<string[]> {
  const differences: string[] = [];
  for (const variant of variants) {
    const { lean, node, leanClosed, nodeClosed } = await bothWays(port, variant, { quietMs: 400 });
    const show = (answers: ReturnType<typeof comparable>[], closed: boolean) =>
      `${answers.map((a) => `${a?.status} ${a?.body.slice(0, 90)}`).join(' | ')}${closed ? ' (closed)' : ''}`;
    if (JSON.stringify(lean) !== JSON.stringify(node) || leanClosed !== nodeClosed) {
      differences.push(
        `${JSON.stringify(variant.split('\r\n\r\n')[0]!.split('\r\n').slice(4).join(' / '))}: lane ${show(lean, leanClosed)}; node:http ${show(node, nodeClosed)}`,
      );
    }
  }
  return differences;
}

let gw: TestGateway;
let port: number;
before(async () => {
  gw = await startTestGateway({ idleTimeoutMs: 3_000 });
  port = Number(new URL(gw.url).port);
});
after(async () => gw?.close());

describe('lean HTTP attacks: the same bytes answered the same way by lean HTTP and by node:http', () => {
  it('a request lean HTTP reads whole, split at every byte boundary, on one connection', async () => {
    const lean = new RawConnection(port);
    await lean.ready();
    try {
      const before = await served();
      const handedBefore = (await handovers('incomplete')) + (await handovers('form'));
      const whole = request('/', gw.key, rpc(0));
      for (let at = 1; at < whole.length; at++) {
        lean.write(whole.slice(0, at));
        await sleep(2);
        lean.write(whole.slice(at));
        const answer = await lean.next();
        assert.equal(answer?.status, 200, `split at ${at}`);
        assert.equal(JSON.parse(answer.body).id, 0);
      }
      assert.equal((await served()) - before, whole.length - 1, 'every one served by lean HTTP');
      assert.equal((await handovers('incomplete')) + (await handovers('form')), handedBefore, 'none handed over');
      assert.equal(lean.rest(), '');
    } finally {
      lean.close();
    }
  });

  it('Content-Length with leading zeros and whitespace, header names in capitals, Connection, Host, request-line variants', async () => {
    const body = rpc(3);
    const length = `Content-Length: ${body.length}`;
    const variants = [
      request('/', gw.key, body).replace(length, `Content-Length: 000${body.length}`),
      request('/', gw.key, body).replace(length, `Content-Length:\t${body.length}`),
      request('/', gw.key, body).replace(length, `Content-Length:  ${body.length}`),
      request('/', gw.key, body).replace(length, `Content-Length: ${body.length} `),
      request('/', gw.key, body).replace(length, `CONTENT-LENGTH:${body.length}`),
      request('/', gw.key, body).replace('x-api-key', 'X-API-KEY').replace('Host', 'HOST'),
      request('/', gw.key, body, ['Content-Encoding:  identity ']),
      request('/', gw.key, body, ['Connection: Keep-Alive']),
      request('/', gw.key, body, ['connection: CLOSE']),
      request('/', gw.key, body, ['Connection: close', 'Connection: keep-alive']),
      request('/', gw.key, body, ['Connection: keep-alive', 'Connection: close']),
      request('/', gw.key, body, ['Connection: close, keep-alive']),
      request('/', gw.key, body, ['Connection: keep-alive', 'x-request-id: my.own-id:1']),
      request('/', gw.key, body, ['x-request-id: has space']),
      request('/', gw.key, body, ['Idempotency-Key: abc']),
      request('/', gw.key, body, ['Host: again']),
      request('/', gw.key, body).replace('Host: 127.0.0.1\r\n', ''),
      request('/', gw.key, body).replace('Host: 127.0.0.1', 'Host:'),
      request('/', gw.key, body).replace('Content-Type: application/json', 'Content-Type:'),
      request('/', gw.key, body).replace('x-api-key: ', 'x-api-key:    '),
      request('/', gw.key, body).replace('POST / HTTP/1.1', 'POST / HTTP/1.0'),
      request('/', gw.key, body).replace('POST / HTTP/1.1', 'post / HTTP/1.1'),
      request('/', gw.key, body).replace('POST / HTTP/1.1', 'POST http://127.0.0.1/ HTTP/1.1'),
      request('/', gw.key, body).replace('POST / HTTP/1.1', 'POST /?x=1 HTTP/1.1'),
      request('/', gw.key, body).replace('POST / HTTP/1.1', 'POST //submit-batch HTTP/1.1'),
    ];
    assert.deepEqual(await differencesOf(variants), []);
  });

  it("Content-Length followed by a tab, refused by Node 20's parser: lean HTTP leaves it to node:http", async () => {
    const body = rpc(3);
    const variants = [request('/', gw.key, body).replace(`Content-Length: ${body.length}`, `Content-Length: ${body.length}\t`)];
    assert.deepEqual(await differencesOf(variants), []);
  });

  it('a Content-Encoding other than one lower-case identity (capitals: served; twice: refused as compressed) is left to node:http, which answers the same', async () => {
    const body = rpc(3);
    const variants = [
      request('/', gw.key, body, ['Content-Encoding: IDENTITY']),
      request('/', gw.key, body, ['Content-Encoding: Identity']),
      request('/', gw.key, body, ['Content-Encoding: identity', 'Content-Encoding: identity']),
    ];
    assert.deepEqual(await differencesOf(variants), []);
  });

  it("a request cut short by the client's FIN is answered 400, as node:http answers it, alone or after a whole one", async () => {
    const whole = request('/', gw.key, rpc(4));
    const cut = [whole.slice(0, 20), whole.slice(0, whole.indexOf('\r\n\r\n') + 4), whole.slice(0, whole.length - 2)];
    // After a whole request too: the first answered, the one cut short refused.
    for (const part of [...cut, whole + whole.slice(0, whole.length - 2)]) {
      const { lean, node, leanClosed, nodeClosed } = await bothWays(port, part, { end: true, quietMs: 3_000 });
      assert.deepEqual(lean, node, JSON.stringify(part));
      assert.equal(leanClosed, true);
      assert.equal(nodeClosed, true);
    }
  });

  it('pipelined requests then the client half-closes: every request answered, then the connection ended', async () => {
    const cases = [
      // Both in lean HTTP's form.
      request('/', gw.key, rpc(1)) + request('/', gw.key, rpc(2)),
      // A handover after a lane request, the client's side already ended.
      request('/', gw.key, rpc(1)) + HEALTH,
      request('/', gw.key, rpc(1)) + request('/', 'slw_unknown', rpc(2)),
      request('/', gw.key, rpc(1)) + request('/', gw.key, rpc(2), ['x-note: caf\xe9']),
    ];
    for (const bytes of cases) {
      const { lean, node, leanClosed, nodeClosed } = await bothWays(port, bytes, { end: true, quietMs: 3_000 });
      assert.deepEqual(lean, node, JSON.stringify(bytes));
      assert.equal(lean.length, 2, JSON.stringify(bytes));
      assert.equal(leanClosed, true);
      assert.equal(nodeClosed, true);
    }
  });

  it("a slow request, then one node:http must serve, then the client's FIN: both answered, on lean HTTP and on node:http", async () => {
    // getLandingReport reads the journal: its answer comes after the FIN has been read. Each
    // case gets a key of its own (a key's landing report is shared for 2 s, then answered at once).
    const tails = [HEALTH, request('/', 'slw_unknown', rpc(2)), request('/', gw.key, rpc(2), ['x-note: caf\xe9'])];
    const results: string[] = [];
    let n = 0;
    for (const tail of tails) {
      for (const path of ['lane', 'node:http']) {
        const key = await createKey(gw.dataDir, `half-close-${n++}`, false);
        await waitForKey(gw.url, key);
        const connection = path === 'lane' ? new RawConnection(port) : await nodeConnection(port);
        await connection.ready();
        connection.socket.end(request('/', key, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'getLandingReport', params: [] })) + tail);
        const answers = await connection.all(5_000);
        results.push(`${path}: ${answers.map((a) => a.status).join(',')}`);
        connection.close();
      }
    }
    assert.deepEqual(results, [
      'lane: 200,200',
      'node:http: 200,200',
      'lane: 200,401',
      'node:http: 200,401',
      'lane: 200,200',
      'node:http: 200,200',
    ]);
  });

  it('a request after a Connection: close request on the same connection is not served: one answer, then the end', async () => {
    // (node:http answers this whole connection 400 before the first answer: see the report.)
    const lean = new RawConnection(port);
    try {
      lean.write(request('/', gw.key, rpc(1), ['Connection: close']) + request('/', gw.key, rpc(2)));
      const answers = await lean.all();
      assert.deepEqual(
        answers.map((a) => [a.status, JSON.parse(a.body).id]),
        [[200, 1]],
      );
    } finally {
      lean.close();
    }
  });

  it('a head of exactly 8 KB and one byte more; a body of exactly 64 KB and one byte more', async () => {
    const base = request('/', gw.key, rpc(5), ['x-pad: ']);
    const headLength = base.indexOf('\r\n\r\n') + 4;
    const padded = (extra: number) => base.replace('x-pad: ', `x-pad: ${'p'.repeat(8192 - headLength + extra)}`);
    assert.equal(padded(0).indexOf('\r\n\r\n') + 4, 8192);
    const json = (size: number) => {
      const start = '{"jsonrpc":"2.0","id":6,"method":"getHealth","pad":"';
      return `${start}${'q'.repeat(size - start.length - 2)}"}`;
    };
    assert.equal(json(65_536).length, 65_536);
    const beforeServed = await served();
    for (const bytes of [padded(0), padded(1), request('/', gw.key, json(65_536)), request('/', gw.key, json(65_537))]) {
      const { lean, node } = await bothWays(port, bytes, { quietMs: 500 });
      assert.deepEqual(lean, node, `${bytes.length} bytes`);
      assert.equal(lean.length, 1);
    }
    assert.equal((await served()) - beforeServed, 2, 'lean HTTP served the two within its limits');
  });

  it('a WebSocket upgrade after a lane request on the same connection: the answer, then 101', async () => {
    // (node:http, served the same pipelined pair, writes the 101 before the first answer: see the report.)
    const upgrade =
      `GET /?api-key=${gw.key} HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
      'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n';
    const connection = new RawConnection(port);
    try {
      connection.write(request('/', gw.key, rpc(1)) + upgrade);
      assert.equal((await connection.next())?.status, 200);
      const switching = await connection.next();
      assert.equal(switching?.status, 101);
      assert.ok(switching.headers.some(([name, value]) => name === 'sec-websocket-accept' && value === 's3pPLMBiTxaQ9kYGzzhZRbK+xOo='));
    } finally {
      connection.close();
    }
  });

  it('a burst of 300 pipelined requests in one write, with one outside the form in the middle: all answered in order', async () => {
    const lean = new RawConnection(port);
    try {
      let bytes = '';
      for (let id = 1; id <= 300; id++) bytes += request('/', gw.key, rpc(id), id === 150 ? ['x-note: caf\xe9'] : []);
      lean.write(bytes);
      for (let id = 1; id <= 300; id++) {
        const answer = await lean.next();
        assert.equal(answer?.status, 200);
        assert.equal(JSON.parse(answer.body).id, id);
      }
    } finally {
      lean.close();
    }
  });
});

describe('lean HTTP attacks: connections, admission places and shutdown', () => {
  it('a Connection: close answer ends the connection even when the client keeps its own side open, as node:http does', async () => {
    // One connection per address: a connection the server keeps open refuses the next one 429.
    const own = await startTestGateway({ maxConnectionsPerClient: 1, idleTimeoutMs: 60_000 });
    const ownPort = Number(new URL(own.url).port);
    const results: string[] = [];
    try {
      for (const path of ['node:http', 'lane']) {
        // An address of its own (fetch's pooled connections come from 127.0.0.1).
        const localAddress = path === 'node:http' ? '127.0.0.2' : '127.0.0.3';
        const first =
          path === 'node:http'
            ? await nodeConnection(ownPort, { allowHalfOpen: true, localAddress })
            : new RawConnection(ownPort, { allowHalfOpen: true, localAddress });
        first.write(request('/', own.key, rpc(1), ['Connection: close']));
        assert.equal((await first.next())?.status, 200);
        assert.equal(await first.closed(2_000), true, `${path}: the server ended its side`);
        await sleep(300);
        const second = new RawConnection(ownPort, { localAddress });
        second.write(request('/', own.key, rpc(2)));
        results.push(`${path}: ${(await second.next())?.status}`);
        second.close();
        first.close();
        await sleep(200);
      }
    } finally {
      await own.close();
    }
    assert.deepEqual(results, ['node:http: 200', 'lane: 200'], 'the first connection was let go of');
  });

  it('shutting down does not wait for a client that keeps its side open after a Connection: close answer', async () => {
    const own = await startTestGateway({ idleTimeoutMs: 60_000 });
    const lean = new RawConnection(Number(new URL(own.url).port), { allowHalfOpen: true });
    lean.write(request('/', own.key, rpc(1), ['Connection: close']));
    assert.equal((await lean.next())?.status, 200);
    const closing = own.close();
    const done = await Promise.race([closing.then(() => true), sleep(5_000).then(() => false)]);
    lean.close();
    await closing;
    assert.equal(done, true, 'closed within 5 s');
  });

  it('shutting down with lane connections in every state: idle, mid-body, mid-pipeline, half-closed, fresh', async () => {
    const own = await startTestGateway({ idleTimeoutMs: 60_000 });
    const ownPort = Number(new URL(own.url).port);
    const idle = new RawConnection(ownPort);
    idle.write(request('/', own.key, rpc(1)));
    assert.equal((await idle.next())?.status, 200);
    const halfClosed = new RawConnection(ownPort, { allowHalfOpen: true });
    halfClosed.write(request('/', own.key, rpc(1)));
    assert.equal((await halfClosed.next())?.status, 200);
    halfClosed.socket.end();
    const fresh = new RawConnection(ownPort);
    await fresh.ready();
    const whole = request('/', own.key, rpc(2));
    const midBody = new RawConnection(ownPort);
    midBody.write(whole.slice(0, whole.length - 3));
    const pipelined = new RawConnection(ownPort);
    let burst = '';
    for (let id = 1; id <= 40; id++) burst += request('/', own.key, rpc(id));
    await sleep(100);
    pipelined.write(burst);
    const first = await pipelined.next();
    const started = Date.now();
    const closing = own.close();
    midBody.write(whole.slice(whole.length - 3));
    const statuses = async (c: RawConnection) => (await c.all(8_000)).map((a) => a.status);
    const answers = {
      pipelined: [first, ...(await pipelined.all(8_000))].map((a) => JSON.parse(a!.body).id),
      midBody: await statuses(midBody),
      idle: await statuses(idle),
      fresh: await statuses(fresh),
      halfClosed: await statuses(halfClosed),
    };
    const done = await Promise.race([closing.then(() => true), sleep(10_000).then(() => false)]);
    const ms = Date.now() - started;
    for (const c of [idle, fresh, midBody, pipelined, halfClosed]) c.close();
    await closing;
    assert.equal(done, true, `closed in ${ms} ms`);
    assert.deepEqual(
      answers.pipelined,
      answers.pipelined.map((_, i) => i + 1),
      'pipelined answers in order, then the end',
    );
    assert.deepEqual(answers.midBody, [200], 'a request whose head had come is served');
    assert.deepEqual(answers.idle, []);
    assert.deepEqual(answers.fresh, []);
    assert.deepEqual(answers.halfClosed, []);
  });

  it('a request whose head was not whole when shutdown began is refused 503, as node:http refuses it', async () => {
    const own = await startTestGateway({ idleTimeoutMs: 60_000 });
    const ownPort = Number(new URL(own.url).port);
    const whole = request('/', own.key, rpc(2));
    const lean = new RawConnection(ownPort);
    const viaNode = await nodeConnection(ownPort);
    lean.write(whole.slice(0, 30));
    viaNode.write(whole.slice(0, 30));
    await sleep(100);
    const closing = own.close();
    lean.write(whole.slice(30));
    viaNode.write(whole.slice(30));
    const [a, b] = await Promise.all([lean.all(8_000), viaNode.all(8_000)]);
    lean.close();
    viaNode.close();
    await closing;
    assert.deepEqual(a.map(comparable), b.map(comparable));
  });

  it('admission places are given back whatever happens to a lane request (maxInFlightRequests 2, maxInFlightPerKey 1)', async () => {
    const own = await startTestGateway({ maxInFlightRequests: 2, maxInFlightPerKey: 1, idleTimeoutMs: 60_000 });
    const ownPort = Number(new URL(own.url).port);
    try {
      // Connections cut while their request is served.
      for (let i = 0; i < 10; i++) {
        const cut = new RawConnection(ownPort);
        cut.write(request('/', own.key, rpc(i)));
        await sleep(i % 2 === 0 ? 0 : 1);
        cut.close();
      }
      // Pipelined, then half-closed; a refusal handed over after a lane request; a handover mid-pipeline.
      const shapes = [
        request('/', own.key, rpc(1)) + request('/', own.key, rpc(2)) + request('/', own.key, rpc(3)),
        request('/', own.key, rpc(1)) + request('/', 'slw_unknown', rpc(2)),
        request('/', own.key, rpc(1)) + HEALTH + request('/', own.key, rpc(3)),
        request('/', own.key, rpc(1)) + request('/', own.key, rpc(2)).slice(0, 40),
      ];
      for (const shape of shapes) {
        const c = new RawConnection(ownPort);
        c.socket.end(shape);
        await c.all(5_000).catch(() => []);
        c.close();
      }
      // Several connections of one key at once: some refused (429) by node:http, the rest served.
      const many = Array.from({ length: 6 }, () => new RawConnection(ownPort));
      many.forEach((c, i) => c.write(request('/', own.key, rpc(i))));
      const statuses = (await Promise.all(many.map((c) => c.next()))).map((a) => a?.status);
      assert.ok(
        statuses.every((s) => s === 200 || s === 429 || s === 503),
        String(statuses),
      );
      many.forEach((c) => c.close());
      await sleep(300);
      // Every place is free again: requests one after another are admitted, on new connections and on one.
      const one = new RawConnection(ownPort);
      for (let i = 0; i < 5; i++) {
        const c = new RawConnection(ownPort);
        c.write(request('/', own.key, rpc(i)));
        assert.equal((await c.next())?.status, 200, `new connection ${i}`);
        c.close();
        one.write(request('/submit-batch', own.key, '{}'));
        assert.notEqual((await one.next())?.status, 429);
      }
      one.close();
    } finally {
      await own.close();
    }
  });

  it('pipelined requests of one key with maxInFlightPerKey 1: lean HTTP serves them one after another, never two at once', async () => {
    // (node:http admits pipelined requests as they are parsed, so it refuses the second 429: see the report.)
    const own = await startTestGateway({ maxInFlightPerKey: 1, idleTimeoutMs: 60_000 });
    const lean = new RawConnection(Number(new URL(own.url).port));
    try {
      lean.write(request('/', own.key, rpc(1)) + request('/', own.key, rpc(2)) + request('/', own.key, rpc(3)));
      const answers = [await lean.next(), await lean.next(), await lean.next()];
      assert.deepEqual(
        answers.map((a) => [a?.status, JSON.parse(a!.body).id]),
        [
          [200, 1],
          [200, 2],
          [200, 3],
        ],
      );
    } finally {
      lean.close();
      await own.close();
    }
  });

  it('a slowloris on lean HTTP is cut off by node:http (408) within the headers time-out and lean HTTP wait', async () => {
    const own = await startTestGateway({ headersTimeoutMs: 1_000, httpRequestTimeoutMs: 2_000, idleTimeoutMs: 60_000 });
    const ownPort = Number(new URL(own.url).port);
    try {
      const whole = request('/', own.key, rpc(1));
      const results = await Promise.all(
        ['lane', 'node:http'].map(async (path) => {
          const c = path === 'lane' ? new RawConnection(ownPort) : await nodeConnection(ownPort);
          const started = Date.now();
          let at = 0;
          const drip = setInterval(() => {
            if (at < whole.length && !c.ended) c.write(whole[at++]!);
          }, 100);
          try {
            const answer = await c.next(6_000);
            return { path, status: answer?.status, ms: Date.now() - started, closed: await c.closed(2_000) };
          } finally {
            clearInterval(drip);
            c.close();
          }
        }),
      );
      for (const r of results) {
        assert.equal(r.status, 408, `${r.path}`);
        assert.equal(r.closed, true);
        assert.ok(r.ms < 3_000, `${r.path}: cut off after ${r.ms} ms`);
      }
    } finally {
      await own.close();
    }
  });
});
