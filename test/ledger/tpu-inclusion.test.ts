/**
 * The local cluster's TPUs over real QUIC sockets: a transfer sent to the current leader's
 * TPU lands at once; one sent to a validator that leads no slot soon waits for that
 * validator's window and lands in it; the identities of the validators that received it
 * and of the senders are recorded with it; a bad signature and an expired blockhash are
 * dropped; getClusterNodes lists every TPU, each answering QUIC with its validator's key.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Connection, Keypair, type PublicKey } from '@solana/web3.js';
import bs58 from 'bs58';
import fc from 'fast-check';
import type { LocalLedger } from '../../src/ledger/local-ledger';
import { generateIdentity } from '../../src/quic/tpu-handshakes';
import { QuicClientEndpoint } from '../../src/quic/udp-endpoint';
import { post } from '../helpers/rpc';
import { balanceOf, fundedKeypair, transferTx, waitForStatus } from '../helpers/solana';
import {
  closed,
  connectTpu,
  delivered,
  established,
  startTpuCluster,
  until,
  type TpuCluster,
  type TpuConnection,
} from '../helpers/tpu-cluster';

/** Agave's RpcContactInfo fields, in its order (rpc-client-types/src/response.rs). */
const CONTACT_INFO_FIELDS = [
  'pubkey',
  'gossip',
  'tvu',
  'tpu',
  'tpuQuic',
  'tpuForwards',
  'tpuForwardsQuic',
  'tpuVote',
  'serveRepair',
  'rpc',
  'pubsub',
  'version',
  'clientId',
  'featureSet',
  'shredVersion',
];

interface ExposureView {
  slot: number;
  leader: string;
  path: string;
  exposedTo: string[];
  tpuSenders: string[];
}

/** The first slot from `from` that `validator` leads. */
function nextWindow(ledger: LocalLedger, validator: string, from = ledger.currentSlot): number {
  let slot = from;
  while (ledger.schedule.leaderAt(slot) !== validator) slot++;
  return slot;
}

/**
 * A validator that leads none of the next `minAhead` slots: the one whose window comes first
 * after them (the nearest, so that the blockhash outlives the wait), or the furthest.
 */
function distantValidator(
  ledger: LocalLedger,
  minAhead: number,
  options: { except?: string[]; pick?: 'nearest' | 'furthest' } = {},
): { validator: string; window: number } {
  const candidates = ledger.schedule.identities
    .filter((identity) => !(options.except ?? []).includes(identity))
    .map((validator) => ({ validator, window: nextWindow(ledger, validator) }))
    .filter(({ window }) => window - ledger.currentSlot >= minAhead)
    .sort((a, b) => (options.pick === 'furthest' ? b.window - a.window : a.window - b.window));
  assert.ok(candidates.length > 0, `no validator is ${minAhead} slots from its window`);
  return candidates[0]!;
}

let cluster: TpuCluster;
let connection: Connection;
let client: QuicClientEndpoint;
const clientIdentity = generateIdentity();
const sender = bs58.encode(clientIdentity.publicKey);
/** One established connection per validator, by identity. */
const tpu = new Map<string, TpuConnection>();

before(async () => {
  cluster = await startTpuCluster({ slotMs: 50 });
  connection = new Connection(cluster.url, 'confirmed');
  client = await QuicClientEndpoint.open({ bindAddress: '127.0.0.1' });
  for (const identity of cluster.ledger.schedule.identities) {
    const opened = connectTpu(client, cluster.tpus.portOf(identity)!, clientIdentity, { idleTimeoutMs: 30_000 });
    tpu.set(identity, opened);
  }
  await Promise.all([...tpu.values()].map((opened) => opened.waitFor(established)));
});
after(async () => {
  await client.close();
  await cluster.close();
});

const call = async (method: string, params: unknown[] = []) => (await post(cluster.url, { jsonrpc: '2.0', id: 1, method, params })).body;
const exposureOf = async (signature: string): Promise<ExposureView | null> =>
  (await call('getTransactionExposure', [[signature]])).result.value[0];

let tag = 0;
/** Sends `tx` (bytes) on the connection to `validator`'s TPU and waits until the TPU acknowledged it whole. */
async function sendTo(validator: string, tx: Buffer, through = tpu.get(validator)!): Promise<void> {
  const before = through.events.filter((event) => event.type === 'delivered').length;
  assert.equal(client.send(through.entry, tx, tag++), true);
  await through.waitFor(delivered(before + 1));
}

async function transfer(to: PublicKey, lamports: number): Promise<{ tx: Buffer; signature: string }> {
  const alice = await fundedKeypair(connection);
  const tx = Buffer.from(await transferTx(connection, alice, to, lamports), 'base64');
  return { tx, signature: bs58.encode(tx.subarray(1, 65)) };
}

