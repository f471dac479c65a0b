/**
 * Anti-MEV through the TPU route, measured beside the block-engine route on one local cluster
 * whose schedule has sandwiching leaders (the schedule of anti-mev-cluster.test.ts), with a
 * QUIC TPU per validator. Two gateways with the same validator policy: one sends protected
 * transactions to the block engine, the other straight to the trusted leaders' TPUs; their
 * protected transfers go out interleaved in the same waves, with unprotected ones through the
 * node's public sendTransaction as the control. The figures come from what the cluster
 * recorded (the landing slot, its leader, every validator whose TPU received a transaction
 * and who sent it), checked against what each gateway's journal says it did.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { after, before, describe, it } from 'node:test';
import { Keypair, LAMPORTS_PER_SOL } from '@solana/web3.js';
import type { SendEvidence } from '../../src/stores/journal';
import { ledgerTransfer } from '../helpers/cluster';
import { makeDataDir, startTestGateway, type TestGateway } from '../helpers/gateway';
import { post, rpc } from '../helpers/rpc';
import { startTpuCluster, type TpuCluster } from '../helpers/tpu-cluster';
import { exposuresAt, type Exposure } from '../helpers/exposure';

/** Nine validators (the keys of anti-mev-cluster.test.ts, so the same schedule), three of which sandwich. */
const identities = Array.from({ length: 9 }, (_, i) =>
  Keypair.fromSeed(createHash('sha256').update(`anti-mev test validator ${i}`).digest()).publicKey.toBase58(),
);
const sandwichers = identities.slice(0, 3);
const trusted = identities.slice(3);
const SLOT_MS = 100;
const WAVES = 100;
/**
 * Per wave: this many protected through each route and this many unprotected, 600 in all as
 * in anti-mev-cluster.test.ts. The cluster and both gateways share this process: with three
 * each, a window opening after a long hold releases some 150 to each route at once, and the
 * block engine's queue then lands some a slot or more past their window on a busy machine.
 */
const PER_WAVE = 2;
const WAVE_MS = 60;

type Route = 'jito' | 'tpu' | 'unprotected';

interface Sent {
  signature: string;
  route: Route;
  gateway: TestGateway;
  /** The cluster's slot when the client sent it. */
  slot: number;
}

type Landed = Sent & { exposure: Exposure };

const quantile = (values: number[], q: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;
};

