/**
 * TPU fault injection through `/_faults` (its `tpu` field), over real QUIC sockets: refused
 * handshakes, streams taken and never executed, a stalled validator, a Retry demanded, no
 * stream credit; per validator or for all; and the refusals of bad settings.
 */
import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import { after, before, describe, it } from 'node:test';
import { Connection, Keypair } from '@solana/web3.js';
import bs58 from 'bs58';
import { parseTpuFaultSetting, TpuFaults } from '../../src/ledger/tpu-faults';
import { generateIdentity } from '../../src/quic/tpu-handshakes';
import { QuicClientEndpoint } from '../../src/quic/udp-endpoint';
import { startCluster } from '../helpers/cluster';
import { post } from '../helpers/rpc';
import { fundedKeypair, transferTx, waitForStatus } from '../helpers/solana';
import { closed, connectTpu, delivered, established, startTpuCluster, until, type TpuCluster } from '../helpers/tpu-cluster';

let cluster: TpuCluster;
let connection: Connection;
let client: QuicClientEndpoint;

before(async () => {
  cluster = await startTpuCluster({ slotMs: 50 });
  connection = new Connection(cluster.url, 'confirmed');
  client = await QuicClientEndpoint.open({ bindAddress: '127.0.0.1' });
});
after(async () => {
  await client.close();
  await cluster.close();
});

const setTpuFault = async (tpu: unknown) => {
  const answer = await post(`${cluster.url}/_faults`, { tpu });
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  return answer.body;
};
const identities = () => cluster.ledger.schedule.identities;
const portOf = (identity: string) => cluster.tpus.portOf(identity)!;
const leaderNow = () => cluster.ledger.schedule.leaderAt(cluster.ledger.currentSlot);

/** The first datagram a real client sends (its Initial, 1,200 bytes or more). */
async function clientInitial(): Promise<Buffer> {
  const capture = dgram.createSocket('udp4');
  try {
    return await new Promise<Buffer>((resolve) => {
      capture.once('message', (datagram) => resolve(datagram));
      capture.bind(0, '127.0.0.1', () => connectTpu(client, capture.address().port, generateIdentity(), { idleTimeoutMs: 500 }));
    });
  } finally {
    capture.close();
  }
}

/** The long-header packet type of the server's first answer to a client Initial: 0 Initial, 3 Retry. */
async function firstAnswerType(port: number, initial: Buffer): Promise<number> {
  const socket = dgram.createSocket('udp4');
  try {
    return await new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('no answer')), 2_000);
      socket.once('message', (datagram) => {
        clearTimeout(timer);
        assert.ok((datagram[0]! & 0x80) !== 0, 'a long header');
        resolve((datagram[0]! & 0x30) >> 4);
      });
      socket.bind(0, '127.0.0.1', () => socket.send(initial, port, '127.0.0.1'));
    });
  } finally {
    socket.close();
  }
}

