/**
 * Jito's tip floor on the gateway: `GET /api/v1/bundles/tip_floor` and the tip stream, fed
 * with the tips of the bundles the gateway saw land on the embedded ledger, in Jito's shape
 * and in SOL; keyed, counted as reads, and refusing what it does not serve.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Keypair, PublicKey, SystemProgram, Transaction, type Connection } from '@solana/web3.js';
import WebSocket from 'ws';
import { resolveConfig } from '../../src/config/config';
import { JITO_TIP_ACCOUNTS } from '../../src/core/jito-tip-accounts';
import { openStore } from '../../src/stores/database/open-store';
import { KEY_STORE } from '../../src/stores/store-adapters';
import { startTestGateway, waitForKey, type TestGateway } from '../helpers/gateway';
import { rpc } from '../helpers/rpc';
import { connect, fundedKeypair } from '../helpers/solana';
import { until } from '../helpers/until';

const FIELDS = [
  'time',
  'landed_tips_25th_percentile',
  'landed_tips_50th_percentile',
  'landed_tips_75th_percentile',
  'landed_tips_95th_percentile',
  'landed_tips_99th_percentile',
  'ema_landed_tips_50th_percentile',
];

let gw: TestGateway;
let connection: Connection;
let payer: Keypair;
before(async () => {
  gw = await startTestGateway();
  connection = connect(gw.url, gw.key);
  payer = await fundedKeypair(connection);
});
after(() => gw.close());

const tipFloor = (headers: Record<string, string> = { 'x-api-key': gw.key }, query = '', method = 'GET') =>
  fetch(`${gw.url}/api/v1/bundles/tip_floor${query}`, { method, headers });
const streamUrl = (query = `?api-key=${gw.key}`) => `${gw.url.replace('http', 'ws')}/api/v1/bundles/tip_stream${query}`;

/** A transfer that also tips each of `tips` (lamports) to one of Jito's tip accounts. */
async function tippedTx(tips: readonly number[]): Promise<string> {
  const { blockhash } = await connection.getLatestBlockhash();
  const tx = new Transaction({ feePayer: payer.publicKey, recentBlockhash: blockhash }).add(
    SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: Keypair.generate().publicKey, lamports: 1_000_000 }),
  );
  tips.forEach((lamports, i) =>
    tx.add(SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: new PublicKey(JITO_TIP_ACCOUNTS[i]!), lamports })),
  );
  tx.sign(payer);
  return tx.serialize().toString('base64');
}

/** Sends a bundle through the gateway and has the tracker see it land. */
async function landBundle(txs: string[]): Promise<void> {
  const answer = await rpc(gw.url, gw.key, 'sendBundle', [txs, { encoding: 'base64' }]);
  assert.match(answer.body.result, /^[0-9a-f]{64}$/, JSON.stringify(answer.body));
  await gw.app.tracker.runRound();
}

async function createKey(name: string, readsPerSecond: number | null): Promise<string> {
  const store = await openStore(resolveConfig({ dataDir: gw.dataDir }, {}), KEY_STORE);
  try {
    const { key, record } = await store.create({ name, bundle: false, readsPerSecond });
    keyIds.set(key, record.id);
    return key;
  } finally {
    await store.close();
  }
}
const keyIds = new Map<string, string>();

async function revokeKey(key: string): Promise<void> {
  const store = await openStore(resolveConfig({ dataDir: gw.dataDir }, {}), KEY_STORE);
  try {
    assert.equal(await store.revoke(keyIds.get(key)!), true);
  } finally {
    await store.close();
  }
}