describe('anti-MEV through the TPU route, beside the block engine, on a cluster with sandwiching leaders', () => {
  let cluster: TpuCluster;
  let jitoGw: TestGateway;
  let tpuGw: TestGateway;
  let tpuIdentity: string;
  const dir = makeDataDir();
  const policyFile = path.join(dir, 'policy.json');

  before(async () => {
    cluster = await startTpuCluster({ slotMs: SLOT_MS, ledger: { leaders: identities, sandwichers } });
    fs.writeFileSync(policyFile, JSON.stringify({ deny: sandwichers }));
    const keypair = Keypair.generate();
    const keypairFile = path.join(dir, 'identity.json');
    fs.writeFileSync(keypairFile, JSON.stringify([...keypair.secretKey]), { mode: 0o600 });
    tpuIdentity = keypair.publicKey.toBase58();
    // Slots of 100 ms: the slot is looked at every 50 ms, as often per slot as on mainnet (400 ms, 200 ms).
    const settings = { validatorPolicy: policyFile, leaderPollMs: 50 };
    // The node's sendTransaction is public: it forwards to the next leaders.
    const rpcUpstream = { type: 'rpc', urls: [cluster.url] };
    jitoGw = await startTestGateway(settings, {
      upstreams: { rpc: rpcUpstream, engine: { type: 'jito', urls: [`${cluster.url}/api/v1`] } },
      routes: { sendTransaction: ['rpc'], submitBatch: ['rpc'], sendBundle: ['engine'], antiMev: ['engine'], reads: 'rpc' },
    });
    tpuGw = await startTestGateway(
      { ...settings, identityKeypair: keypairFile },
      {
        // Three leader windows (12 slots), past the 8-slot safe window: that no sandwicher sees a
        // protected transaction is then the route's own doing (it sends to the window's trusted
        // leaders only), not a coincidence of reaching no further than the window does.
        upstreams: { rpc: rpcUpstream, leaders: { type: 'tpu', urls: [cluster.url], slotPollMs: 50, leaderWindows: 3 } },
        routes: { sendTransaction: ['rpc'], submitBatch: ['rpc'], sendBundle: [], antiMev: ['leaders'], reads: 'rpc' },
      },
    );
  });
  after(async () => {
    await jitoGw?.close();
    await tpuGw?.close();
    await cluster?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const exposures = (signatures: string[]) => exposuresAt(cluster.url, signatures);

  it('no protected transaction through the TPU route lands in or is seen by a sandwiching leader, and its evidence names every leader and address it went to', async (t) => {
    // The cluster's TPUs are the schedule's validators, sandwichers among them.
    assert.deepEqual(
      cluster.tpus.listeners.map((listener) => listener.identity),
      identities,
    );
    const payer = Keypair.generate();
    assert.ok('signature' in cluster.ledger.airdrop(payer.publicKey.toBytes(), 100n * BigInt(LAMPORTS_PER_SOL)));
    let lamports = 1_000_000;
    const transfer = () => ledgerTransfer(cluster.ledger, payer, lamports++);

    const send = async (tx: string, route: Route, gateway: TestGateway): Promise<Sent> => {
      const slot = cluster.ledger.currentSlot;
      const answer = await post(
        `${gateway.url}/${route === 'unprotected' ? '' : '?anti_mev=1'}`,
        // Without preflight: the transfers are valid, and the machine simulating them is the one measured.
        { jsonrpc: '2.0', id: 1, method: 'sendTransaction', params: [tx, { encoding: 'base64', skipPreflight: true }] },
        { 'x-api-key': gateway.key },
      );
      assert.equal(typeof answer.body.result, 'string', JSON.stringify(answer.body));
      return { signature: answer.body.result, route, gateway, slot };
    };
    // The same waves, slots and conditions for both routes: one of each in turn, then one unprotected
    // (through either gateway's rpc upstream).
    const lag = monitorEventLoopDelay({ resolution: 10 });
    lag.enable();
    const sent: Promise<Sent>[] = [];
    const start = (route: Route, gateway: TestGateway) => {
      const sending = send(transfer(), route, gateway);
      // Awaited together below, which reports the first failure; not an unhandled rejection meanwhile.
      sending.catch(() => {});
      sent.push(sending);
    };
    for (let wave = 0; wave < WAVES; wave++) {
      for (let i = 0; i < PER_WAVE; i++) {
        start('jito', jitoGw);
        start('tpu', tpuGw);
        start('unprotected', (wave + i) % 2 === 0 ? jitoGw : tpuGw);
      }
      await new Promise((resolve) => setTimeout(resolve, WAVE_MS));
    }
    const all = await Promise.all(sent);
    lag.disable();

    // Each lands, or (protected ones only) is held until its blockhash expires, which its journal says.
    const final = async (s: Sent) => {
      const tx = (await s.gateway.app.journal.find(s.signature))[0]!.transactions[0]!;
      return tx.state !== 'held' && tx.state !== 'forwarded' ? tx : undefined;
    };
    let seen: (Exposure | null)[] = [];
    const expiredWhileHeld: Record<Route, number> = { jito: 0, tpu: 0, unprotected: 0 };
    const deadline = Date.now() + 30_000;
    for (;;) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      seen = await exposures(all.map((s) => s.signature));
      const waiting = all.filter((_, i) => seen[i] === null);
      const finals = await Promise.all(waiting.map(final));
      if (finals.every((tx) => tx !== undefined)) {
        for (const [i, tx] of finals.entries()) {
          const s = waiting[i]!;
          assert.ok(
            s.route !== 'unprotected' && tx!.state === 'expired' && /held by anti-MEV protection and never sent/.test(tx!.reason!),
            `${s.route}: ${JSON.stringify(tx)}`,
          );
          expiredWhileHeld[s.route] += 1;
        }
        break;
      }
      assert.ok(Date.now() < deadline, `${waiting.length} transactions neither landed nor final`);
    }
    const landed: Landed[] = all.flatMap((s, i) => (seen[i] === null ? [] : [{ ...s, exposure: seen[i]! }]));
    const byRoute = (route: Route) => landed.filter((s) => s.route === route);
    const [viaJito, viaTpu, unprotected] = [byRoute('jito'), byRoute('tpu'), byRoute('unprotected')];
    assert.equal(unprotected.length, WAVES * PER_WAVE, 'every unprotected transaction landed');
    for (const [route, list] of [
      ['jito', viaJito],
      ['tpu', viaTpu],
    ] as const) {
      assert.equal(list.length + expiredWhileHeld[route], WAVES * PER_WAVE, route);
      assert.ok(list.length > 0, `no protected transaction landed through ${route}`);
    }

    // Protected, through either route: zero in a sandwiching leader's slot, zero seen by one.
    const inSandwicherSlot = (s: Landed) => sandwichers.includes(s.exposure.leader);
    const seenBySandwicher = (s: Landed) => s.exposure.sandwichedBy !== null || s.exposure.exposedTo.some((v) => sandwichers.includes(v));
    for (const [route, list] of [
      ['jito', viaJito],
      ['tpu', viaTpu],
    ] as const) {
      assert.deepEqual(
        list.filter(inSandwicherSlot).map((s) => s.signature),
        [],
        `protected through ${route}, landed in a sandwicher's slot`,
      );
      assert.deepEqual(
        list.filter(seenBySandwicher).map((s) => s.signature),
        [],
        `protected through ${route}, seen by a sandwicher`,
      );
    }
    // Through the block engine: privately, seen by the leader that included it only, never through a TPU.
    assert.deepEqual(
      viaJito.filter((s) => s.exposure.path !== 'private' || s.exposure.tpuSenders.length > 0).map((s) => s.exposure),
      [],
    );
    // Through the TPU route: only over QUIC (never the node's public sendTransaction, which would
    // land it by the public path), and sent only by this gateway's identity.
    assert.deepEqual(
      viaTpu.filter((s) => s.exposure.path !== 'tpu').map((s) => s.exposure),
      [],
    );
    assert.deepEqual(
      viaTpu.filter((s) => s.exposure.tpuSenders.length === 0 || s.exposure.tpuSenders.some((sender) => sender !== tpuIdentity)),
      [],
    );

    // Unprotected: in sandwichers' slots about as often as those slots came up while they were sent,
    // so a cluster that stopped modelling sandwichers fails here.
    const first = Math.min(...unprotected.map((s) => s.exposure.slot));
    const last = Math.max(...unprotected.map((s) => s.exposure.slot));
    let sandwicherSlots = 0;
    for (let slot = first; slot <= last; slot++) if (sandwichers.includes(cluster.ledger.schedule.leaderAt(slot))) sandwicherSlots += 1;
    const expectedShare = sandwicherSlots / (last - first + 1);
    const share = unprotected.filter(inSandwicherSlot).length / unprotected.length;
    const exposedShare = unprotected.filter(seenBySandwicher).length / unprotected.length;
    assert.ok(
      share > 0 && Math.abs(share - expectedShare) <= 0.12,
      `unprotected in sandwichers' slots: ${share} against their share of the slots, ${expectedShare}`,
    );

    // The journal's evidence, as a client reads it (getSubmission): every send under the policy,
    // to trusted leaders only; through the TPU, each leader contacted named with its TPU's
    // address, and every validator that saw the transaction among them.
    // A send reaches the cluster (which executes at once, in this process) a moment before its
    // evidence is journaled: on a loaded machine the landing can be seen first. Wait for it.
    const evidenceOf = async (s: Landed) => {
      for (let attempt = 0; ; attempt++) {
        const view = (await rpc(s.gateway.url, s.gateway.key, 'getSubmission', [s.signature])).body.result.value;
        assert.equal(view.antiMev, true);
        const evidence = view.transactions[0].evidence as SendEvidence[];
        if (evidence.length > 0 || attempt >= 100) return evidence;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    };
    const outsideWindow = { jito: 0, tpu: 0 };
    const contactedPerTx: number[] = [];
    for (const [route, list] of [
      ['jito', viaJito],
      ['tpu', viaTpu],
    ] as const) {
      for (const s of list) {
        const evidence = await evidenceOf(s);
        assert.ok(evidence.length > 0, JSON.stringify(evidence));
        for (const e of evidence) {
          assert.equal(e.gating, 'policy');
          assert.deepEqual(e.route, [route === 'jito' ? 'engine' : 'leaders']);
          assert.ok(
            e.leaders.every((leader) => trusted.includes(leader)),
            JSON.stringify(e),
          );
        }
        if (!evidence.some((e) => s.exposure.slot >= e.slot! && s.exposure.slot < e.slot! + e.windowSlots)) outsideWindow[route] += 1;
        if (route === 'jito') continue;
        const contacted = evidence.flatMap((e) => e.contacted ?? []);
        assert.ok(contacted.length > 0, `${s.signature}: no leader named: ${JSON.stringify(evidence)}`);
        for (const entry of contacted) {
          assert.ok(trusted.includes(entry.leader), `${s.signature}: evidence names ${entry.leader}, a leader the policy denies`);
          assert.equal(entry.upstream, 'leaders');
          assert.equal(entry.address, `127.0.0.1:${cluster.tpus.portOf(entry.leader)}`, JSON.stringify(entry));
        }
        // Each send went to leaders of the window it was let out in.
        for (const e of evidence)
          assert.ok(
            (e.contacted ?? []).every((entry) => e.leaders.includes(entry.leader)),
            JSON.stringify(e),
          );
        const named = new Set(contacted.map((entry) => entry.leader));
        assert.deepEqual(
          s.exposure.exposedTo.filter((validator) => !named.has(validator)),
          [],
          `${s.signature} was seen by validators its evidence does not name: ${JSON.stringify({ exposure: s.exposure, evidence })}`,
        );
        contactedPerTx.push(named.size);
      }
    }

    const delays = (list: Landed[]) => list.map((s) => s.exposure.slot - s.slot);
    const delayFigures = (list: Landed[]) => ({
      median: quantile(delays(list), 0.5),
      p99: quantile(delays(list), 0.99),
      mean: Number((delays(list).reduce((sum, d) => sum + d, 0) / list.length).toFixed(2)),
    });
    const jitoDelay = delayFigures(viaJito);
    const tpuDelay = delayFigures(viaTpu);
    // Pairs sent one after the other (a transaction through each route): how much later the TPU's landed.
    const slotOf = new Map(landed.map((s) => [s.signature, s.exposure.slot]));
    const paired: number[] = [];
    for (let i = 0; i + 1 < all.length; i += 3) {
      const [jitoSlot, tpuSlot] = [slotOf.get(all[i]!.signature), slotOf.get(all[i + 1]!.signature)];
      if (jitoSlot !== undefined && tpuSlot !== undefined) paired.push(tpuSlot - jitoSlot);
    }
    const figures = {
      slots: last - first + 1,
      sandwicherSlotShare: Number(expectedShare.toFixed(3)),
      protectedLanded: { jito: viaJito.length, tpu: viaTpu.length },
      protectedExpiredWhileHeld: { jito: expiredWhileHeld.jito, tpu: expiredWhileHeld.tpu },
      protectedInSandwicherSlots: { jito: 0, tpu: 0 },
      protectedSeenBySandwicher: { jito: 0, tpu: 0 },
      protectedLandedOutsideTheirWindow: outsideWindow,
      protectedDelaySlots: { jito: jitoDelay, tpu: tpuDelay },
      tpuExtraDelaySlots: {
        median: tpuDelay.median - jitoDelay.median,
        p99: tpuDelay.p99 - jitoDelay.p99,
        mean: Number((tpuDelay.mean - jitoDelay.mean).toFixed(2)),
        paired: {
          median: quantile(paired, 0.5),
          p1: quantile(paired, 0.01),
          p99: quantile(paired, 0.99),
          mean: Number((paired.reduce((sum, d) => sum + d, 0) / paired.length).toFixed(2)),
        },
      },
      tpuLeadersContacted: {
        mean: Number((contactedPerTx.reduce((sum, n) => sum + n, 0) / contactedPerTx.length).toFixed(2)),
        max: Math.max(...contactedPerTx),
      },
      eventLoopDelayMs: { p99: Math.round(lag.percentile(99) / 1e6), max: Math.round(lag.max / 1e6) },
      unprotected: {
        landed: unprotected.length,
        inSandwicherSlots: Number(share.toFixed(3)),
        seenBySandwicher: Number(exposedShare.toFixed(3)),
        delaySlots: delayFigures(unprotected),
      },
    };
    t.diagnostic(`anti-MEV TPU vs Jito figures: ${JSON.stringify(figures)}`);
  });

  it('a protected rebroadcast through the TPU goes to trusted leaders of its window, and its evidence names each leader and address it reached', async () => {
    const g = await startTestGateway(
      { validatorPolicy: policyFile, leaderPollMs: 50 },
      {
        upstreams: {
          rpc: { type: 'rpc', urls: [cluster.url] },
          leaders: { type: 'tpu', urls: [cluster.url], slotPollMs: 50, leaderWindows: 3 },
        },
        routes: { sendTransaction: ['rpc'], submitBatch: ['rpc'], sendBundle: [], antiMev: ['leaders'], reads: 'rpc' },
        rebroadcast: { intervalMs: 100, maxAttempts: 1000, queueCapacity: 1000 },
      },
    );
    try {
      const payer = Keypair.generate();
      cluster.ledger.airdrop(payer.publicKey.toBytes(), 10n * BigInt(LAMPORTS_PER_SOL));
      // The TPUs take it and drop it: it must be sent again, to the leaders of later windows.
      cluster.tpuFaults.set({ mode: 'drop', rate: 1 });
      const answer = await post(
        `${g.url}/?anti_mev=1`,
        {
          jsonrpc: '2.0',
          id: 1,
          method: 'sendTransaction',
          params: [ledgerTransfer(cluster.ledger, payer, 7_000_000), { encoding: 'base64' }],
        },
        { 'x-api-key': g.key },
      );
      const signature = answer.body.result as string;
      assert.equal(typeof signature, 'string', JSON.stringify(answer.body));
      const evidence = async () =>
        (await rpc(g.url, g.key, 'getSubmission', [signature])).body.result.value.transactions[0].evidence as SendEvidence[];
      for (let i = 0; i < 400 && (await evidence()).length < 2; i++) await new Promise((resolve) => setTimeout(resolve, 25));
      cluster.tpuFaults.set({ mode: 'none', rate: 1 });
      let exposure: Exposure | null = null;
      for (let i = 0; i < 400 && exposure === null; i++) {
        await new Promise((resolve) => setTimeout(resolve, 25));
        exposure = (await exposures([signature]))[0]!;
      }
      assert.ok(exposure !== null, 'it landed');
      // A round under way may still be sending it: once its status is known no round sends it again.
      await new Promise((resolve) => setTimeout(resolve, 300));
      exposure = (await exposures([signature]))[0]!;
      const sends = await evidence();
      assert.ok(
        sends.some((send) => send.attempt > 0),
        JSON.stringify(sends),
      );
      for (const send of sends) {
        assert.ok((send.contacted ?? []).length > 0, `send ${send.attempt} names no leader: ${JSON.stringify(send)}`);
        for (const entry of send.contacted!) {
          assert.ok(send.leaders.includes(entry.leader) && trusted.includes(entry.leader), JSON.stringify(send));
          assert.equal(entry.address, `127.0.0.1:${cluster.tpus.portOf(entry.leader)}`);
        }
      }
      const named = new Set(sends.flatMap((send) => send.contacted!.map((entry) => entry.leader)));
      assert.deepEqual(
        exposure.exposedTo.filter((validator) => !named.has(validator)),
        [],
        `seen by validators its evidence does not name: ${JSON.stringify({ exposure, sends })}`,
      );
      assert.equal(exposure.sandwichedBy, null);
    } finally {
      cluster.tpuFaults.set({ mode: 'none', rate: 1 });
      await g.close();
    }
  });
});
