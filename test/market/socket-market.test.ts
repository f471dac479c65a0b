/**
 * `bin/slipway ledger --market LOAD` sends its market over the cluster's own sockets, as
 * outside senders would: run as a process for a few seconds, its blocks fill, and the market
 * transactions that landed arrived by all three paths (the TPUs over QUIC, with the market's
 * own certificate key; the node's `sendTransaction`; the block engine's `sendTransaction`
 * and `sendBundle`). And the socket sink,
 * pointed at nothing that answers, counts its failures, never throws, and closes.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import readline from 'node:readline';
import { after, describe, it } from 'node:test';
import bs58 from 'bs58';
import { JITO_TIP_ACCOUNTS } from '../../src/core/jito-tip-accounts';
import { nextLink, marketSenderIdentity } from '../../src/market/tpu-sender';
import { createSocketSink } from '../../src/market/socket-sink';
import { marketWallet, transferWire } from '../../src/market/market-wires';
import { contentionOf } from '../../src/ledger/block-producer';
import { startMarket } from '../../src/market/start-market';
import { startTpuCluster } from '../helpers/tpu-cluster';
import { makeDataDir } from '../helpers/gateway';
import { SLIPWAY } from '../helpers/process';
import { post } from '../helpers/rpc';
import { until } from '../helpers/until';

const SLOT_MS = 200;
const RUN_MS = 3_000;
const RAMP_SLOTS = 3;

const dirs: string[] = [];
const children: ChildProcess[] = [];
after(() => {
  children.forEach((child) => child.kill('SIGKILL'));
  dirs.forEach((dir) => fs.rmSync(dir, { recursive: true, force: true }));
});

async function startLedger(args: string[]): Promise<{ child: ChildProcess; url: string; exited: Promise<number | null> }> {
  const dir = makeDataDir();
  dirs.push(dir);
  const child = spawn(SLIPWAY, ['ledger', '--port', '0', '--data-dir', dir, '--log-level', 'warn', ...args], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(child);
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
  const url = await new Promise<string>((resolve, reject) => {
    readline.createInterface({ input: child.stdout! }).on('line', (line) => {
      const match = /listening on (http:\/\/\S+)/.exec(line);
      if (match) resolve(match[1]!);
    });
    void exited.then((code) => reject(new Error(`exited ${code}`)));
  });
  return { child, url, exited };
}

async function call(url: string, method: string, params: unknown[]): Promise<any> {
  const answer = await post(url, { jsonrpc: '2.0', id: 1, method, params });
  assert.equal(answer.body.error, undefined, `${method}: ${JSON.stringify(answer.body.error)}`);
  return answer.body.result;
}

describe('the market over the cluster sockets', { timeout: 20_000 }, () => {
  it('bin/slipway ledger --market 1 fills its blocks with market transactions that arrived by the TPUs, the node and the engine', async () => {
    const { child, url, exited } = await startLedger(['--market', '1', '--slot-ms', String(SLOT_MS)]);
    const started = (await call(url, 'getSlot', [])) as number;
    await new Promise((resolve) => setTimeout(resolve, RUN_MS));
    const last = ((await call(url, 'getSlot', [])) as number) - 1;

    const paths = new Map<string, number>();
    const tpuSenders = new Set<string>();
    const privates: string[] = [];
    let filled = 0;
    for (let slot = started + 1; slot <= last; slot++) {
      const stats = (await call(url, 'getSlotStats', [slot])) as { units: number; blockUnits: number; packed: number } | null;
      // The first slots ramp up (the market starts mid-slot, its TPU connections handshake).
      if (slot > started + RAMP_SLOTS && stats !== null && stats.units >= stats.blockUnits * 0.75) filled++;
      const block = (await call(url, 'getBlock', [slot, { transactionDetails: 'signatures' }])) as { signatures: string[] } | null;
      if (block === null || block.signatures.length === 0) continue;
      const exposures = (await call(url, 'getTransactionExposure', [block.signatures])).value as ({
        path: string;
        tpuSenders: string[];
      } | null)[];
      for (const [i, exposure] of exposures.entries()) {
        if (exposure === null) continue;
        paths.set(exposure.path, (paths.get(exposure.path) ?? 0) + 1);
        if (exposure.path === 'private' && privates.length < 60) privates.push(block.signatures[i]!);
        for (const sender of exposure.tpuSenders) tpuSenders.add(sender);
      }
    }
    assert.ok(last - started >= 5, `slots went by (${started} to ${last})`);
    const measured = last - started - RAMP_SLOTS;
    assert.ok(filled * 2 >= measured, `half the blocks or more at 75 % of their units (${filled} of ${measured})`);
    for (const path of ['tpu', 'public', 'private'])
      assert.ok((paths.get(path) ?? 0) > 0, `landed by ${path}: ${JSON.stringify(Object.fromEntries(paths))}`);
    // The engine's two doors: a bundle's transaction pays a tip account, a lone transaction does not.
    let tipped = 0;
    for (const signature of privates) {
      const tx = (await call(url, 'getTransaction', [signature, { encoding: 'json', maxSupportedTransactionVersion: 0 }])) as {
        transaction: { message: { accountKeys: string[] } };
      };
      if (tx.transaction.message.accountKeys.some((key) => JITO_TIP_ACCOUNTS.includes(key))) tipped++;
    }
    assert.ok(
      tipped > 0 && tipped < privates.length,
      `by the engine, as bundles and as transactions: ${tipped} of ${privates.length} tipped`,
    );
    assert.ok(tpuSenders.has(marketSenderIdentity().address), 'the TPUs knew the sender by the market certificate key');

    child.kill('SIGTERM');
    assert.equal(await exited, 0, 'stops cleanly, closing the sockets');
  });

  it('keeps one connection per validator, and after a stalled TPU connects again', async () => {
    const cluster = await startTpuCluster({
      slotMs: 100,
      ledger: { contention: contentionOf({ blockUnits: 0, market: 1, engineStakePercent: 90 }) },
    });
    const tpus = new Map(cluster.tpus.listeners.map(({ identity, port }) => [identity, { host: '127.0.0.1', port }]));
    const sink = createSocketSink({ rpcUrl: cluster.url, tpus });
    const market = startMarket(cluster.ledger, 1, 100, { sink })!;
    try {
      await until(
        () => sink.counts,
        (counts) => Object.values(counts).every((path) => path.ok > 0),
        5_000,
      );
      for (const { identity, endpoint } of cluster.tpus.listeners)
        assert.ok(endpoint.connectionCount <= 1, `one connection to ${identity}`);
      assert.ok(
        cluster.tpus.listeners.some(({ endpoint }) => endpoint.connectionCount === 1),
        'the leaders it sent to are connected',
      );

      // Every TPU stalls: nothing is acknowledged, the connections close after 2 s and back off.
      cluster.tpuFaults.set({ mode: 'stall', rate: 1 });
      const stalled = await until(
        () => sink.tpuLinks(),
        (links) => Object.values(links).includes('backing-off'),
        5_000,
      );
      cluster.tpuFaults.set({ mode: 'none', rate: 1 });
      const failed = Object.keys(stalled).filter((validator) => stalled[validator] === 'backing-off');
      const delivered = sink.counts.tpu.ok;
      // Each that failed is connected again once it is sent to after its back-off, and delivers.
      await until(
        () => ({ links: sink.tpuLinks(), ok: sink.counts.tpu.ok }),
        ({ links, ok }) => failed.every((validator) => links[validator] === 'open') && ok > delivered + 20,
        5_000,
      );
      assert.deepEqual(cluster.errors, []);
    } finally {
      market.stop();
      await sink.close();
      await cluster.close();
    }
  });

  it('counts what it cannot deliver (no node, no TPU), never throws, and closes', async () => {
    // A port nothing listens on: bound, then closed.
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as net.AddressInfo;
    await new Promise((resolve) => server.close(resolve));
    const sink = createSocketSink({ rpcUrl: `http://127.0.0.1:${port}`, tpus: new Map([['v1', { host: '127.0.0.1', port }]]) });
    let closed = false;
    try {
      const wire = transferWire({
        from: marketWallet(0),
        to: marketWallet(1).publicKey,
        lamports: 1,
        blockhash: Buffer.alloc(32),
        price: 0,
      });
      for (let i = 0; i < 100; i++) {
        sink.sendTransaction(wire, 'tpu', ['v1', 'unknown validator']);
        sink.sendTransaction(wire, 'rpc', []);
        sink.sendTransaction(wire, 'engine', []);
        sink.sendBundle([wire]);
      }
      // Past the bound of requests in flight, the rest are shed at once.
      assert.ok(sink.counts.rpc.failed + sink.counts.engine.failed + sink.counts.bundle.failed > 0, JSON.stringify(sink.counts));
      await until(
        () => sink.counts,
        (counts) => ['rpc', 'engine', 'bundle'].every((path) => counts[path as 'rpc'].failed === 100),
        5_000,
      );
      assert.equal(sink.counts.tpu.failed >= 100, true, `the unknown validator's sends failed: ${JSON.stringify(sink.counts.tpu)}`);
      assert.equal(sink.counts.tpu.ok, 0);
      await sink.close();
      closed = true;
      sink.sendTransaction(wire, 'tpu', ['v1']);
      sink.sendTransaction(wire, 'rpc', []);
      assert.equal(sink.counts.rpc.failed, 101, 'after close: counted, not sent');
    } finally {
      if (!closed) await sink.close();
    }
  });

  it('backs a TPU off after a failed connection, doubling, and not after a clean close', () => {
    const open = { state: 'idle', failures: 0 } as const;
    const first = nextLink(open, { by: 'idle', undelivered: 0, established: false }, 1_000);
    assert.deepEqual(first, { state: 'backing-off', until: 1_100, failures: 1 }, 'no handshake');
    const second = nextLink(first, { by: 'peer', undelivered: 3, established: true }, 2_000);
    assert.deepEqual(second, { state: 'backing-off', until: 2_200, failures: 2 });
    assert.deepEqual(nextLink(second, { by: 'idle', undelivered: 0, established: true }, 3_000), { state: 'idle', failures: 2 });
    assert.deepEqual(nextLink(open, { by: 'local', undelivered: 5, established: true }, 0), { state: 'idle', failures: 0 });
    let link: ReturnType<typeof nextLink> = open;
    for (let i = 0; i < 20; i++) link = nextLink(link, { by: 'reset', undelivered: 0, established: true }, 0);
    assert.deepEqual(link, { state: 'backing-off', until: 5_000, failures: 20 }, 'capped at 5 s');
    assert.equal(bs58.decode(marketSenderIdentity().address).length, 32);
  });
});
