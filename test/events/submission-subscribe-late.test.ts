/**
 * `submissionSubscribe` opened after a submission was made, while it is still on its way: a
 * key whose events nobody wanted until then (no webhook, no stream before) is streamed that
 * submission's events from then on, as a stream "starts with the events that happen after it
 * is opened" (docs/WEBHOOKS.md). The natural use: send, then subscribe by its signature.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Keypair, type Connection } from '@solana/web3.js';
import WebSocket from 'ws';
import { startTestGateway, type TestGateway } from '../helpers/gateway';
import { rpc, sendTransaction } from '../helpers/rpc';
import { connect, fundedKeypair, transferTx } from '../helpers/solana';

/** Slow enough slots that the subscription is open well before the transaction lands. */
const SLOT_MS = 600;

describe('submissionSubscribe after the submission', () => {
  let gateway: TestGateway;
  let connection: Connection;
  let payer: Keypair;

  before(async () => {
    gateway = await startTestGateway({ slotMs: String(SLOT_MS) });
    connection = connect(gateway.url, gateway.key);
    payer = await fundedKeypair(connection, 5);
  });
  after(async () => {
    await gateway?.close();
  });

  it('streams the landing of a transaction sent before the subscription, by its signature', async () => {
    const tx = await transferTx(connection, payer, Keypair.generate().publicKey, 2_000_000);
    // The plain key has no webhook and has never streamed.
    const signature = (await sendTransaction(gateway.url, gateway.plainKey, tx)).body.result as string;
    const socket = new WebSocket(`${gateway.url.replace(/^http/, 'ws')}/?api-key=${gateway.plainKey}`);
    const messages: { id?: number; result?: unknown; method?: string; params?: { result: { type: string } } }[] = [];
    socket.on('message', (data) => messages.push(JSON.parse(String(data)) as (typeof messages)[number]));
    await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
    socket.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'submissionSubscribe', params: [{ signature }] }));
    const started = Date.now();
    while (!messages.some((m) => m.id === 1) && Date.now() - started < 5_000) await new Promise((resolve) => setTimeout(resolve, 10));
    assert.equal(typeof messages.find((m) => m.id === 1)?.result, 'number', JSON.stringify(messages));
    const status = (await rpc(gateway.url, gateway.plainKey, 'getSubmissionStatuses', [[signature]])).body.result as {
      value: { state?: string }[];
    };
    assert.notEqual(status.value[0]?.state, 'landed', 'landed before the subscription was open: the test proves nothing');

    const landed = () => messages.some((m) => m.method === 'submissionNotification' && m.params?.result.type === 'transaction.landed');
    while (!landed() && Date.now() - started < 10_000) await new Promise((resolve) => setTimeout(resolve, 50));
    const final = (await rpc(gateway.url, gateway.plainKey, 'getSubmissionStatuses', [[signature]])).body.result as {
      value: { state?: string }[];
    };
    socket.close();
    assert.ok(landed(), `no transaction.landed streamed; the journal says ${JSON.stringify(final.value[0]?.state)}`);
  });
});