describe('the local cluster’s TPUs', () => {
  it('lands a transfer sent to the current leader’s TPU in that leader’s window (balances read through JSON-RPC)', async () => {
    const bob = Keypair.generate();
    const { tx, signature } = await transfer(bob.publicKey, 1_500_000);
    // From the start of a leader window: four slots (200 ms) for one send over an open connection.
    await until(() => cluster.ledger.currentSlot % 4 === 0, 2_000);
    const slot = cluster.ledger.currentSlot;
    const leader = cluster.ledger.schedule.leaderAt(slot);
    await sendTo(leader, tx);
    await waitForStatus(connection, signature);
    assert.equal(await balanceOf(connection, bob.publicKey), 1_500_000);
    const exposure = (await exposureOf(signature))!;
    assert.equal(exposure.leader, leader);
    assert.ok(exposure.slot >= slot && exposure.slot < slot + 4, `landed in slot ${exposure.slot}, the window is ${slot}–${slot + 3}`);
    assert.equal(exposure.path, 'tpu');
    assert.deepEqual(exposure.exposedTo, [leader]);
    assert.deepEqual(exposure.tpuSenders, [sender], 'the client certificate’s identity');
  });

  it('holds a transfer sent to a validator that leads no slot soon until its window, and lands it there', async () => {
    const bob = Keypair.generate();
    const { tx, signature } = await transfer(bob.publicKey, 2_500_000);
    const { validator, window } = distantValidator(cluster.ledger, 6);
    await sendTo(validator, tx);
    assert.ok(cluster.ledger.currentSlot < window, 'still before the window');
    assert.equal(cluster.tpus.inbox.heldBy(validator), 1);
    assert.deepEqual((await connection.getSignatureStatuses([signature])).value, [null], 'not landed before its window');
    assert.equal(await balanceOf(connection, bob.publicKey), 0);
    await waitForStatus(connection, signature, 10_000);
    const exposure = (await exposureOf(signature))!;
    assert.equal(exposure.slot, window, 'included as its validator’s window begins');
    assert.equal(exposure.leader, validator);
    const block = (await call('getBlock', [exposure.slot, { transactionDetails: 'signatures', rewards: true }])).result;
    assert.ok(block.signatures.includes(signature));
    assert.equal(block.rewards[0].pubkey, validator, 'the block’s producer is the validator that received it');
    assert.equal(await balanceOf(connection, bob.publicKey), 2_500_000);
  });

  it('records every validator that received a signature, in order, and every sender', async () => {
    const other = generateIdentity();
    const { tx, signature } = await transfer(Keypair.generate().publicKey, 3_000_000);
    const first = distantValidator(cluster.ledger, 5);
    const second = distantValidator(cluster.ledger, 5, { except: [first.validator] });
    await sendTo(first.validator, tx);
    await sendTo(second.validator, tx);
    const otherToSecond = connectTpu(client, cluster.tpus.portOf(second.validator)!, other);
    await otherToSecond.waitFor(established);
    await until(() => otherToSecond.entry.connection.streams.credit > 0, 2_000);
    await sendTo(second.validator, tx, otherToSecond);
    await waitForStatus(connection, signature, 10_000);
    const exposure = (await exposureOf(signature))!;
    assert.equal(exposure.leader, second.window < first.window ? second.validator : first.validator, 'the first window of the two');
    assert.deepEqual(exposure.exposedTo, [first.validator, second.validator]);
    assert.deepEqual(exposure.tpuSenders, [sender, bs58.encode(other.publicKey)]);
  });

  it('drops a transaction whose signature does not verify', async () => {
    const { tx, signature } = await transfer(Keypair.generate().publicKey, 1_000_000);
    tx[10]! ^= 1; // inside the first signature
    const invalid = cluster.tpus.inbox.counts.invalid;
    const leader = cluster.ledger.schedule.leaderAt(cluster.ledger.currentSlot);
    await sendTo(leader, tx);
    await until(() => cluster.tpus.inbox.counts.invalid === invalid + 1, 2_000);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const forged = bs58.encode(tx.subarray(1, 65));
    assert.deepEqual((await connection.getSignatureStatuses([forged, signature])).value, [null, null]);
    assert.equal(await exposureOf(forged), null);
  });

  it('lists every validator in getClusterNodes, in Agave’s shape, each TPU answering QUIC with its validator’s key', async () => {
    const nodes = (await call('getClusterNodes')).result as Record<string, unknown>[];
    assert.deepEqual(
      nodes.map((node) => node.pubkey),
      cluster.ledger.schedule.identities,
    );
    const probe = await QuicClientEndpoint.open({ bindAddress: '127.0.0.1' });
    try {
      for (const [index, node] of nodes.entries()) {
        assert.deepEqual(Object.keys(node), CONTACT_INFO_FIELDS);
        assert.equal(node.tpu, null, 'no UDP TPU: Agave takes QUIC only');
        assert.equal(node.rpc, index === 0 ? cluster.url.replace('http://', '') : null);
        const match = /^127\.0\.0\.1:(\d+)$/.exec(node.tpuQuic as string);
        assert.ok(match, `tpuQuic ${String(node.tpuQuic)}`);
        const opened = connectTpu(probe, Number(match[1]), generateIdentity());
        await opened.waitFor(established);
        const event = opened.events.find((e) => e.type === 'established') as { alpn: string };
        assert.equal(event.alpn, 'solana-tpu');
        assert.equal(bs58.encode(opened.serverIdentity()!), node.pubkey, 'the certificate carries the validator’s own identity');
      }
    } finally {
      await probe.close();
    }
  });

  it('refuses another ALPN in the handshake', async () => {
    const probe = await QuicClientEndpoint.open({ bindAddress: '127.0.0.1' });
    try {
      const opened = connectTpu(probe, cluster.tpus.listeners[0]!.port, generateIdentity(), { alpn: 'h3' });
      await opened.waitFor(closed);
      assert.deepEqual([opened.closed()!.by, opened.closed()!.code], ['peer', 0x178]);
      assert.ok(!opened.events.some((event) => event.type === 'established'));
    } finally {
      await probe.close();
    }
  });

  it('takes hostile streams (random bytes, cut-short and bit-flipped transactions) as invalid, and goes on serving', async () => {
    const { tx } = await transfer(Keypair.generate().publicKey, 1_000_000);
    const hostile = fc.sample(
      fc.oneof(
        fc.uint8Array({ minLength: 1, maxLength: 1232 }).map((bytes) => Buffer.from(bytes)),
        fc.integer({ min: 1, max: tx.length - 1 }).map((cut) => tx.subarray(0, cut)),
        fc.tuple(fc.integer({ min: 0, max: tx.length - 1 }), fc.integer({ min: 1, max: 255 })).map(([at, bits]) => {
          const copy = Buffer.from(tx);
          copy[at]! ^= bits;
          return copy;
        }),
      ),
      { seed: 5, numRuns: 300 },
    );
    const validator = cluster.ledger.schedule.identities[2]!;
    const through = connectTpu(client, cluster.tpus.portOf(validator)!, generateIdentity());
    await through.waitFor(established);
    const { received, invalid } = cluster.tpus.inbox.counts;
    hostile.forEach((stream, i) => client.send(through.entry, stream, i));
    await through.waitFor(delivered(hostile.length), 20_000);
    await until(() => cluster.tpus.inbox.counts.received === received + hostile.length, 2_000);
    // A flipped bit in a part no signature covers would leave a valid transaction: none of these is one.
    assert.equal(cluster.tpus.inbox.counts.invalid - invalid, hostile.length);
    assert.equal(through.closed(), undefined, 'the connection stays open');
  });

  it('got through all of it without an unexpected error', () => {
    assert.deepEqual(cluster.errors, []);
  });
});

