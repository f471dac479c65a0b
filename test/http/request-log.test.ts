/**
 * Structured logs: every answer carries an x-request-id (the client's, or one of the
 * gateway's), and each submission outcome is one JSON line at info level with that id, the
 * key's id and the signatures or the refusal: nothing secret.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, describe, it } from 'node:test';
import { Keypair } from '@solana/web3.js';
import { makeDataDir } from '../helpers/gateway';
import { startServer } from '../helpers/process';
import { post } from '../helpers/rpc';
import { connect, fundedKeypair, transferTx } from '../helpers/solana';

const dirs: string[] = [];
after(() => {
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

describe('request ids and submission log lines', () => {
  it('echoes the request id, and logs one line per submission outcome with it', async () => {
    const dir = makeDataDir();
    dirs.push(dir);
    const server = await startServer(dir); // the default level: info
    try {
      const key = server.initialKey!;
      const c = connect(server.url, key);
      const alice = await fundedKeypair(c);
      const tx = await transferTx(c, alice, Keypair.generate().publicKey, 1_000_000);
      const sendBody = (encoded: string) => ({
        jsonrpc: '2.0',
        id: 1,
        method: 'sendTransaction',
        params: [encoded, { encoding: 'base64' }],
      });

      const accepted = await post(server.url, sendBody(tx), { 'x-api-key': key, 'x-request-id': 'trace-42' });
      assert.equal(accepted.headers.get('x-request-id'), 'trace-42', "the client's id is kept");
      const signature = accepted.body.result as string;
      const refused = await post(server.url, sendBody('AAAA'), { 'x-api-key': key });
      const generated = refused.headers.get('x-request-id')!;
      assert.match(generated, /^[0-9a-f]{8}-[0-9a-z]+$/, "one of the gateway's otherwise");
      const odd = await post(server.url, sendBody('AAAA'), { 'x-api-key': key, 'x-request-id': 'no spaces or "quotes" please' });
      assert.notEqual(odd.headers.get('x-request-id'), 'no spaces or "quotes" please', 'an unacceptable id is replaced');
      const batchTx = await transferTx(c, alice, Keypair.generate().publicKey, 2_000_000);
      const batch = await post(
        `${server.url}/submit-batch`,
        { params: { transactions: [batchTx], options: [] } },
        { 'x-api-key': key, 'x-request-id': 'batch-7' },
      );
      assert.equal(batch.headers.get('x-request-id'), 'batch-7');
      const unauthorized = await post(server.url, sendBody(tx), { 'x-request-id': 'no-key-1' });
      assert.equal(unauthorized.headers.get('x-request-id'), 'no-key-1', 'refusals carry it too');

      server.child.kill('SIGTERM');
      assert.equal(await server.exited, 0);
      const lines = server.stderr
        .join('')
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as Record<string, unknown>);
      const submissions = lines.filter((line) => line.msg === 'submission');
      const keyId = (submissions[0] as { keyId: string }).keyId;
      assert.match(keyId, /^key_[0-9a-f]+$/);
      const pick = ({ level, requestId, operation, keyId: id, antiMev, outcome, signatures, code, error }: Record<string, unknown>) => ({
        level,
        requestId,
        operation,
        keyId: id,
        antiMev,
        outcome,
        signatures,
        code,
        error,
      });
      assert.deepEqual(submissions.map(pick), [
        {
          level: 30,
          requestId: 'trace-42',
          operation: 'sendTransaction',
          keyId,
          antiMev: false,
          outcome: 'accepted',
          signatures: [signature],
          code: undefined,
          error: undefined,
        },
        {
          level: 30,
          requestId: generated,
          operation: 'sendTransaction',
          keyId,
          antiMev: false,
          outcome: 'refused',
          signatures: undefined,
          code: -32602,
          error: refused.body.error.message,
        },
        {
          level: 30,
          requestId: odd.headers.get('x-request-id'),
          operation: 'sendTransaction',
          keyId,
          antiMev: false,
          outcome: 'refused',
          signatures: undefined,
          code: -32602,
          error: odd.body.error.message,
        },
        {
          level: 30,
          requestId: 'batch-7',
          operation: 'submitBatch',
          keyId,
          antiMev: false,
          outcome: 'accepted',
          signatures: batch.body.signatures,
          code: undefined,
          error: undefined,
        },
      ]);
      const everything = server.stderr.join('');
      for (const secret of [key, tx.slice(0, 40), batchTx.slice(0, 40)])
        assert.equal(everything.includes(secret), false, `${secret.slice(0, 12)}… is not logged`);
    } finally {
      if (server.child.exitCode === null) server.child.kill('SIGKILL');
    }
  });
});
