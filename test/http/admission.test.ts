/**
 * Admission on arrival: connections per client address (429), requests in progress and a
 * late event loop (503 + Retry-After), /health answered throughout, and recovery by itself.
 */
import assert from 'node:assert/strict';
import type { IncomingMessage, ServerResponse } from 'node:http';
import net from 'node:net';
import { after, before, describe, it } from 'node:test';
import { Keypair } from '@solana/web3.js';
import { Client } from 'undici';
import { Admission } from '../../src/http/admission';
import { startCluster, type Cluster } from '../helpers/cluster';
import { startTestGateway, type TestGateway } from '../helpers/gateway';
import { connect, fundedKeypair, transferTx } from '../helpers/solana';
import { until } from '../helpers/until';

const call = async (client: Client, key: string, path = '/', body: unknown = { jsonrpc: '2.0', id: 1, method: 'getSlot' }) => {
  const response = await client.request({
    path,
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key },
    body: JSON.stringify(body),
  });
  return { status: response.statusCode, headers: response.headers, body: (await response.body.json()) as any };
};

/** One request on a connection of its own (from `localAddress`), closed afterwards. */
const callOnce = async (url: string, key: string, path?: string, body?: unknown, localAddress?: string) => {
  const client = new Client(url, localAddress === undefined ? {} : { localAddress });
  try {
    return await call(client, key, path, body);
  } finally {
    await client.destroy();
  }
};

describe('connections per client address', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startTestGateway({ maxConnectionsPerClient: 2 });
  });
  after(() => gw.close());

  it('past the limit a connection is answered 429 and closed; other addresses are served; a closed connection frees its place', async () => {
    // Addresses of this test's own: the helpers' fetch keeps connections from 127.0.0.1 open.
    const [a, b, extra, elsewhere] = ['127.0.0.3', '127.0.0.3', '127.0.0.3', '127.0.0.4'].map(
      (localAddress) => new Client(gw.url, { localAddress }),
    );
    try {
      assert.equal((await call(a!, gw.key)).status, 200);
      assert.equal((await call(b!, gw.key)).status, 200);
      const refused = await call(extra!, gw.key);
      assert.equal(refused.status, 429);
      assert.equal(refused.headers.connection, 'close');
      assert.equal(refused.headers['retry-after'], '1');
      assert.equal(refused.body.error.code, -32096);
      assert.match(
        refused.body.error.message,
        /^too many connections from 127\.0\.0\.3: at most 2 at once \(maxConnectionsPerClient\); reuse connections/,
      );
      const batch = await callOnce(gw.url, gw.key, '/submit-batch', { params: { transactions: [] } }, '127.0.0.3');
      assert.deepEqual([batch.status, batch.body.code], [429, -32096], "in /submit-batch's own shape");
      assert.equal((await call(elsewhere!, gw.key)).status, 200, 'another address has its own count');
      // A health check or a metrics scrape from the flooded address is answered, and its connection closed.
      for (const path of ['/health', '/metrics']) {
        const operator = new Client(gw.url, { localAddress: '127.0.0.3' });
        try {
          const answer = await operator.request({ path, method: 'GET' });
          const text = await answer.body.text();
          assert.equal(answer.statusCode, 200, `${path}: ${text}`);
          assert.equal(answer.headers.connection, 'close', path);
        } finally {
          await operator.destroy();
        }
      }
      assert.equal((await call(a!, gw.key)).status, 200, 'the connections within the limit are still served');
      await a!.close();
      await until(
        async () => (await callOnce(gw.url, gw.key, '/', undefined, '127.0.0.3')).status,
        (status) => status === 200,
        2_000,
      );
    } finally {
      await Promise.all([a, b, extra, elsewhere].map((c) => c!.destroy()));
    }
  });
});

describe('overload', () => {
  let cluster: Cluster;
  let gw: TestGateway;
  before(async () => {
    cluster = await startCluster(2);
    gw = await startTestGateway(
      { maxInFlightRequests: 3 },
      {
        upstreams: { slow: { type: 'rpc', urls: [cluster.nodes[0]!.url] }, reads: { type: 'rpc', urls: [cluster.nodes[1]!.url] } },
        routes: { sendTransaction: ['slow'], submitBatch: ['slow'], reads: 'reads' },
        requestTimeoutMs: 1_500,
      },
    );
  });
  after(async () => {
    await gw.close();
    await cluster.close();
  });

  it('more requests in progress than maxInFlightRequests: new ones get 503 + Retry-After at once, /health still answers, and it recovers', async () => {
    const connection = connect(gw.url, gw.key);
    const alice = await fundedKeypair(connection);
    const txs = await Promise.all([0, 1, 2, 3].map((i) => transferTx(connection, alice, Keypair.generate().publicKey, 1_000_000 + i)));
    const send = (tx: string) =>
      callOnce(gw.url, gw.key, '/', {
        jsonrpc: '2.0',
        id: 1,
        method: 'sendTransaction',
        params: [tx, { encoding: 'base64', skipPreflight: true }],
      });
    cluster.nodes[0]!.fault('hang');
    const stuck = txs.slice(0, 3).map(send);
    await new Promise((resolve) => setTimeout(resolve, 300)); // they have arrived and wait on the hanging node

    const started = Date.now();
    const shed = await callOnce(gw.url, gw.key);
    assert.ok(Date.now() - started < 500, 'refused at once, not queued');
    assert.equal(shed.status, 503);
    assert.equal(shed.headers['retry-after'], '1');
    assert.deepEqual(shed.body.error.code, -32095);
    assert.match(
      shed.body.error.message,
      /^Slipway is over capacity \(3 requests in progress, maxInFlightRequests\): nothing was submitted; retry after a second$/,
    );
    const batch = await callOnce(gw.url, gw.key, '/submit-batch', { params: { transactions: [txs[3]] } });
    assert.deepEqual([batch.status, batch.body.code], [503, -32095]);
    const health = await fetch(`${gw.url}/health`);
    assert.equal(health.status, 200, '/health answers while the gateway sheds');
    const metrics = await fetch(`${gw.url}/metrics`);
    assert.equal(metrics.status, 200, '/metrics too');
    assert.match(await metrics.text(), /slipway_shed_requests_total\{reason="in_flight"\} [1-9]/);

    for (const answer of await Promise.all(stuck)) assert.equal(answer.body.error.code, -32091, 'the hanging upstream timed out');
    cluster.nodes[0]!.fault('none');
    const served = await send(txs[3]!);
    assert.equal(
      typeof served.body.result,
      'string',
      `served again once the requests in progress finished: ${JSON.stringify(served.body)}`,
    );
  });
});