describe('a held transaction whose blockhash expires before its validator leads', () => {
  it('is dropped at the window, as on a cluster', async () => {
    const expiring = await startTpuCluster({ slotMs: 10 });
    const probe = await QuicClientEndpoint.open({ bindAddress: '127.0.0.1' });
    try {
      const c = new Connection(expiring.url, 'confirmed');
      const alice = await fundedKeypair(c);
      const bob = Keypair.generate();
      const tx = Buffer.from(await transferTx(c, alice, bob.publicKey, 1_000_000), 'base64');
      const signedAt = expiring.ledger.currentSlot;
      const connections = new Map(
        expiring.ledger.schedule.identities.map((identity) => [
          identity,
          connectTpu(probe, expiring.tpus.portOf(identity)!, clientIdentity, { idleTimeoutMs: 30_000 }),
        ]),
      );
      await Promise.all([...connections.values()].map((opened) => opened.waitFor(established)));
      // Wait until the blockhash has a few slots left, then send to a validator whose window comes after them.
      let target: { validator: string; window: number } | undefined;
      await until(
        () => {
          if (expiring.ledger.currentSlot < signedAt + 140) return false;
          const best = distantValidator(expiring.ledger, 0, { pick: 'furthest' });
          if (best.window <= signedAt + 152) return false;
          target = best;
          return true;
        },
        6_000,
        'a validator whose window comes after the blockhash expires',
      );
      const through = connections.get(target!.validator)!;
      assert.equal(probe.send(through.entry, tx, 1), true);
      await through.waitFor(delivered(1));
      const executed = expiring.tpus.inbox.counts.executed;
      await until(() => expiring.ledger.currentSlot > target!.window, 5_000);
      assert.equal(expiring.tpus.inbox.counts.executed, executed + 1, 'handed to the ledger in its window');
      assert.deepEqual((await c.getSignatureStatuses([bs58.encode(tx.subarray(1, 65))])).value, [null], 'and refused there');
      assert.equal(await balanceOf(c, bob.publicKey), 0);
    } finally {
      await probe.close();
      await expiring.close();
    }
  });
});
