/**
 * Anti-MEV protection through the gateway's public interface, on the embedded ledger: fail
 * closed (protected transactions held, with the reason, never sent) while the policy is
 * unknown; a policy change taking effect without a restart; held transactions expiring
 * with the reason; the evidence in getSubmission and `bin/slipway submissions show`; and
 * the policy from a URL and from a Yellowstone Shield account.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import bs58 from 'bs58';
import client from 'prom-client';
import { Keypair, LAMPORTS_PER_SOL, PublicKey, type Connection } from '@solana/web3.js';
import { defaultValidatorIdentities } from '../../src/ledger/leader-schedule';
import { encodeShieldPolicy, SHIELD_PROGRAM_ID } from '../../src/protection/shield-policy';
import { makeDataDir, startTestGateway, type TestGateway } from '../helpers/gateway';
import { runCli, startServer } from '../helpers/process';
import { post, rpc, submitBatch } from '../helpers/rpc';
import { balanceOf, connect, fundedKeypair, transferTx } from '../helpers/solana';
import { until } from '../helpers/until';

const validators = defaultValidatorIdentities();

const counter = async (name: string) => (await client.register.getSingleMetric(name)!.get()).values.reduce((sum, v) => sum + v.value, 0);
const send = async (gw: TestGateway, tx: string, antiMev: boolean) =>
  (
    await post(
      `${gw.url}/${antiMev ? '?anti_mev=1' : ''}`,
      { jsonrpc: '2.0', id: 1, method: 'sendTransaction', params: [tx, { encoding: 'base64' }] },
      { 'x-api-key': gw.key },
    )
  ).body;
const submission = async (gw: TestGateway, signature: string) =>
  (await rpc(gw.url, gw.key, 'getSubmission', [signature])).body.result.value;
describe('anti-MEV through the gateway, with a validator policy file', () => {
  let gw: TestGateway;
  let connection: Connection;
  let policyDir: string;
  let policyFile: string;

  before(async () => {
    policyDir = makeDataDir();
    policyFile = path.join(policyDir, 'policy.json');
    // No file yet: the policy is unknown from the start.
    // Slots of 40 ms: a blockhash lives 6 s, long enough for held transactions to be released under load, short enough to watch one expire.
    gw = await startTestGateway({ slotMs: 40, validatorPolicy: policyFile, policyRefreshMs: 100 });
    connection = connect(gw.url, gw.key);
  });
  after(async () => {
    await gw.close();
    fs.rmSync(policyDir, { recursive: true, force: true });
  });

  it('fails closed while the policy cannot be read: protected transactions are held and say why, unprotected ones land; a new policy file releases them without a restart', async () => {
    const held = await counter('slipway_protected_held_total');
    const released = await counter('slipway_protected_released_total');
    const alice = await fundedKeypair(connection);
    const bob = Keypair.generate();
    const carol = Keypair.generate();

    const protectedSig = (await send(gw, await transferTx(connection, alice, bob.publicKey, 1_000_000), true)).result;
    assert.equal(typeof protectedSig, 'string');
    const batch = await submitBatch(
      gw.url,
      gw.key,
      [await transferTx(connection, alice, bob.publicKey, 2_000_000), await transferTx(connection, alice, bob.publicKey, 3_000_000)],
      [],
      '?anti_mev=1',
    );
    assert.equal(batch.body.code, 1);
    const unprotectedSig = (await send(gw, await transferTx(connection, alice, carol.publicKey, 4_000_000), false)).result;

    // The unprotected one lands; the protected ones are held, not sent: bob has nothing.
    await until(
      () => balanceOf(connection, carol.publicKey),
      (b) => b === 4_000_000,
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(await balanceOf(connection, bob.publicKey), 0);
    for (const signature of [protectedSig, ...batch.body.signatures]) {
      const view = await submission(gw, signature);
      assert.equal(view.state, 'held');
      assert.match(view.reason, /the validator policy .*policy\.json cannot be used: ENOENT/);
      assert.equal(view.transactions[0].sends, 0);
      // Standard status: not landed, not known to have failed.
      assert.equal((await rpc(gw.url, gw.key, 'getSignatureStatuses', [[signature]])).body.result.value[0], null);
    }
    assert.equal((await counter('slipway_protected_held_total')) - held, 3);

    // A policy that trusts every validator: released without a restart, and they land.
    fs.writeFileSync(policyFile, JSON.stringify({ deny: [] }));
    await until(
      () => balanceOf(connection, bob.publicKey),
      (b) => b === 6_000_000,
    );
    assert.equal((await counter('slipway_protected_released_total')) - released, 3);
    const view = await until(
      () => submission(gw, protectedSig),
      (v) => v.state === 'landed',
    );
    const [evidence] = view.transactions[0].evidence;
    assert.equal(evidence.gating, 'policy');
    assert.deepEqual(evidence.route, ['embedded']);
    assert.ok(evidence.heldMs >= 300, `held ${evidence.heldMs} ms`);
    assert.match(evidence.heldReason, /cannot be used: ENOENT/);
    assert.ok(evidence.leaders.length >= 1 && evidence.leaders.every((l: string) => validators.includes(l)));
    assert.ok(
      view.slot >= evidence.slot && view.slot < evidence.slot + evidence.windowSlots,
      JSON.stringify({ slot: view.slot, evidence }),
    );
    // The unprotected one carries no protection evidence.
    assert.equal((await submission(gw, unprotectedSig)).transactions[0].evidence, undefined);
  });

  it('holds while a leader of the window is denied, and expires a held transaction with the reason when its blockhash expires', async () => {
    const expired = await counter('slipway_protected_expired_while_held_total');
    const alice = await fundedKeypair(connection);
    const bob = Keypair.generate();
    fs.writeFileSync(policyFile, JSON.stringify({ deny: validators }));
    await new Promise((resolve) => setTimeout(resolve, 250)); // read again (every 100 ms)
    const signature = (await send(gw, await transferTx(connection, alice, bob.publicKey, 1_000_000), true)).result;
    const heldView = await submission(gw, signature);
    assert.equal(heldView.state, 'held');
    assert.match(heldView.reason, /^the leader of slot \d+, \w+, is not trusted by the validator policy$/);
    // 150 slots of 40 ms: the blockhash expires in about 6 s, and the journal says why it never went out.
    const view = await until(
      () => submission(gw, signature),
      (v) => v.state === 'expired',
      15_000,
    );
    assert.match(
      view.reason,
      /^held by anti-MEV protection and never sent \(the leader of slot \d+, \w+, is not trusted by the validator policy\); its blockhash expired before a safe window opened$/,
    );
    assert.equal(await balanceOf(connection, bob.publicKey), 0);
    assert.equal((await counter('slipway_protected_expired_while_held_total')) - expired, 1);
    fs.writeFileSync(policyFile, JSON.stringify({}));
  });

  it('bin/slipway submissions show prints each send with its window, route and hold', async () => {
    fs.writeFileSync(policyFile, JSON.stringify({ allow: validators }));
    await new Promise((resolve) => setTimeout(resolve, 250));
    const alice = await fundedKeypair(connection);
    const signature = (await send(gw, await transferTx(connection, alice, Keypair.generate().publicKey, 1_000_000), true)).result;
    await until(
      () => submission(gw, signature),
      (v) => v.state === 'landed',
    );
    const shown = await runCli(['submissions', 'show', signature, '--data-dir', gw.dataDir]);
    assert.equal(shown.code, 0, shown.stderr);
    assert.match(shown.stdout, / anti_mev via embedded /);
    assert.match(shown.stdout, new RegExp(`${signature}  landed slot \\d+  sends 1`));
    assert.match(
      shown.stdout,
      /1\. sent at \S+ via embedded: slot \d+, window \d+–\d+ led by \w+.*; every leader trusted by the validator policy/,
    );
    const json = JSON.parse((await runCli(['submissions', 'show', signature, '--json', '--data-dir', gw.dataDir])).stdout);
    assert.equal(json[0].transactions[0].sends[0].gating, 'policy');
  });
});

describe('anti-MEV without a policy', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startTestGateway({ slotMs: 20 });
  });
  after(() => gw.close());

  it('sends at once over the protected route, and the evidence says no leader gating applied', async () => {
    const connection = connect(gw.url, gw.key);
    const alice = await fundedKeypair(connection);
    const signature = (await send(gw, await transferTx(connection, alice, Keypair.generate().publicKey, 1_000_000), true)).result;
    const view = await until(
      () => submission(gw, signature),
      (v) => v.state === 'landed',
    );
    const [evidence] = view.transactions[0].evidence;
    assert.equal(evidence.gating, 'none');
    assert.deepEqual([evidence.heldMs, evidence.heldReason], [0, null]);
    assert.deepEqual(evidence.route, ['embedded']);
  });
});

describe('anti-MEV policies from a URL and from a Yellowstone Shield account', () => {
  it('a URL: the policy it serves is followed, and a change is picked up', async () => {
    let body = JSON.stringify({ deny: validators });
    const server = http.createServer((_request, response) => response.writeHead(200, { 'content-type': 'application/json' }).end(body));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const gw = await startTestGateway({
      slotMs: 100,
      validatorPolicy: `http://127.0.0.1:${(server.address() as { port: number }).port}/policy.json`,
      policyRefreshMs: 100,
    });
    try {
      const connection = connect(gw.url, gw.key);
      const alice = await fundedKeypair(connection);
      const bob = Keypair.generate();
      const signature = (await send(gw, await transferTx(connection, alice, bob.publicKey, 1_000_000), true)).result;
      assert.match((await submission(gw, signature)).reason, /is not trusted by the validator policy/);
      body = JSON.stringify({ allow: validators });
      await until(
        () => balanceOf(connection, bob.publicKey),
        (b) => b === 1_000_000,
        10_000,
      );
    } finally {
      await gw.close();
      server.close();
    }
  });

  it('a Shield policy account, read through the reads upstream: deny and allow strategies, and an account that is not a policy', async () => {
    const address = Keypair.generate().publicKey;
    // Slots of 100 ms: the held transaction's blockhash outlives every step of the test (15 s).
    const gw = await startTestGateway({ slotMs: 100, validatorPolicy: `shield:${address.toBase58()}`, policyRefreshMs: 100 });
    try {
      const ledger = gw.app.ledger!;
      const connection = connect(gw.url, gw.key);
      const alice = await fundedKeypair(connection);
      const bob = Keypair.generate();
      const load = (data: Buffer, owner = SHIELD_PROGRAM_ID) =>
        ledger.loadAccount(address.toBytes(), { lamports: BigInt(LAMPORTS_PER_SOL), data, owner: bs58.decode(owner) });

      // No account yet: unknown, held.
      const first = (await send(gw, await transferTx(connection, alice, bob.publicKey, 1_000_000), true)).result;
      assert.match((await submission(gw, first)).reason, /^the Shield policy \w+ cannot be used: no such account$/);
      // An account of another program: still unknown, saying so.
      load(encodeShieldPolicy('deny', []), PublicKey.default.toBase58());
      await until(
        () => submission(gw, first),
        (v) => /is owned by 11111111111111111111111111111111, not by the Shield program/.test(v.reason),
      );
      // Deny every validator: held for that reason now.
      load(encodeShieldPolicy('deny', validators));
      await until(
        () => submission(gw, first),
        (v) => /is not trusted by the validator policy/.test(v.reason),
      );
      assert.equal(await balanceOf(connection, bob.publicKey), 0);
      // Allow them all: released, landed.
      load(encodeShieldPolicy('allow', validators));
      await until(
        () => balanceOf(connection, bob.publicKey),
        (b) => b === 1_000_000,
        10_000,
      );
    } finally {
      await gw.close();
    }
  });
});

describe('anti-MEV across a crash', () => {
  it('a held transaction survives kill -9 and is sent after the restart, once the policy allows it', async () => {
    const dataDir = makeDataDir();
    const policyFile = path.join(dataDir, 'policy.json');
    const env = { SLIPWAY_VALIDATOR_POLICY: policyFile, SLIPWAY_POLICY_REFRESH_MS: '100' };
    try {
      const first = await startServer(dataDir, env);
      const key = first.initialKey!;
      let connection = connect(first.url, key);
      const alice = await fundedKeypair(connection);
      const bob = Keypair.generate();
      const tx = await transferTx(connection, alice, bob.publicKey, 1_000_000);
      const answer = await post(
        `${first.url}/?anti_mev=1`,
        { jsonrpc: '2.0', id: 1, method: 'sendTransaction', params: [tx, { encoding: 'base64' }] },
        { 'x-api-key': key },
      );
      const signature = answer.body.result as string;
      assert.equal(typeof signature, 'string', JSON.stringify(answer.body));
      first.child.kill('SIGKILL');
      await first.exited;

      fs.writeFileSync(policyFile, JSON.stringify({ deny: [] }));
      const second = await startServer(dataDir, env);
      try {
        connection = connect(second.url, key);
        await until(
          () => balanceOf(connection, bob.publicKey),
          (b) => b === 1_000_000,
          10_000,
        );
        const view = (await rpc(second.url, key, 'getSubmission', [signature])).body.result.value;
        await until(
          async () => (await rpc(second.url, key, 'getSubmission', [signature])).body.result.value.state,
          (s) => s === 'landed',
        );
        assert.match(view.transactions[0].evidence[0].heldReason, /cannot be used: ENOENT/);
      } finally {
        second.child.kill('SIGTERM');
        await second.exited;
      }
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
