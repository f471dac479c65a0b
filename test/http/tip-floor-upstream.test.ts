/**
 * `tipFloorUrl`: the tip floor path and stream pass on an engine's own tip floor, read at most
 * once a second, and answer Slipway's own whenever the engine answers garbage, too much, too
 * slowly, the wrong shape or not at all; a URL that is not http(s) stops start-up.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { Keypair, PublicKey, SystemProgram, Transaction } from '@solana/web3.js';
import WebSocket from 'ws';
import { resolveConfig } from '../../src/config/config';
import { JITO_TIP_ACCOUNTS } from '../../src/core/jito-tip-accounts';
import { startTestGateway, type TestGateway } from '../helpers/gateway';
import { rpc } from '../helpers/rpc';
import { connect, fundedKeypair } from '../helpers/solana';

const ENGINE_ENTRY = {
  time: '2025-04-24T13:47:32+00:00',
  landed_tips_25th_percentile: 0.000005,
  landed_tips_50th_percentile: 0.00001,
  landed_tips_75th_percentile: 0.001,
  landed_tips_95th_percentile: 0.00533476325,
  landed_tips_99th_percentile: 0.00826274555000001,
  ema_landed_tips_50th_percentile: 0.000009952174575705424,
};
/** Slipway's own: one landed bundle that tipped 40,000 lamports. */
const OWN_MEDIAN = 0.00004;

type Mode = 'jito' | 'garbage' | 'huge' | 'slow' | 'wrong shape' | 'error' | 'redirect' | 'cut';
let mode: Mode = 'jito';
let reads = 0;
const engine = http.createServer((request, response) => {
  reads += 1;
  switch (mode) {
    case 'jito':
      return response.end(JSON.stringify([{ ...ENGINE_ENTRY, engine_only: 'not passed on' }]));
    case 'garbage':
      return response.end('\u0000\u00ff<html>not json');
    case 'huge':
      // Valid JSON, a megabyte of it: read no further than the limit.
      return response.end(JSON.stringify([{ ...ENGINE_ENTRY, padding: 'x'.repeat(1024 * 1024) }]));
    case 'slow':
      response.writeHead(200, { 'content-type': 'application/json' });
      return response.write('[{"time":'); // and never the rest
    case 'wrong shape':
      return response.end(JSON.stringify({ ...ENGINE_ENTRY, landed_tips_50th_percentile: 'a lot' }));
    case 'error':
      response.writeHead(503);
      return response.end(JSON.stringify([ENGINE_ENTRY]));
    case 'redirect':
      response.writeHead(302, { location: 'http://127.0.0.1:1/elsewhere' });
      return response.end();
    case 'cut':
      return request.socket.destroy();
  }
});

let gw: TestGateway;
before(async () => {
  await new Promise<void>((resolve) => engine.listen(0, '127.0.0.1', resolve));
  const { port } = engine.address() as AddressInfo;
  gw = await startTestGateway({ tipFloorUrl: `http://127.0.0.1:${port}/api/v1/bundles/tip_floor?auth=ENGINE-SECRET` });
  // One bundle lands through the gateway: Slipway's own tip floor is not empty.
  const connection = connect(gw.url, gw.key);
  const payer = await fundedKeypair(connection);
  const { blockhash } = await connection.getLatestBlockhash();
  const tx = new Transaction({ feePayer: payer.publicKey, recentBlockhash: blockhash }).add(
    SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: Keypair.generate().publicKey, lamports: 1_000_000 }),
    SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: new PublicKey(JITO_TIP_ACCOUNTS[2]!), lamports: 40_000 }),
  );
  tx.sign(payer);
  const sent = await rpc(gw.url, gw.key, 'sendBundle', [[tx.serialize().toString('base64')], { encoding: 'base64' }]);
  assert.match(sent.body.result, /^[0-9a-f]{64}$/, JSON.stringify(sent.body));
  await gw.app.tracker.runRound();
});
after(async () => {
  await gw.close();
  engine.closeAllConnections();
  await new Promise((resolve) => engine.close(resolve));
});

