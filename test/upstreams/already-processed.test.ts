/**
 * A node or block engine that refuses a send because it has processed the transaction
 * already (its preflight's `AlreadyProcessed`, as some RPC providers answer even with
 * skipPreflight): the network has it, so the send counts as taken, not as a failure. Any
 * other refusal still fails the send. Over a real socket, with Agave's error shape.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { Keypair, SystemProgram, Transaction } from '@solana/web3.js';
import { createJitoUpstream } from '../../src/upstreams/jito';
import { createSolanaRpcUpstream } from '../../src/upstreams/solana-rpc';
import { validateTransaction } from '../../src/validation/validate-transaction';

/** What Agave's sendTransaction answers when its preflight finds the signature in the status cache. */
const ALREADY_PROCESSED = {
  code: -32002,
  message: 'Transaction simulation failed: This transaction has already been processed',
  data: { err: 'AlreadyProcessed', logs: [], accounts: null, unitsConsumed: 0 },
};
const BLOCKHASH_NOT_FOUND = {
  code: -32002,
  message: 'Transaction simulation failed: Blockhash not found',
  data: { err: 'BlockhashNotFound', logs: [], accounts: null, unitsConsumed: 0 },
};

let refusal: unknown = ALREADY_PROCESSED;
let server: http.Server;
let url: string;
before(async () => {
  server = http.createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      const { id, method } = JSON.parse(body) as { id: unknown; method: string };
      const answer = method === 'getTipAccounts' ? { result: [] } : { error: refusal };
      response.setHeader('content-type', 'application/json');
      response.end(JSON.stringify({ jsonrpc: '2.0', id, ...answer }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() => new Promise<void>((resolve) => server.close(() => resolve())));

function transaction() {
  const payer = Keypair.generate();
  const tx = new Transaction({ feePayer: payer.publicKey, recentBlockhash: Keypair.generate().publicKey.toBase58() }).add(
    SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: Keypair.generate().publicKey, lamports: 1 }),
  );
  tx.sign(payer);
  const validated = validateTransaction(tx.serialize().toString('base64'), '');
  assert.ok(validated.ok);
  return validated.value;
}

const SEND = { skipPreflight: true, preflightCommitment: 'processed', maxRetries: undefined, minContextSlot: undefined } as const;
const common = { protected: false, timeoutMs: 2_000, maxAnswerBytes: 1_000_000 };
const upstreams = () => [
  createSolanaRpcUpstream({ name: 'rpc', urls: [url], ...common }),
  createJitoUpstream({ name: 'engine', urls: [`${url}/api/v1`], ...common, minTipLamports: 1_000, requireTip: false }),
];

describe('a send the upstream has already processed', () => {
  it('is taken (not dropped) by an RPC node and by a block engine', async () => {
    refusal = ALREADY_PROCESSED;
    for (const upstream of upstreams())
      assert.deepEqual(await upstream.sendTransaction(transaction(), SEND), { dropped: null }, upstream.name);
  });

  it('while any other refusal fails the send, naming it', async () => {
    refusal = BLOCKHASH_NOT_FOUND;
    for (const upstream of upstreams())
      await assert.rejects(upstream.sendTransaction(transaction(), SEND), /Blockhash not found/, upstream.name);
  });
});