/** The next message a socket receives, as JSON. */
const nextMessage = (socket: WebSocket, timeoutMs = 5_000): Promise<unknown> =>
  new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no message within ${timeoutMs} ms`)), timeoutMs);
    socket.once('message', (data) => {
      clearTimeout(timer);
      resolve(JSON.parse(data.toString()));
    });
  });
const opened = (socket: WebSocket) =>
  new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('error', reject);
  });
/** The status and body of a refused handshake. */
const refusedHandshake = (socket: WebSocket) =>
  new Promise<{ status: number; body: { code: number; message: string } }>((resolve, reject) => {
    socket.once('open', () => reject(new Error('the handshake was let in')));
    socket.once('unexpected-response', (_request, response) => {
      let text = '';
      response.on('data', (chunk: Buffer) => (text += chunk.toString()));
      response.on('end', () => resolve({ status: response.statusCode!, body: JSON.parse(text) }));
    });
  });
const closed = (socket: WebSocket, timeoutMs = 5_000) =>
  new Promise<{ code: number; reason: string }>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`not closed within ${timeoutMs} ms`)), timeoutMs);
    socket.once('close', (code, reason) => {
      clearTimeout(timer);
      resolve({ code, reason: reason.toString() });
    });
  });

describe('GET /api/v1/bundles/tip_floor', () => {
  it('answers an empty array while no bundle has landed', async () => {
    const response = await tipFloor();
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /^application\/json/);
    assert.deepEqual(await response.json(), []);
  });

  it("answers the landed bundles' tips in Jito's shape and in SOL: a bundle's tip is what all its transactions send to the tip accounts", async () => {
    // 3,000 + 4,000 lamports in one transaction, 2,000 in the other: a tip of 9,000.
    await landBundle([await tippedTx([3_000, 4_000]), await tippedTx([2_000])]);
    const one = (await (await tipFloor()).json()) as Record<string, unknown>[];
    assert.equal(one.length, 1);
    assert.deepEqual(Object.keys(one[0]!), FIELDS);
    assert.match(one[0]!.time as string, /^\d{4}-\d\d-\d\dT\d\d:\d\d:00Z$/);
    for (const field of FIELDS.slice(1)) assert.equal(one[0]![field], 0.000009, field);

    await landBundle([await tippedTx([27_000])]);
    const [two] = (await (await tipFloor()).json()) as Record<string, number>[];
    // The median of 9,000 and 27,000 lamports.
    assert.equal(two!.landed_tips_50th_percentile, 0.000018);
    assert.ok(two!.landed_tips_25th_percentile! >= 0.000009 && two!.landed_tips_25th_percentile! < 0.000018);
    assert.ok(two!.landed_tips_99th_percentile! > 0.000026 && two!.landed_tips_99th_percentile! <= 0.000027);
  });

  it('does not count a bundle that tips nothing', async () => {
    const before = await (await tipFloor()).json();
    await landBundle([await tippedTx([])]);
    assert.deepEqual(await (await tipFloor()).json(), before);
  });

  it("takes the key as every path does (x-api-key, ?api-key=, Jito's x-jito-auth) and refuses a request without one", async () => {
    for (const [headers, query] of [
      [{}, `?api-key=${gw.key}`],
      [{ 'x-jito-auth': gw.key }, ''],
      [{}, `?uuid=${gw.key}`],
    ] as const)
      assert.equal((await tipFloor(headers, query)).status, 200, JSON.stringify(headers) + query);
    const missing = await tipFloor({});
    assert.equal(missing.status, 401);
    assert.deepEqual(await missing.json(), { code: -32098, message: 'missing API key: send it in the x-api-key header' });
    const wrong = await tipFloor({ 'x-api-key': 'sk_nope' });
    assert.equal(wrong.status, 401);
    assert.equal(((await wrong.json()) as { code: number }).code, -32098);
  });

  it('answers HEAD as GET without a body, and refuses other methods with 405 naming GET', async () => {
    const head = await tipFloor(undefined, '', 'HEAD');
    assert.equal(head.status, 200);
    assert.equal(await head.text(), '');
    for (const method of ['POST', 'PUT', 'DELETE', 'PATCH']) {
      const answer = await tipFloor(undefined, '', method);
      assert.equal(answer.status, 405, method);
      assert.equal(answer.headers.get('allow'), 'GET, HEAD');
      assert.deepEqual(await answer.json(), {
        code: -32600,
        message: `${method} is not served on /api/v1/bundles/tip_floor: read the tip floor with GET`,
      });
    }
  });

  it('refuses a query parameter other than the key, naming it', async () => {
    const answer = await tipFloor(undefined, '?percentile=50');
    assert.equal(answer.status, 400);
    assert.deepEqual(await answer.json(), {
      code: -32602,
      message: 'tip_floor takes no query parameter but the API key (api-key); got "percentile"',
    });
  });

  it("counts each request as a read against the key's reads per second", async () => {
    const slow = await createKey('slow reads', 1);
    await waitForKey(gw.url, slow);
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    const first = await tipFloor({ 'x-api-key': slow });
    assert.equal(first.status, 200);
    const second = await tipFloor({ 'x-api-key': slow });
    assert.equal(second.status, 429);
    assert.equal(second.headers.get('retry-after'), '1');
    const body = (await second.json()) as { code: number; message: string };
    assert.equal(body.code, -32097);
    assert.match(body.message, /may send 1 reads per second; nothing was read/);
  });

  it('answers a plain GET of the stream with 426: it is a WebSocket', async () => {
    const answer = await fetch(`${gw.url}/api/v1/bundles/tip_stream`, { headers: { 'x-api-key': gw.key } });
    assert.equal(answer.status, 426);
    assert.equal(((await answer.json()) as { code: number }).code, -32600);
  });
});

describe('the tip stream (/api/v1/bundles/tip_stream)', () => {
  it('sends the current entry at once on opening, then the new one (and only it) after a bundle lands', async () => {
    const socket = new WebSocket(streamUrl());
    const first = nextMessage(socket);
    await opened(socket);
    const openedAt = Date.now();
    const [current] = (await first) as Record<string, number>[];
    // At once: well before the first push, a second after opening.
    assert.ok(Date.now() - openedAt < 500, `${Date.now() - openedAt} ms after opening`);
    const [polled] = (await (await tipFloor()).json()) as Record<string, number>[];
    assert.deepEqual(current, polled);

    const pushed = nextMessage(socket);
    await landBundle([await tippedTx([900_000])]);
    const [entry] = (await pushed) as Record<string, number>[];
    assert.deepEqual(Object.keys(entry!), FIELDS);
    assert.equal(entry!.landed_tips_99th_percentile! > 0.00089, true, JSON.stringify(entry));
    assert.deepEqual(entry, ((await (await tipFloor()).json()) as unknown[])[0]);
    // Unchanged since: nothing more is sent (within the minute, which would change its time).
    if (new Date().getUTCSeconds() < 55) await assert.rejects(nextMessage(socket, 2_500), /no message within/);
    socket.close();
  });

  it('is served on port + 1 too, beside the subscriptions', async (t) => {
    const beside = gw.app.pubsubUrl;
    if (beside === undefined) return t.skip('port + 1 was taken');
    const socket = new WebSocket(`${beside}/api/v1/bundles/tip_stream?api-key=${gw.key}`);
    const first = nextMessage(socket);
    await opened(socket);
    assert.deepEqual(await first, await (await tipFloor()).json());
    socket.close();
  });

  it('refuses a handshake without a valid key', async () => {
    const missing = await refusedHandshake(new WebSocket(streamUrl('')));
    assert.equal(missing.status, 401);
    assert.match(missing.body.message, /^missing API key/);
    const wrong = await refusedHandshake(new WebSocket(streamUrl('?api-key=sk_nope')));
    assert.equal(wrong.status, 401);
  });

  it('closes a stream whose client sends anything, saying it takes no messages', async () => {
    const socket = new WebSocket(streamUrl());
    await opened(socket);
    const closing = closed(socket);
    socket.send('{"jsonrpc":"2.0","id":1,"method":"slotSubscribe"}');
    assert.deepEqual(await closing, { code: 1008, reason: 'the tip stream takes no messages: it only sends' });
  });

  it('closes a stream sent a message over its size limit (1009), and the gateway goes on', async () => {
    const socket = new WebSocket(streamUrl());
    await opened(socket);
    const closing = closed(socket);
    socket.send('x'.repeat(64 * 1024));
    assert.equal((await closing).code, 1009);
    assert.equal((await tipFloor()).status, 200);
  });

  it("counts opening a stream as a read against the key's reads per second", async () => {
    const slow = await createKey('slow stream reads', 1);
    await waitForKey(gw.url, slow);
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    const first = new WebSocket(streamUrl(`?api-key=${slow}`));
    await opened(first);
    const second = await refusedHandshake(new WebSocket(streamUrl(`?api-key=${slow}`)));
    assert.equal(second.status, 429);
    assert.equal(second.body.code, 429);
    assert.match(second.body.message, /may send 1 reads per second; nothing was read/);
    first.close();
  });

  it("closes a revoked key's streams, saying so", async () => {
    const doomed = await createKey('doomed', null);
    await waitForKey(gw.url, doomed);
    const socket = new WebSocket(streamUrl(`?api-key=${doomed}`));
    await opened(socket);
    const closing = closed(socket);
    await revokeKey(doomed);
    assert.deepEqual(await closing, { code: 1008, reason: 'the API key has been revoked' });
  });

  it('holds at most four streams per key, refusing a fifth with 429', async () => {
    const sockets = Array.from({ length: 4 }, () => new WebSocket(streamUrl()));
    await Promise.all(sockets.map(opened));
    const fifth = await refusedHandshake(new WebSocket(streamUrl()));
    assert.equal(fifth.status, 429);
    assert.match(fifth.body.message, /has 4 tip streams open, the most one key may/);
    const gone = closed(sockets[0]!);
    sockets[0]!.close();
    await gone;
    // Its place is given back once the gateway has seen it close.
    const again = await until(
      async () => {
        const socket = new WebSocket(streamUrl());
        const ok = await opened(socket).then(
          () => true,
          () => false,
        );
        return { socket, ok };
      },
      ({ ok }) => ok,
    );
    for (const socket of [...sockets.slice(1), again.socket]) socket.close();
  });
});
