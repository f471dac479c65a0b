/**
 * The local cluster's stake-weighted TPU quality of service: the numbers (unstaked 128
 * streams and 8 connections, staked up to 2,048 streams by share and 16 connections, a share
 * below 1/50,000 unstaked), the stakes file, and both limits as a client sees them over real
 * sockets (the credit its connection is given, connections past the limit closed with code 4).
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import bs58 from 'bs58';
import { StakeTable } from '../../src/ledger/stake-table';
import { TpuQos } from '../../src/ledger/tpu-qos';
import { generateIdentity, type TlsIdentity } from '../../src/quic/tpu-handshakes';
import { QuicClientEndpoint } from '../../src/quic/udp-endpoint';
import { closed, connectTpu, DEFAULT_QOS, established, startTpuCluster, until } from '../helpers/tpu-cluster';

const key = (identity: TlsIdentity) => bs58.encode(identity.publicKey);
function stakes(entries: Record<string, number>): StakeTable {
  const table = StakeTable.parse(JSON.stringify(entries));
  assert.ok(table instanceof StakeTable, String(table));
  return table;
}

describe('TPU QoS numbers (Agave’s stake-weighted QoS, with the default settings)', () => {
  const [staked, big, tiny, none, rest] = [
    generateIdentity(),
    generateIdentity(),
    generateIdentity(),
    generateIdentity(),
    generateIdentity(),
  ];
  // Of 100,000,000 lamports: staked 1%, big 3%, tiny 1/100,000, none nothing.
  const table = stakes({ [key(staked)]: 1_000_000, [key(big)]: 3_000_000, [key(tiny)]: 1_000, [key(none)]: 0, [key(rest)]: 95_999_000 });

  it('refuses a stakes file that is not an object of base58 identity → lamports, saying why', () => {
    assert.match(StakeTable.parse('[]') as string, /object/);
    assert.match(StakeTable.parse('{') as string, /not JSON/);
    assert.match(StakeTable.parse('{"0OIl": 1}') as string, /not a base58 identity/);
    assert.match(StakeTable.parse('{"abc": 1}') as string, /not a public key/);
    assert.match(StakeTable.parse(`{"${key(none)}": -1}`) as string, /non-negative integer/);
    assert.match(StakeTable.parse(`{"${key(none)}": 1.5}`) as string, /non-negative integer/);
    assert.equal((StakeTable.parse(`{"${key(none)}": "18446744073709551615"}`) as StakeTable).total, 18446744073709551615n);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'slipway-stakes-'));
    after(() => fs.rmSync(dir, { recursive: true, force: true }));
    assert.throws(() => StakeTable.read(path.join(dir, 'absent.json')), /stakes file .*absent\.json: ENOENT/);
  });

  it('gives 128 streams and 8 connections unstaked; 128 + share × 99,872 streams (at most 2,048) and 16 connections staked', () => {
    const fixed = stakes({ [key(staked)]: 1, [key(none)]: 99 });
    assert.equal(fixed.shareOf(key(staked)), 0.01);
    const qos = new TpuQos(table, DEFAULT_QOS);
    assert.equal(table.shareOf(key(staked)), 0.01);
    assert.equal(qos.streamWindow(staked.publicKey), 1_126, '1% of the stake: 128 + 0.01 × 99,872');
    assert.equal(new TpuQos(fixed, DEFAULT_QOS).streamWindow(staked.publicKey), 1_126);
    assert.equal(qos.streamWindow(big.publicKey), 2_048, 'capped');
    assert.equal(qos.maxConnections(staked.publicKey), 16);
    for (const unstaked of [tiny, none]) {
      assert.equal(qos.streamWindow(unstaked.publicKey), 128, 'below 1/50,000 of the stake counts as none');
      assert.equal(qos.maxConnections(unstaked.publicKey), 8);
    }
  });

  it('limits new connections per IP address per minute only when asked (off by default)', () => {
    let time = 0;
    const limited = new TpuQos(table, { ...DEFAULT_QOS, connectionsPerIpPerMinute: 2 }, () => time);
    assert.deepEqual(
      ['127.0.0.1:1', '127.0.0.1:2', '127.0.0.1:3', '127.0.0.2:1'].map((remote) => limited.admitAddress(remote)),
      [null, null, 'more than 2 new connections from 127.0.0.1 in a minute', null],
    );
    time += 60_000;
    assert.equal(limited.admitAddress('127.0.0.1:4'), null, 'a minute later');
    const unlimited = new TpuQos(table, DEFAULT_QOS);
    for (let i = 0; i < 100; i++) assert.equal(unlimited.admitAddress(`127.0.0.1:${i}`), null);
  });
});

describe('TPU QoS as a client sees it, over real sockets', () => {
  it('gives a staked identity’s connection more stream credit than an unstaked one’s', async () => {
    const staked = generateIdentity();
    const unstaked = generateIdentity();
    const cluster = await startTpuCluster({ stakes: stakes({ [key(staked)]: 1 }) });
    const client = await QuicClientEndpoint.open({ bindAddress: '127.0.0.1' });
    try {
      const port = cluster.tpus.listeners[0]!.port;
      const [a, b] = [connectTpu(client, port, staked), connectTpu(client, port, unstaked)];
      await Promise.all([a.waitFor(established), b.waitFor(established)]);
      await until(() => a.entry.connection.streams.credit > 0 && b.entry.connection.streams.credit > 0, 2_000);
      assert.equal(a.entry.connection.streams.credit, 2_048, 'all the stake: the cap');
      assert.equal(b.entry.connection.streams.credit, 128);
    } finally {
      await client.close();
      await cluster.close();
    }
  });

  it('closes connections past the limit with code 4: sooner for an unstaked identity than a staked one', async () => {
    const staked = generateIdentity();
    const unstaked = generateIdentity();
    const cluster = await startTpuCluster({
      stakes: stakes({ [key(staked)]: 1 }),
      qos: { unstakedConnections: 2, stakedConnections: 4 },
    });
    const client = await QuicClientEndpoint.open({ bindAddress: '127.0.0.1' });
    try {
      const port = cluster.tpus.listeners[0]!.port;
      const survivors = async (identity: TlsIdentity, count: number) => {
        const opened = [];
        for (let i = 0; i < count; i++) {
          const connection = connectTpu(client, port, identity);
          await connection.waitFor(established);
          opened.push(connection);
        }
        await new Promise((resolve) => setTimeout(resolve, 200));
        const closes = opened.map((connection) => connection.closed()).filter((close) => close !== undefined);
        assert.ok(
          closes.every((close) => close.by === 'peer' && close.code === 4),
          JSON.stringify(closes),
        );
        return opened.filter((connection) => connection.closed() === undefined).length;
      };
      assert.equal(await survivors(unstaked, 3), 2);
      assert.equal(await survivors(staked, 5), 4);
      const late = connectTpu(client, port, unstaked);
      await late.waitFor(closed, 3_000);
      assert.equal(late.closed()!.code, 4, 'still full');
    } finally {
      await client.close();
      await cluster.close();
    }
  });
});
