import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import { after, describe, it } from 'node:test';
import { Keypair, LAMPORTS_PER_SOL } from '@solana/web3.js';
import bs58 from 'bs58';
import { Client } from 'undici';
import { transferFactory } from '../../bench/signed-transactions';
import { makeDataDir } from '../helpers/gateway';
import { startServer, runCli, type ServerProcess } from '../helpers/process';
import { rpc, submitBatch } from '../helpers/rpc';
import { until } from '../helpers/until';
import { balanceOf, connect, fundedKeypair, transferTx, waitForStatus } from '../helpers/solana';

const dirs: string[] = [];
const servers: ServerProcess[] = [];
after(() => {
  for (const server of servers) server.child.kill('SIGKILL');
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

function dataDir(): string {
  const dir = makeDataDir();
  dirs.push(dir);
  return dir;
}

async function serve(dir: string, env: Record<string, string> = {}, args: string[] = []): Promise<ServerProcess> {
  const server = await startServer(dir, env, args);
  servers.push(server);
  return server;
}

/** A POST that sends the first half of its body at once and the rest on `finish()`. */
function slowRequest(url: string, key: string, body: string) {
  const bytes = Buffer.from(body);
  let finish: () => void = () => {};
  let halfSentResolve: () => void = () => {};
  const halfSent = new Promise<void>((resolve) => (halfSentResolve = resolve));
  const answer = new Promise<{ status: number; body: string }>((resolve, reject) => {
    const request = http.request(
      url,
      { method: 'POST', headers: { 'x-api-key': key, 'content-type': 'application/json', 'content-length': bytes.length } },
      (response) => {
        let text = '';
        response.on('data', (chunk: Buffer) => (text += chunk.toString()));
        response.on('end', () => resolve({ status: response.statusCode!, body: text }));
      },
    );
    request.on('error', reject);
    request.write(bytes.subarray(0, bytes.length >> 1), () => setTimeout(halfSentResolve, 50));
    finish = () => request.end(bytes.subarray(bytes.length >> 1));
  });
  return { halfSent, answer, finish: () => finish() };
}

/** Polls until `check` holds, for at most `ms`; returns how long it took. */
async function within(ms: number, check: () => Promise<boolean>): Promise<number> {
  const started = Date.now();
  for (;;) {
    if (await check()) return Date.now() - started;
    if (Date.now() - started > ms) assert.fail(`condition not met within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('bin/slipway serve', () => {
  it('--market 2 alone is congested out of the box: blocks filled to the limit it picks, the cheapest held or dropped', async () => {
    // getSlotStats (the local cluster's own, for tests) is not among the reads a gateway forwards by default.
    const server = await serve(dataDir(), { SLIPWAY_READ_METHODS: '*' }, ['--market', '2', '--slot-ms', '400']);
    const call = async (method: string, params: unknown[] = []) => {
      const answer = await rpc(server.url, server.initialKey!, method, params);
      assert.equal(answer.body.error, undefined, `${method}: ${JSON.stringify(answer.body)}`);
      return answer.body.result;
    };
    const first = (await call('getSlot')) as number;
    await new Promise((resolve) => setTimeout(resolve, 4_000));
    const last = ((await call('getSlot')) as number) - 1;
    type Stats = { blockUnits: number; units: number; held: Record<string, number>; dropped: Record<string, number> };
    const stats = [];
    // The first slots ramp up (the market starts mid-slot).
    for (let slot = first + 2; slot <= last; slot++) stats.push((await call('getSlotStats', [slot])) as Stats);
    assert.ok(stats.length >= 5, `slots went by: ${first} to ${last}`);
    assert.deepEqual(new Set(stats.map((s) => s.blockUnits)), new Set([200_000]), 'the block limit --market picks');
    const full = stats.filter((s) => s.units >= s.blockUnits * 0.75).length;
    assert.ok(full * 2 >= stats.length, `half the blocks or more at 75 % of their units or more (${full} of ${stats.length})`);
    const sum = (records: Record<string, number>[]) => records.reduce((n, r) => n + Object.values(r).reduce((a, b) => a + b, 0), 0);
    assert.ok(sum(stats.map((s) => s.held)) + sum(stats.map((s) => s.dropped)) > 0, 'more was sent than the blocks hold');
    server.child.kill('SIGTERM');
    assert.equal(await server.exited, 0);
  });

  it('prints the listening URL with the real port and a first key that can send', async () => {
    const dir = dataDir();
    const server = await serve(dir);
    assert.match(server.url, /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.notEqual(server.url, 'http://127.0.0.1:0');
    assert.ok(server.initialKey, 'a first key is printed');
    assert.ok(
      server.stdout.some((line) => line.includes('bin/slipway keys create')),
      'says how to make more',
    );
    const c = connect(server.url, server.initialKey!);
    const alice = await fundedKeypair(c);
    const bob = Keypair.generate();
    await waitForStatus(c, await c.sendRawTransaction(Buffer.from(await transferTx(c, alice, bob.publicKey, LAMPORTS_PER_SOL), 'base64')));
    assert.equal(await balanceOf(c, bob.publicKey), LAMPORTS_PER_SOL);
    const bundle = await rpc(server.url, server.initialKey!, 'sendBundle', [
      [await transferTx(c, alice, bob.publicKey, 1_000_000)],
      { encoding: 'base64' },
    ]);
    assert.equal(typeof bundle.body.result, 'string', 'the first key may send bundles');
    const viaUuid = await fetch(`${server.url}/api/v1/bundles?uuid=${server.initialKey}&secret=query-marker`, {
      method: 'POST',
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'nope' }),
    });
    assert.equal(viaUuid.status, 200);

    // The ledger survives a graceful restart.
    server.child.kill('SIGTERM');
    assert.equal(await server.exited, 0);
    const again = await serve(dir);
    assert.equal(again.initialKey, undefined, 'no new key on a second start');
    const c2 = connect(again.url, server.initialKey!);
    assert.equal(await balanceOf(c2, bob.publicKey), LAMPORTS_PER_SOL + 1_000_000);
    again.child.kill('SIGINT');
    assert.equal(await again.exited, 0);
    const logs = [...server.stderr, ...again.stderr].join('');
    assert.match(
      logs,
      /slipway: \/metrics and \/dashboard answer this machine only \(no metricsToken or dashboardToken\); a reverse proxy on this machine must add X-Forwarded-For or Forwarded \(requests carrying them are refused there\), or set the tokens/,
    );
    assert.equal(logs.includes(server.initialKey!), false, 'the key never reaches the logs');
    assert.equal(logs.includes('query-marker'), false, 'query strings are never logged');
  });

  it('finishes in-flight requests on SIGTERM, exits 0, and what it accepted is there after restart', async () => {
    const dir = dataDir();
    const server = await serve(dir);
    const c = connect(server.url, server.initialKey!);
    const alice = await fundedKeypair(c);
    const txs = await Promise.all(Array.from({ length: 5 }, (_, i) => transferTx(c, alice, Keypair.generate().publicKey, 1_000_000 + i)));
    // Each request sends half its body, so it is in flight when SIGTERM arrives, and the rest after.
    const requests = txs.map((tx) =>
      slowRequest(
        server.url,
        server.initialKey!,
        JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'sendTransaction', params: [tx, { encoding: 'base64' }] }),
      ),
    );
    await Promise.all(requests.map((r) => r.halfSent));
    server.child.kill('SIGTERM');
    await new Promise((resolve) => setTimeout(resolve, 200));
    requests.forEach((r) => r.finish());
    const answers = await Promise.all(requests.map((r) => r.answer));
    assert.equal(await server.exited, 0);
    for (const answer of answers) assert.equal(answer.status, 200);
    const accepted = answers.map((answer) => JSON.parse(answer.body).result as string);
    assert.ok(accepted.every((signature) => typeof signature === 'string'));
    const again = await serve(dir);
    const { value } = await connect(again.url, server.initialKey!).getSignatureStatuses(accepted);
    assert.ok(
      value.every((status) => status !== null && status.err === null),
      'every accepted transaction landed and was kept',
    );
    again.child.kill('SIGTERM');
    assert.equal(await again.exited, 0);
  });

  it('loses nothing it accepted on kill -9: the journal is replayed into the ledger', async () => {
    const dir = dataDir();
    // No periodic save during the test: everything after the airdrop must come from the journal.
    const server = await serve(dir, { SLIPWAY_SNAPSHOT_INTERVAL_MS: '3600000' });
    const c = connect(server.url, server.initialKey!);
    const alice = await fundedKeypair(c);
    const recipients = Array.from({ length: 5 }, () => Keypair.generate());
    const signatures: string[] = [];
    for (const [i, bob] of recipients.entries()) {
      const answer = await rpc(server.url, server.initialKey!, 'sendTransaction', [
        await transferTx(c, alice, bob.publicKey, 2_000_000 + i),
        { encoding: 'base64' },
      ]);
      signatures.push(answer.body.result);
    }
    const carol = Keypair.generate();
    const batch = await submitBatch(server.url, server.initialKey!, [await transferTx(c, alice, carol.publicKey, 3_000_000)]);
    assert.equal(batch.body.code, 1);
    const bundle = await rpc(server.url, server.initialKey!, 'sendBundle', [
      [await transferTx(c, alice, carol.publicKey, 4_000_000)],
      { encoding: 'base64' },
    ]);
    assert.equal(typeof bundle.body.result, 'string');
    server.child.kill('SIGKILL');
    await server.exited;
    const again = await serve(dir);
    const c2 = connect(again.url, server.initialKey!);
    for (const [i, bob] of recipients.entries()) assert.equal(await balanceOf(c2, bob.publicKey), 2_000_000 + i);
    assert.equal(await balanceOf(c2, carol.publicKey), 7_000_000, 'the batch and the bundle were kept too');
    assert.match(again.stderr.join(''), /recovered 7 transaction\(s\) from the journal/);
    const { value } = await c2.getSignatureStatuses(signatures);
    assert.ok(value.every((status) => status !== null && status.err === null));
    const bundleStatus = await rpc(again.url, server.initialKey!, 'getInflightBundleStatuses', [[bundle.body.result]]);
    assert.equal(bundleStatus.body.result.value[0].status, 'Landed');
    again.child.kill('SIGTERM');
    assert.equal(await again.exited, 0);
  });

  it('SIGTERM under load: requests in progress are answered, later ones refused clearly, exit 0, and every success landed', async () => {
    const dir = dataDir();
    const server = await serve(dir, { SLIPWAY_LOG_LEVEL: 'error' });
    const key = server.initialKey!;
    const c = connect(server.url, key);
    const alice = await fundedKeypair(c, 1_000);
    // Signed beforehand (libsodium): the load is then only sending.
    const next = transferFactory(
      { publicKey: alice.publicKey.toBuffer(), secretKey: Buffer.from(alice.secretKey) },
      Keypair.generate().publicKey.toBuffer(),
      Buffer.from(bs58.decode((await c.getLatestBlockhash()).blockhash)),
    );
    const txs = Array.from({ length: 4_000 }, next);
    const accepted: string[] = [];
    const refusals = new Map<string, number>();
    const count = (what: string) => refusals.set(what, (refusals.get(what) ?? 0) + 1);
    let signalled = false;
    // 16 clients, each on one keep-alive connection, sending one after another until refused or cut off.
    const clients = Array.from({ length: 16 }, async () => {
      const client = new Client(server.url);
      try {
        for (;;) {
          const tx = txs.pop();
          if (tx === undefined) return;
          if (!signalled && accepted.length >= 500) {
            signalled = true;
            server.child.kill('SIGTERM');
          }
          try {
            const response = await client.request({
              path: '/',
              method: 'POST',
              headers: { 'content-type': 'application/json', 'x-api-key': key },
              body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'sendTransaction', params: [tx, { encoding: 'base64' }] }),
            });
            const body = (await response.body.json()) as { result?: string; error?: { code: number; message: string } };
            if (response.statusCode === 200 && typeof body.result === 'string') {
              accepted.push(body.result);
              continue;
            }
            count(`${response.statusCode} ${body.error?.code} ${body.error?.message}`);
          } catch (error) {
            // The gateway stopped listening (refused), or closed an idle connection as the request went out on it.
            count(`no answer: ${(error as { code?: string }).code}`);
          }
          return;
        }
      } finally {
        await client.destroy();
      }
    });
    await Promise.all(clients);
    assert.ok(signalled, 'SIGTERM was sent mid-load');
    assert.equal(await server.exited, 0, 'exit status 0');
    for (const what of refusals.keys()) {
      assert.match(
        what,
        /^(503 -32095 Slipway is shutting down: nothing was submitted; send to another instance or again in a moment|no answer: (ECONNREFUSED|ECONNRESET|UND_ERR_SOCKET))$/,
      );
    }
    assert.ok(accepted.length >= 500, `${accepted.length} accepted`);

    const again = await serve(dir, { SLIPWAY_LOG_LEVEL: 'error' });
    const c2 = connect(again.url, key);
    for (let i = 0; i < accepted.length; i += 256) {
      const slice = accepted.slice(i, i + 256);
      const { value } = await c2.getSignatureStatuses(slice);
      assert.ok(
        value.every((status) => status !== null && status.err === null),
        'every accepted transaction landed and was kept',
      );
      // The restarted gateway follows what was forwarded and records it landed.
      const states = async () =>
        new Set(
          ((await rpc(again.url, key, 'getSubmissionStatuses', [slice])).body.result.value as { state: string }[]).map(
            (entry) => entry.state,
          ),
        );
      await until(states, (seen) => seen.size === 1 && seen.has('landed'), 15_000);
    }
    again.child.kill('SIGTERM');
    assert.equal(await again.exited, 0);
  });
});

describe('bin/slipway keys', () => {
  it('creates, lists, enables bundles and revokes keys on a running server, each within a second', async () => {
    const dir = dataDir();
    const server = await serve(dir);
    const created = await runCli(['keys', 'create', '--name', 'trader', '--json', '--data-dir', dir]);
    assert.equal(created.code, 0, created.stderr);
    const record = JSON.parse(created.stdout);
    assert.equal(created.stdout.trim().split('\n').length, 1, 'stdout is exactly one JSON object');
    assert.deepEqual(Object.keys(record).sort(), [
      'bundle',
      'bundlesPerSecond',
      'createdAt',
      'id',
      'key',
      'name',
      'readsPerSecond',
      'revokedAt',
      'tps',
      'webhookUrl',
    ]);
    assert.equal(record.name, 'trader');
    assert.equal(record.webhookUrl, null);
    assert.equal(record.bundle, false);
    const ready = await within(1000, async () => (await rpc(server.url, record.key, 'getSlot')).status === 200);
    assert.ok(ready < 1000);

    assert.equal((await rpc(server.url, record.key, 'sendBundle', [['AAAA'], { encoding: 'base64' }])).status, 403);
    const set = await runCli(['keys', 'set', record.id, '--bundle', 'on', '--data-dir', dir]);
    assert.equal(set.code, 0, set.stderr);
    await within(1000, async () => (await rpc(server.url, record.key, 'sendBundle', [['AAAA'], { encoding: 'base64' }])).status === 200);

    const listed = await runCli(['keys', 'list', '--json', '--data-dir', dir]);
    const keys = JSON.parse(listed.stdout) as { id: string; bundle: boolean; key?: string }[];
    assert.equal(keys.length, 2);
    assert.equal(keys.find((k) => k.id === record.id)!.bundle, true);
    assert.ok(
      keys.every((k) => k.key === undefined),
      'list never shows keys',
    );

    const revoked = await runCli(['keys', 'revoke', record.id, '--data-dir', dir]);
    assert.equal(revoked.code, 0, revoked.stderr);
    await within(1000, async () => (await rpc(server.url, record.key, 'getSlot')).status === 401);

    const bundleKey = await runCli(['keys', 'create', '--name', 'bundler', '--bundle', '--json', '--data-dir', dir]);
    assert.equal(JSON.parse(bundleKey.stdout).bundle, true);
  });

  it('explains mistakes and exits non-zero', async () => {
    const dir = dataDir();
    const noName = await runCli(['keys', 'create', '--data-dir', dir]);
    assert.notEqual(noName.code, 0);
    assert.match(noName.stderr, /--name NAME is required/);
    const unknown = await runCli(['keys', 'revoke', 'key_nope', '--data-dir', dir]);
    assert.notEqual(unknown.code, 0);
    assert.match(unknown.stderr, /no key with id key_nope/);
    const badSet = await runCli(['keys', 'set', 'key_nope', '--bundle', 'maybe', '--data-dir', dir]);
    assert.match(badSet.stderr, /takes on or off/);
  });
});
