/**
 * The fast, deterministic slice of the fuzz suite (`npm run fuzz` runs 100,000): a fixed
 * seed, a few hundred hostile inputs at every door of a real gateway process (so that a
 * crash shows as its exit), with /health watched throughout.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Keypair } from '@solana/web3.js';
import { rpc } from '../helpers/rpc';
import { INTERNAL_CODES, distinctFailures } from './answer-checks';
import { fuzzGateway, type DoorName } from './fuzz-gateway';
import { startFuzzTarget, type FuzzTarget } from './fuzz-target';
import { exchange } from './raw-http';

/** Per door (6,000 in all); about 15 s on two cores. */
const SLICE: Record<DoorName, number> = {
  'http bodies': 1_500,
  'read methods': 800,
  'json-rpc batches': 200,
  'methods × paths': 800,
  'raw http, main port': 1_000,
  'raw http, port + 1': 300,
  upgrades: 600,
  'websocket frames': 800,
};

let target: FuzzTarget;
before(async () => {
  target = await startFuzzTarget();
});
after(() => target?.close());

describe('fuzz slice', () => {
  it('attacks every door with hostile inputs: every answer well-formed, never a 5xx, an internal error, a dropped request or an exit, and /health answers throughout', async (t) => {
    const report = await fuzzGateway({ target, seed: 20_261_123, counts: SLICE });
    for (const door of report.doors) {
      t.diagnostic(
        `${door.door}: ${door.sent} sent${door.frames > 0 ? ` (${door.frames} frames)` : ''} in ${door.seconds.toFixed(1)} s, ${door.classes.size} answer classes, ${door.failures.length} failures`,
      );
    }
    // One of each kind of failure, with how many there were: the seed and index replay it (npm run fuzz -- --seed … --door …).
    const failures = distinctFailures(report.doors.flatMap((door) => door.failures)).map(({ first, count }) => ({ ...first, count }));
    assert.deepEqual(failures.slice(0, 12), []);
    assert.equal(target.exits, 0);
    for (const door of report.doors) {
      assert.equal(door.sent, SLICE[door.door as DoorName], `${door.door} sent ${door.sent}`);
      assert.ok(door.classes.size >= 4, `${door.door}: distinct answers: ${[...door.classes.keys()].join(', ')}`);
    }
    // Twice a second for as long as the run lasts, which is 3 s on a fast day and 15 s on a slow one.
    const seconds = report.doors.reduce((sum, door) => sum + door.seconds, 0);
    assert.ok(
      report.health.length >= Math.max(2, Math.floor(seconds * 2) - 2),
      `/health asked ${report.health.length} times in ${seconds.toFixed(1)} s`,
    );
  });

  it('a method named after an object property (valueOf, constructor, __proto__, toString) is not found, found by the full run (seed 7)', async () => {
    for (const method of ['valueOf', 'constructor', '__proto__', 'toString', 'hasOwnProperty']) {
      const answer = await rpc(target.url, target.key, method, ['valueOf']);
      assert.equal(answer.status, 200);
      assert.equal(answer.body.error.code, -32601);
      assert.ok(answer.body.error.message.startsWith(`Method not found: ${method} `), answer.body.error.message);
    }
  });

  // What the full run found, as the exact bytes: each test says what the answer must be.

  for (const port of ['main port', 'port + 1'] as const) {
    it(`CONNECT on the ${port} is answered with a 4xx, not dropped unanswered, found by the full run (seed 1)`, async () => {
      const result = await exchange({
        port: port === 'main port' ? target.port : target.wsPort,
        bytes: Buffer.from('CONNECT / HTTP/1.1\r\nHost: x\r\n\r\n'),
        methods: ['CONNECT'],
        halfClose: false,
        stopAfter: 1,
        timeoutMs: 2_000,
      });
      assert.match(String(result.answers[0]?.status), /^4\d\d$/, `${result.ending} with no answer`);
    });
  }

  it('HEAD /dashboard/events is answered (its headers), not left hanging, found by the full run (seed 1)', async () => {
    const result = await exchange({
      port: target.port,
      bytes: Buffer.from('HEAD /dashboard/events HTTP/1.1\r\nHost: x\r\n\r\n'),
      methods: ['HEAD'],
      halfClose: false,
      stopAfter: 1,
      timeoutMs: 2_000,
    });
    assert.equal(result.answers.length, 1, `no answer within 2 s (${result.ending})`);
  });

  it('getMinimumBalanceForRentExemption of more bytes than a usize holds is refused as invalid params, not as an exception of the ledger (-32091), found by the full run (seed 1)', async () => {
    for (const length of [1e300, 2 ** 64, Number.MAX_VALUE]) {
      const answer = await rpc(target.url, target.key, 'getMinimumBalanceForRentExemption', [length]);
      assert.equal(answer.status, 200);
      assert.ok(!INTERNAL_CODES.has(answer.body.error?.code), JSON.stringify(answer.body));
    }
  });

  it('simulateTransaction with options that are objects rather than strings is refused as invalid params, not as an exception (-32091), found by the slice (seed 20261123)', async () => {
    const hostile = { toString: 'x' };
    for (const config of [
      { encoding: hostile },
      { encoding: 'base64', accounts: { addresses: [], encoding: hostile } },
      { encoding: ['base64'] },
    ]) {
      const answer = await rpc(target.url, target.key, 'simulateTransaction', ['AAAA', config]);
      assert.equal(answer.status, 200);
      assert.equal(answer.body.error?.code, -32602, JSON.stringify(answer.body));
    }
  });

  it('an airdrop the ledger cannot carry out (to a sysvar, below rent exemption, more than the faucet has) is refused without an internal error (-32603), found by the full run (seed 1)', async () => {
    for (const params of [
      ['SysvarC1ock11111111111111111111111111111111', 5],
      [Keypair.generate().publicKey.toBase58(), 4_708],
      ['11111111111111111111111111111111', Number.MAX_SAFE_INTEGER],
    ]) {
      const answer = await rpc(target.url, target.key, 'requestAirdrop', params);
      assert.equal(answer.status, 200);
      assert.ok(!INTERNAL_CODES.has(answer.body.error?.code), `${JSON.stringify(params)}: ${JSON.stringify(answer.body)}`);
    }
  });
});
