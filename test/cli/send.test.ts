/**
 * `bin/slipway send` against a running gateway: files of raw bytes and of Base64 lines, as
 * single sends, a batch and a bundle; the outcome of each; exit status 1 unless all landed.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Keypair, type Connection } from '@solana/web3.js';
import { makeDataDir } from '../helpers/gateway';
import { runCli, startServer, type ServerProcess } from '../helpers/process';
import { post } from '../helpers/rpc';
import { balanceOf, connect, failingTransferTx, fundedKeypair, transferTx } from '../helpers/solana';

let dir: string;
let server: ServerProcess;
let connection: Connection;
let key: string;
before(async () => {
  dir = makeDataDir();
  server = await startServer(dir, { SLIPWAY_LOG_LEVEL: 'warn' });
  key = server.initialKey!;
  connection = connect(server.url, key);
});
after(async () => {
  server.child.kill('SIGTERM');
  await server.exited;
  fs.rmSync(dir, { recursive: true, force: true });
});

const write = (name: string, content: string | Buffer) => {
  const file = path.join(dir, name);
  fs.writeFileSync(file, content);
  return file;
};
const SIGNATURE = '[1-9A-HJ-NP-Za-km-z]{86,88}';

describe('bin/slipway send', () => {
  it('sends each transaction of the files, waits, prints each landing, exits 0', async () => {
    const alice = await fundedKeypair(connection);
    const [bob, carol, dave] = [Keypair.generate(), Keypair.generate(), Keypair.generate()];
    const lines = write(
      'two.b64',
      `${await transferTx(connection, alice, bob.publicKey, 1_000_000)}\n${await transferTx(connection, alice, carol.publicKey, 2_000_000)}\n`,
    );
    const raw = write('one.bin', Buffer.from(await transferTx(connection, alice, dave.publicKey, 3_000_000), 'base64'));
    const run = await runCli(['send', '--url', server.url, lines, raw], { SLIPWAY_API_KEY: key });
    assert.equal(run.code, 0, run.stderr + run.stdout);
    const out = run.stdout.trimEnd().split('\n');
    assert.equal(out.length, 3);
    assert.match(out[0]!, new RegExp(`^${lines}:1  ${SIGNATURE}  landed in slot \\d+$`));
    assert.match(out[1]!, new RegExp(`^${lines}:2  ${SIGNATURE}  landed in slot \\d+$`));
    assert.match(out[2]!, new RegExp(`^${raw}  ${SIGNATURE}  landed in slot \\d+$`));
    assert.deepEqual(
      [
        await balanceOf(connection, bob.publicKey),
        await balanceOf(connection, carol.publicKey),
        await balanceOf(connection, dave.publicKey),
      ],
      [1_000_000, 2_000_000, 3_000_000],
    );
  });

  it('--batch, --bundle and --anti-mev; --json prints each outcome as data', async () => {
    const alice = await fundedKeypair(connection);
    const batch = [
      write('b1.b64', await transferTx(connection, alice, Keypair.generate().publicKey, 1_000_000)),
      write('b2.b64', await transferTx(connection, alice, Keypair.generate().publicKey, 2_000_000)),
    ];
    const batchRun = await runCli(['send', '--url', server.url, '--key', key, '--batch', '--json', ...batch]);
    assert.equal(batchRun.code, 0, batchRun.stderr);
    const batchOut = JSON.parse(batchRun.stdout) as { source: string; signature: string; state: string; slot: number }[];
    assert.deepEqual(
      batchOut.map((i) => [i.source, i.state]),
      [
        [batch[0], 'landed'],
        [batch[1], 'landed'],
      ],
    );
    const statuses = await connection.getSignatureStatuses(batchOut.map((i) => i.signature));
    assert.ok(statuses.value.every((s) => s !== null && s.err === null));

    const bundle = write(
      'bundle.b64',
      `${await transferTx(connection, alice, Keypair.generate().publicKey, 3_000_000)}\n${await transferTx(connection, alice, Keypair.generate().publicKey, 4_000_000)}`,
    );
    const bundleRun = await runCli(['send', '--url', server.url, '--key', key, '--bundle', '--json', bundle]);
    assert.equal(bundleRun.code, 0, bundleRun.stderr);
    assert.deepEqual(
      (JSON.parse(bundleRun.stdout) as { state: string }[]).map((i) => i.state),
      ['landed', 'landed'],
    );

    const protectedFile = write('protected.b64', await transferTx(connection, alice, Keypair.generate().publicKey, 5_000_000));
    const protectedRun = await runCli(['send', '--url', server.url, '--key', key, '--anti-mev', '--json', protectedFile]);
    assert.equal(protectedRun.code, 0, protectedRun.stderr);
    const [sent] = JSON.parse(protectedRun.stdout) as { signature: string; state: string }[];
    assert.equal(sent!.state, 'landed');
    const journaled = (
      await post(server.url, { jsonrpc: '2.0', id: 1, method: 'getSubmission', params: [sent!.signature] }, { 'x-api-key': key })
    ).body.result.value;
    assert.equal(journaled.antiMev, true, 'sent with anti_mev=1');
  });

  it('says what became of each one that did not land, and exits 1', async () => {
    const alice = await fundedKeypair(connection);
    const poor = await fundedKeypair(connection, 1);
    const good = write('good.b64', await transferTx(connection, alice, Keypair.generate().publicKey, 1_000_000));
    const failing = write('failing.b64', await failingTransferTx(connection, poor, Keypair.generate().publicKey));
    const garbage = write('garbage.b64', 'AAAA');
    const run = await runCli(['send', '--url', server.url, '--key', key, good, failing, garbage]);
    assert.equal(run.code, 1);
    const out = run.stdout.trimEnd().split('\n');
    assert.match(out[0]!, /  landed in slot \d+$/);
    assert.match(out[1]!, new RegExp(`^.*failing\\.b64  ${SIGNATURE}  refused \\(-32002\\): Transaction simulation failed: `));
    assert.match(out[2]!, /^.*garbage\.b64  \(not sent\)  refused \(-32602\): failed to deserialize/);
  });

  it('explains a missing key, too many for a batch, and an unreadable file', async () => {
    const file = write('x.b64', 'AAAA');
    const noKey = await runCli(['send', '--url', server.url, file], { SLIPWAY_API_KEY: '' });
    assert.match(noKey.stderr, /^slipway: send: give the API key with --key KEY or \$SLIPWAY_API_KEY\n$/);
    const six = write('six.b64', Array.from({ length: 6 }, () => 'AAAA').join('\n'));
    const tooMany = await runCli(['send', '--url', server.url, '--key', key, '--batch', six]);
    assert.match(tooMany.stderr, /^slipway: send: a batch holds 1–5 transactions; the files hold 6\n$/);
    const missing = await runCli(['send', '--url', server.url, '--key', key, path.join(dir, 'nope.b64')]);
    assert.match(missing.stderr, /^slipway: send: cannot read .*nope\.b64: ENOENT/);
    assert.ok([noKey, tooMany, missing].every((r) => r.code === 1));
  });
});