const tipFloor = async (): Promise<{ status: number; body: Record<string, unknown>[] }> => {
  const response = await fetch(`${gw.url}/api/v1/bundles/tip_floor`, { headers: { 'x-api-key': gw.key } });
  return { status: response.status, body: (await response.json()) as Record<string, unknown>[] };
};
/** Past the second within which the last read is reused. */
const nextRead = () => new Promise((resolve) => setTimeout(resolve, 1_050));

describe('tipFloorUrl', () => {
  it("answers the engine's entry, with Jito's fields only, and reads the engine at most once a second however many ask", async () => {
    await nextRead();
    const before = reads;
    const answers = await Promise.all(Array.from({ length: 10 }, tipFloor));
    for (const answer of [...answers, await tipFloor(), await tipFloor()]) {
      assert.equal(answer.status, 200);
      assert.deepEqual(answer.body, [ENGINE_ENTRY]);
    }
    assert.equal(reads - before, 1, 'one read for twelve requests within the second');
  });

  it("answers Slipway's own when the engine answers garbage, too much, the wrong shape, an error, a redirect, or cuts the connection", async () => {
    for (const bad of ['garbage', 'huge', 'wrong shape', 'error', 'redirect', 'cut'] as const) {
      mode = bad;
      await nextRead();
      const answer = await tipFloor();
      assert.equal(answer.status, 200, bad);
      assert.equal(answer.body.length, 1, bad);
      assert.equal(answer.body[0]!.landed_tips_50th_percentile, OWN_MEDIAN, bad);
      assert.equal(JSON.stringify(answer.body).includes('ENGINE-SECRET'), false);
    }
    mode = 'jito';
    await nextRead();
    assert.deepEqual((await tipFloor()).body, [ENGINE_ENTRY], 'the engine is read again once it answers well');
  });

  it("answers Slipway's own within the read's time limit when the engine never finishes its answer", async () => {
    mode = 'slow';
    await nextRead();
    const started = Date.now();
    const answer = await tipFloor();
    const took = Date.now() - started;
    assert.equal(answer.body[0]!.landed_tips_50th_percentile, OWN_MEDIAN);
    assert.ok(took >= 1_900 && took < 4_000, `answered after ${took} ms`);
    mode = 'jito';
    engine.closeAllConnections();
  });

  it("sends the engine's entry on the tip stream", async () => {
    mode = 'jito';
    await nextRead();
    const socket = new WebSocket(`${gw.url.replace('http', 'ws')}/api/v1/bundles/tip_stream?api-key=${gw.key}`);
    const message = await new Promise<unknown>((resolve, reject) => {
      socket.once('message', (data) => resolve(JSON.parse(data.toString())));
      socket.once('error', reject);
    });
    assert.deepEqual(message, [ENGINE_ENTRY]);
    socket.close();
  });

  it('stops start-up, naming the setting, for a URL that is not http or https', () => {
    for (const url of ['ftp://engine.example/tip_floor', 'ws://engine.example/tip_stream', 'file:///etc/passwd', 'javascript:alert(1)'])
      assert.throws(
        () => resolveConfig({ tipFloorUrl: url }, {}),
        /^Error: tipFloorUrl must start with https:\/\/ or http:\/\/ \(got [a-z]+:\/\/…; given as --tip-floor-url\)$/,
        url,
      );
    assert.throws(
      () => resolveConfig({}, { SLIPWAY_TIP_FLOOR_URL: 'bundles.jito.wtf/api/v1/bundles/tip_floor' }),
      /^Error: tipFloorUrl must be a URL like https:\/\/bundles\.jito\.wtf\/api\/v1\/bundles\/tip_floor \(env SLIPWAY_TIP_FLOOR_URL\)$/,
    );
    assert.equal(resolveConfig({ tipFloorUrl: 'https://engine.example/tip_floor' }, {}).tipFloorUrl, 'https://engine.example/tip_floor');
    assert.equal(resolveConfig({}, {}).tipFloorUrl, '');
  });
});