describe('pipelined requests on a connection the client closes', () => {
  let cluster: Cluster;
  let gw: TestGateway;
  before(async () => {
    cluster = await startCluster(2);
    gw = await startTestGateway(
      { maxInFlightRequests: 6, maxInFlightPerKey: 3 },
      {
        upstreams: { slow: { type: 'rpc', urls: [cluster.nodes[0]!.url] }, reads: { type: 'rpc', urls: [cluster.nodes[1]!.url] } },
        routes: { sendTransaction: ['slow'], submitBatch: ['slow'], reads: 'reads' },
        requestTimeoutMs: 500,
      },
    );
  });
  after(async () => {
    await gw.close();
    await cluster.close();
  });

  it("give back their places in flight (the key's and the gateway's), though their answers were queued behind a slow one and never written", async () => {
    const connection = connect(gw.url, gw.key);
    const alice = await fundedKeypair(connection);
    const { port } = new URL(gw.url);
    const request = (body: unknown) => {
      const text = JSON.stringify(body);
      return `POST / HTTP/1.1\r\nHost: x\r\nx-api-key: ${gw.key}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(text)}\r\n\r\n${text}`;
    };
    cluster.nodes[0]!.fault('hang');
    for (let round = 0; round < 3; round++) {
      // A send that waits on the hanging node, then two reads whose answers queue behind it;
      // the client goes away before any answer. Three rounds: past both limits if any leaked.
      const tx = await transferTx(connection, alice, Keypair.generate().publicKey, 1_000_000 + round);
      const socket = net.connect(Number(port), '127.0.0.1');
      await new Promise((resolve) => socket.once('connect', resolve));
      socket.write(
        request({ jsonrpc: '2.0', id: 1, method: 'sendTransaction', params: [tx, { encoding: 'base64', skipPreflight: true }] }) +
          request({ jsonrpc: '2.0', id: 2, method: 'getSlot' }) +
          request({ jsonrpc: '2.0', id: 3, method: 'getSlot' }),
      );
      await new Promise((resolve) => setTimeout(resolve, 200)); // all three are in progress
      socket.destroy();
      await new Promise((resolve) => setTimeout(resolve, 700)); // the send has timed out
    }
    cluster.nodes[0]!.fault('none');
    const answers = await Promise.all([0, 1, 2].map(() => callOnce(gw.url, gw.key)));
    assert.deepEqual(
      answers.map((a) => [a.status, typeof a.body.result]),
      [
        [200, 'number'],
        [200, 'number'],
        [200, 'number'],
      ],
      JSON.stringify(answers.map((a) => a.body)),
    );
  });
});

describe('a late event loop', () => {
  const request = { method: 'POST', url: '/', socket: {} } as IncomingMessage;
  const response = () =>
    ({ once: () => {}, off: () => {}, req: { socket: { destroyed: false, once: () => {} } } }) as unknown as ServerResponse;
  const block = (ms: number) => {
    const end = performance.now() + ms;
    while (performance.now() < end);
  };
  const yieldTurn = () => new Promise((resolve) => setTimeout(resolve, 0));

  it('sheds while the loop is late sample after sample, not for one long task, and admits again once it is not', async () => {
    const admission = new Admission({ maxConnectionsPerClient: 0, maxInFlight: 0, maxInFlightPerKey: 0, maxEventLoopDelayMs: 40 });
    try {
      block(200); // one long task
      await yieldTurn();
      await new Promise((resolve) => setTimeout(resolve, 30));
      assert.equal(admission.admit(request, response()), null, 'one late sample is not overload');
      for (let i = 0; i < 12; i++) {
        block(80);
        await yieldTurn();
      }
      const refused = admission.admit(request, response());
      assert.equal(refused?.error.kind, 'SERVICE_UNAVAILABLE');
      assert.match(refused!.error.message, /^Slipway is over capacity \(its event loop runs \d+ ms late, maxEventLoopDelayMs 40\)/);
      assert.equal(
        admission.admit({ ...request, method: 'GET', url: '/health' } as IncomingMessage, response()),
        null,
        '/health is admitted',
      );
      await new Promise((resolve) => setTimeout(resolve, 200));
      assert.equal(admission.admit(request, response()), null, 'admitted again');
    } finally {
      admission.close();
    }
  });
});