describe('TPU faults at run time (POST /_faults {"tpu": …})', () => {
  it('refuse: a new connection is closed in its handshake on that validator only, saying why', async () => {
    const [refusing, other] = identities();
    const answer = await setTpuFault({ mode: 'refuse', validator: refusing });
    assert.deepEqual(answer.tpu.validators[refusing!], { mode: 'refuse', rate: 1 });
    try {
      const refused = connectTpu(client, portOf(refusing!), generateIdentity());
      await refused.waitFor(closed);
      // A transport close, CONNECTION_REFUSED (0x02), with the reason.
      const close = refused.closed()!;
      assert.deepEqual([close.by, close.code], ['peer', 0x02]);
      assert.match(close.reason, /connection refused \(injected TPU fault\)/);
      assert.ok(!refused.events.some((event) => event.type === 'established'));
      await connectTpu(client, portOf(other!), generateIdentity()).waitFor(established);
    } finally {
      await setTpuFault({ mode: 'none' });
    }
    await connectTpu(client, portOf(refusing!), generateIdentity()).waitFor(established);
  });

  it('drop: a transaction is taken (its stream acknowledged) and never executed; sent again without the fault, it lands', async () => {
    const alice = await fundedKeypair(connection);
    const bob = Keypair.generate();
    const tx = Buffer.from(await transferTx(connection, alice, bob.publicKey, 1_000_000), 'base64');
    const signature = bs58.encode(tx.subarray(1, 65));
    const opened = new Map(identities().map((identity) => [identity, connectTpu(client, portOf(identity), generateIdentity())]));
    await Promise.all([...opened.values()].map((c) => c.waitFor(established)));
    await until(() => [...opened.values()].every((c) => c.entry.connection.streams.credit > 0), 2_000);
    await setTpuFault({ mode: 'drop' });
    const dropped = cluster.tpus.inbox.counts.dropped;
    try {
      for (const [identity, c] of opened) {
        client.send(c.entry, tx, 1);
        await c.waitFor(delivered(1));
        assert.equal(cluster.tpus.inbox.heldBy(identity), 0);
      }
      assert.equal(cluster.tpus.inbox.counts.dropped, dropped + identities().length);
      // Every validator leads within a few dozen slots; none includes it.
      await new Promise((resolve) => setTimeout(resolve, 600));
      assert.deepEqual((await connection.getSignatureStatuses([signature])).value, [null]);
    } finally {
      await setTpuFault({ mode: 'none' });
    }
    const leader = leaderNow();
    client.send(opened.get(leader)!.entry, tx, 2);
    await waitForStatus(connection, signature, 10_000);
  });

  it('stall: a stalled validator takes nothing and its clients idle out; the others serve; cleared, it serves again', async () => {
    const [stalled, other] = identities();
    const toStalled = connectTpu(client, portOf(stalled!), generateIdentity(), { idleTimeoutMs: 1_000 });
    const toOther = connectTpu(client, portOf(other!), generateIdentity(), { idleTimeoutMs: 1_000 });
    await Promise.all([toStalled.waitFor(established), toOther.waitFor(established)]);
    await until(() => toStalled.entry.connection.streams.credit > 0 && toOther.entry.connection.streams.credit > 0, 2_000);
    await setTpuFault({ mode: 'stall', validator: stalled });
    const received = cluster.tpus.inbox.counts.received;
    try {
      client.send(toStalled.entry, Buffer.from('not even a transaction'), 1);
      client.send(toOther.entry, Buffer.from('not a transaction either'), 2);
      await toOther.waitFor(delivered(1));
      await toStalled.waitFor(closed, 5_000);
      assert.equal(toStalled.closed()!.by, 'idle');
      assert.deepEqual(toStalled.closed()!.undelivered, [1]);
      assert.equal(cluster.tpus.inbox.counts.received, received + 1, 'only the other validator took one');
    } finally {
      await setTpuFault({ mode: 'none' });
    }
    const again = connectTpu(client, portOf(stalled!), generateIdentity());
    await again.waitFor(established);
    await until(() => again.entry.connection.streams.credit > 0, 2_000);
    client.send(again.entry, Buffer.from('taken again'), 3);
    await again.waitFor(delivered(1));
  });

  it('retry: a new connection is sent a Retry first (and a real client lands through it); without the fault, an Initial', async () => {
    // A fresh Initial each time: a known connection ID goes to the connection it made.
    const [retrying, other] = identities();
    assert.equal(await firstAnswerType(portOf(retrying!), await clientInitial()), 0, 'no Retry without the fault');
    await setTpuFault({ mode: 'retry', validator: retrying });
    try {
      assert.equal(await firstAnswerType(portOf(retrying!), await clientInitial()), 3, 'a Retry');
      assert.equal(await firstAnswerType(portOf(other!), await clientInitial()), 0, 'only on that validator');
      const through = connectTpu(client, portOf(retrying!), generateIdentity());
      await through.waitFor(established);
      await until(() => through.entry.connection.streams.credit > 0, 2_000);
      client.send(through.entry, Buffer.from('through a Retry'), 1);
      await through.waitFor(delivered(1));
    } finally {
      await setTpuFault({ mode: 'none' });
    }
  });

  it('starve: a connection gets no stream credit and stays open; its transaction waits and is taken once the fault is cleared', async () => {
    const [starved, other] = identities();
    await setTpuFault({ mode: 'starve', validator: starved });
    const received = cluster.tpus.inbox.counts.received;
    const toStarved = connectTpu(client, portOf(starved!), generateIdentity());
    const toOther = connectTpu(client, portOf(other!), generateIdentity());
    try {
      await Promise.all([toStarved.waitFor(established), toOther.waitFor(established)]);
      await until(() => toOther.entry.connection.streams.credit > 0, 2_000);
      client.send(toStarved.entry, Buffer.from('waits for credit'), 1);
      client.send(toOther.entry, Buffer.from('taken at once'), 2);
      await toOther.waitFor(delivered(1));
      // Keep-alives go on; no credit comes, nothing is taken, and the connection stays.
      await new Promise((resolve) => setTimeout(resolve, 500));
      assert.equal(toStarved.entry.connection.streams.credit, 0);
      assert.equal(toStarved.closed(), undefined);
      assert.equal(cluster.tpus.inbox.counts.received, received + 1, 'only the other validator took one');
    } finally {
      await setTpuFault({ mode: 'none' });
    }
    // Cleared: the open connection is given credit, and what waited is taken.
    await toStarved.waitFor(delivered(1));
    assert.equal(toStarved.closed(), undefined);
    assert.equal(cluster.tpus.inbox.counts.received, received + 2);
  });

  it('a fault for all replaces the per-validator ones; GET /_faults shows them; none clears', async () => {
    await setTpuFault({ mode: 'stall', validator: identities()[3] });
    const all = await setTpuFault({ mode: 'refuse', rate: 0.5 });
    assert.deepEqual(all.tpu, { all: { mode: 'refuse', rate: 0.5 }, validators: {} });
    const both = await post(`${cluster.url}/_faults`, {
      mode: 'none',
      tpu: [{ mode: 'none' }, { mode: 'drop', validator: identities()[1] }],
    });
    assert.deepEqual(both.body, {
      mode: 'none',
      rate: 1,
      tpu: { all: { mode: 'none', rate: 1 }, validators: { [identities()[1]!]: { mode: 'drop', rate: 1 } } },
    });
    const shown = (await (await fetch(`${cluster.url}/_faults`)).json()) as { tpu: unknown };
    assert.deepEqual(shown.tpu, both.body.tpu);
    await setTpuFault({ mode: 'none' });
    assert.deepEqual(cluster.tpuFaults.current, { all: { mode: 'none', rate: 1 }, validators: {} });
  });

  it('refuses bad TPU fault settings with 400, naming what is wrong, and changes nothing', async () => {
    for (const [tpu, message] of [
      [{ mode: 'explode' }, /TPU fault mode must be one of none, refuse, drop, stall, retry, starve/],
      [{ mode: 'drop', rate: 2 }, /rate must be a number from 0 to 1/],
      [{ mode: 'stall', rate: 0.5 }, /stall takes no rate/],
      [{ mode: 'starve', rate: 0.5 }, /starve takes no rate/],
      [{ mode: 'refuse', validator: Keypair.generate().publicKey.toBase58() }, /one of the leader schedule's identities/],
      [42, /MODE\[:RATE\]\[@VALIDATOR\] or/],
    ] as const) {
      const answer = await post(`${cluster.url}/_faults`, { tpu });
      assert.equal(answer.status, 400);
      assert.match(answer.body.error, message);
    }
    assert.deepEqual(cluster.tpuFaults.current, { all: { mode: 'none', rate: 1 }, validators: {} });
    const noTpus = await startCluster(1);
    try {
      const answer = await post(`${noTpus.nodes[0]!.url}/_faults`, { tpu: { mode: 'stall' } });
      assert.deepEqual([answer.status, answer.body.error], [400, 'this node has no TPUs']);
    } finally {
      await noTpus.close();
    }
  });
});

describe('TPU fault settings as the --tpu-fault flag takes them', () => {
  it('parses MODE[:RATE][@VALIDATOR]', () => {
    const ids = ['A1', 'B2'];
    assert.deepEqual(parseTpuFaultSetting('stall', ids), { mode: 'stall', rate: 1 });
    assert.deepEqual(parseTpuFaultSetting('drop:0.25@B2', ids), { mode: 'drop', rate: 0.25, validator: 'B2' });
    assert.deepEqual(parseTpuFaultSetting('retry@A1', ids), { mode: 'retry', rate: 1, validator: 'A1' });
    assert.match(parseTpuFaultSetting('drop@C3', ids) as string, /validator/);
    assert.match(parseTpuFaultSetting('drop:x', ids) as string, /rate/);
  });

  it('draws refuse and drop at their rate, per validator before the setting for all', () => {
    let next = 0;
    const draws = [0.1, 0.9];
    const faults = new TpuFaults(() => draws[next++ % 2]!);
    faults.set({ mode: 'drop', rate: 0.5 });
    assert.deepEqual([faults.drops('A'), faults.drops('A')], [true, false]);
    faults.set({ mode: 'refuse', rate: 1, validator: 'B' });
    assert.deepEqual([faults.refuses('B'), faults.drops('B'), faults.modeOf('A'), faults.modeOf('B')], [true, false, 'drop', 'refuse']);
  });
});
