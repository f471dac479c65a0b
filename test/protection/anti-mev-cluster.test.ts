/**
 * Anti-MEV protection on a local cluster whose schedule has sandwiching leaders: the figures
 * the protection promises, measured from what the cluster itself recorded (the landing
 * slot, its leader, and every leader that saw each transaction), not from what the gateway
 * says of itself.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Keypair, LAMPORTS_PER_SOL } from '@solana/web3.js';
import type { SendEvidence } from '../../src/stores/journal';
import { ledgerTransfer, startCluster, type Cluster } from '../helpers/cluster';
import { makeDataDir, startTestGateway, type TestGateway } from '../helpers/gateway';
import { post, rpc, submitBatch } from '../helpers/rpc';
import { exposuresAt, type Exposure } from '../helpers/exposure';

/** Nine validators (fixed keys, so every run draws the same schedule), three of which sandwich: a third of the leaders. */
const identities = Array.from({ length: 9 }, (_, i) =>
  Keypair.fromSeed(createHash('sha256').update(`anti-mev test validator ${i}`).digest()).publicKey.toBase58(),
);
const sandwichers = identities.slice(0, 3);
const SLOT_MS = 100;
const WAVES = 100;
const PER_WAVE = 3;

interface Sent {
  signature: string;
  protected: boolean;
  /** The cluster's slot when the client sent it. */
  slot: number;
}

const quantile = (values: number[], q: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;
};

describe('anti-MEV on a local cluster with sandwiching leaders', () => {
  let cluster: Cluster;
  let gw: TestGateway;
  let policyFile: string;
  let policyDir: string;

  before(async () => {
    cluster = await startCluster(1, SLOT_MS, { leaders: identities, sandwichers });
    const node = cluster.nodes[0]!.url;
    policyDir = makeDataDir();
    policyFile = path.join(policyDir, 'policy.json');
    fs.writeFileSync(policyFile, JSON.stringify({ deny: sandwichers }));
    gw = await startTestGateway(
      // Slots of 100 ms: the leader tracker looks at the slot every 50 ms, as often per slot as on mainnet (400 ms, 200 ms).
      { validatorPolicy: policyFile, leaderPollMs: 50 },
      {
        upstreams: {
          // The node's sendTransaction is public: it forwards to the next leaders.
          rpc: { type: 'rpc', urls: [node] },
          // The block engine's is private: only the leader that includes it sees it.
          engine: { type: 'jito', urls: [`${node}/api/v1`] },
        },
        routes: { sendTransaction: ['rpc'], submitBatch: ['rpc'], sendBundle: ['engine'], antiMev: ['engine'], reads: 'rpc' },
      },
    );
  });
  after(async () => {
    await gw.close();
    await cluster.close();
    fs.rmSync(policyDir, { recursive: true, force: true });
  });

  const exposures = (signatures: string[]) => exposuresAt(cluster.nodes[0]!.url, signatures);

  it('no protected transaction lands in or is exposed to a sandwiching leader; unprotected ones land there in about their share', async (t) => {
    const payer = Keypair.generate();
    assert.ok('signature' in cluster.ledger.airdrop(payer.publicKey.toBytes(), 100n * BigInt(LAMPORTS_PER_SOL)));
    const transfer = (n: number) => ledgerTransfer(cluster.ledger, payer, 1_000_000 + n);

    const sent: Promise<Sent>[] = [];
    const send = async (tx: string, isProtected: boolean): Promise<Sent> => {
      const slot = cluster.ledger.currentSlot;
      const answer = await post(
        `${gw.url}/${isProtected ? '?anti_mev=1' : ''}`,
        { jsonrpc: '2.0', id: 1, method: 'sendTransaction', params: [tx, { encoding: 'base64' }] },
        { 'x-api-key': gw.key },
      );
      assert.equal(typeof answer.body.result, 'string', JSON.stringify(answer.body));
      return { signature: answer.body.result, protected: isProtected, slot };
    };
    for (let wave = 0; wave < WAVES; wave++) {
      for (let i = 0; i < PER_WAVE; i++) {
        sent.push(send(transfer(wave * 2 * PER_WAVE + i), true));
        sent.push(send(transfer(wave * 2 * PER_WAVE + PER_WAVE + i), false));
      }
      await new Promise((resolve) => setTimeout(resolve, 60));
    }
    const all = await Promise.all(sent);

    // Each lands, or (protected ones only) is held until its blockhash expires, which the journal says.
    const final = async (s: Sent) => {
      const tx = (await gw.app.journal.find(s.signature))[0]!.transactions[0]!;
      return tx.state !== 'held' && tx.state !== 'forwarded' ? tx : undefined;
    };
    let seen: (Exposure | null)[] = [];
    let expiredWhileHeld: number;
    const deadline = Date.now() + 30_000;
    for (;;) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      seen = await exposures(all.map((s) => s.signature));
      const waiting = all.filter((s, i) => seen[i] === null);
      const finals = await Promise.all(waiting.map(final));
      if (finals.every((tx) => tx !== undefined)) {
        for (const [i, tx] of finals.entries()) {
          assert.ok(
            waiting[i]!.protected && tx!.state === 'expired' && /held by anti-MEV protection and never sent/.test(tx!.reason!),
            JSON.stringify(tx),
          );
        }
        expiredWhileHeld = finals.length;
        break;
      }
      assert.ok(Date.now() < deadline, `${waiting.length} transactions neither landed nor final`);
    }
    const landed = all.flatMap((s, i) => (seen[i] === null ? [] : [{ ...s, exposure: seen[i]! }]));
    const protectedOnes = landed.filter((s) => s.protected);
    const unprotected = landed.filter((s) => !s.protected);
    assert.equal(unprotected.length, WAVES * PER_WAVE, 'every unprotected transaction landed');
    assert.equal(protectedOnes.length + expiredWhileHeld, WAVES * PER_WAVE);
    assert.ok(protectedOnes.length > 0);

    // Protected: zero in a sandwiching leader's slot, zero seen by one.
    const inSandwicherSlot = (s: (typeof landed)[number]) => sandwichers.includes(s.exposure.leader);
    assert.deepEqual(
      protectedOnes.filter(inSandwicherSlot).map((s) => s.signature),
      [],
    );
    assert.deepEqual(
      protectedOnes.filter((s) => s.exposure.sandwichedBy !== null).map((s) => s.signature),
      [],
    );
    assert.ok(protectedOnes.every((s) => s.exposure.path === 'private'));

    // Unprotected: in sandwichers' slots about as often as those slots came up while they were sent.
    const first = Math.min(...unprotected.map((s) => s.exposure.slot));
    const last = Math.max(...unprotected.map((s) => s.exposure.slot));
    let sandwicherSlots = 0;
    for (let slot = first; slot <= last; slot++) if (sandwichers.includes(cluster.ledger.schedule.leaderAt(slot))) sandwicherSlots += 1;
    const expectedShare = sandwicherSlots / (last - first + 1);
    const share = unprotected.filter(inSandwicherSlot).length / unprotected.length;
    const exposedShare = unprotected.filter((s) => s.exposure.sandwichedBy !== null).length / unprotected.length;
    assert.ok(
      share > 0 && Math.abs(share - expectedShare) <= 0.12,
      `unprotected in sandwichers' slots: ${share} against their share of the slots, ${expectedShare}`,
    );

    // The journal's evidence agrees with the cluster: each protected one landed inside the window it was sent in, led by trusted leaders.
    for (const s of protectedOnes) {
      // A send reaches the cluster (which executes at once, in this process) a moment before its
      // evidence is journaled: on a loaded machine the landing can be seen first. Wait for it.
      let entry = (await gw.app.journal.find(s.signature))[0]!;
      for (let attempt = 0; attempt < 100 && entry.transactions[0]!.sends.length === 0; attempt++) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        entry = (await gw.app.journal.find(s.signature))[0]!;
      }
      const evidence: SendEvidence = entry.transactions[0]!.sends[0]!;
      assert.ok(evidence !== undefined, `no send of ${s.signature} was journaled: ${JSON.stringify(entry.transactions[0])}`);
      assert.equal(evidence.gating, 'policy');
      assert.deepEqual(evidence.route, ['engine']);
      assert.ok(
        evidence.leaders.every((leader) => !sandwichers.includes(leader)),
        JSON.stringify(evidence),
      );
      assert.ok(
        s.exposure.slot >= evidence.slot! && s.exposure.slot < evidence.slot! + evidence.windowSlots,
        `landed in slot ${s.exposure.slot}, outside ${JSON.stringify(evidence)}`,
      );
      if (evidence.heldReason !== null)
        assert.ok(evidence.heldMs > 0 && /not trusted by the validator policy/.test(evidence.heldReason), JSON.stringify(evidence));
    }

    const delays = (list: typeof landed) => list.map((s) => s.exposure.slot - s.slot);
    const held = protectedOnes.filter((s) => s.exposure.slot - s.slot > 0).length;
    const figures = {
      protectedLanded: protectedOnes.length,
      protectedExpiredWhileHeld: expiredWhileHeld,
      unprotected: unprotected.length,
      slots: last - first + 1,
      sandwicherSlotShare: Number(expectedShare.toFixed(3)),
      unprotectedInSandwicherSlots: Number(share.toFixed(3)),
      unprotectedExposedToSandwicher: Number(exposedShare.toFixed(3)),
      protectedInSandwicherSlots: 0,
      protectedHeldAtLeastASlot: held,
      protectedDelaySlots: { median: quantile(delays(protectedOnes), 0.5), p99: quantile(delays(protectedOnes), 0.99) },
      unprotectedDelaySlots: { median: quantile(delays(unprotected), 0.5), p99: quantile(delays(unprotected), 0.99) },
    };
    t.diagnostic(`anti-MEV figures: ${JSON.stringify(figures)}`);
  });

  it('a protected batch: its members wait together, and each shows the evidence of its send through getSubmission', async () => {
    const payer = Keypair.generate();
    cluster.ledger.airdrop(payer.publicKey.toBytes(), 10n * BigInt(LAMPORTS_PER_SOL));
    const txs = [1, 2, 3].map((n) => ledgerTransfer(cluster.ledger, payer, 5_000_000 + n));
    const answer = await submitBatch(gw.url, gw.key, txs, [], '?anti_mev=1');
    assert.equal(answer.body.code, 1, JSON.stringify(answer.body));
    const signatures: string[] = answer.body.signatures;
    let landed: (Exposure | null)[] = [];
    for (let i = 0; i < 200 && !(landed.length === 3 && landed.every((e) => e !== null)); i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      landed = await exposures(signatures);
    }
    for (const exposure of landed) {
      assert.ok(exposure !== null && !sandwichers.includes(exposure.leader) && exposure.sandwichedBy === null, JSON.stringify(exposure));
    }
    // Sent in one decision: the same window for every member.
    assert.equal(new Set(landed.map((e) => e!.slot)).size, 1);
    const views = await Promise.all(signatures.map(async (s) => (await rpc(gw.url, gw.key, 'getSubmission', [s])).body.result.value));
    for (const view of views) {
      assert.equal(view.kind, 'batch member');
      assert.equal(view.antiMev, true);
      const [member] = view.transactions;
      assert.equal(member.sends, 1);
      assert.equal(member.evidence[0].gating, 'policy');
      assert.deepEqual(member.evidence[0].route, ['engine']);
    }
    // Another key does not see it.
    assert.equal((await rpc(gw.url, gw.plainKey, 'getSubmission', [signatures[0]])).body.result.value, null);
  });

  it('with the leader schedule unavailable, protected transactions are held saying why, and unprotected ones are unaffected', async () => {
    const split = await startCluster(2, SLOT_MS, { leaders: identities, sandwichers });
    const [reads, sends] = split.nodes.map((n) => n.url) as [string, string];
    // Reads, and with them the leader schedule, from one node; transactions through the other.
    const g = await startTestGateway(
      { validatorPolicy: policyFile, leaderPollMs: 50 },
      {
        upstreams: {
          reads: { type: 'rpc', urls: [reads] },
          rpc: { type: 'rpc', urls: [sends] },
          engine: { type: 'jito', urls: [`${sends}/api/v1`] },
        },
        routes: { sendTransaction: ['rpc'], submitBatch: ['rpc'], sendBundle: ['engine'], antiMev: ['engine'], reads: 'reads' },
        requestTimeoutMs: 100,
      },
    );
    const exposureOn = async (signature: string) =>
      (await post(sends, { jsonrpc: '2.0', id: 1, method: 'getTransactionExposure', params: [[signature]] })).body.result
        .value[0] as Exposure | null;
    try {
      const payer = Keypair.generate();
      split.ledger.airdrop(payer.publicKey.toBytes(), 10n * BigInt(LAMPORTS_PER_SOL));
      const transfer = (lamports: number) => ledgerTransfer(split.ledger, payer, lamports);
      // Without preflight: the node that would simulate is the one that is down.
      const sendTx = async (tx: string, isProtected: boolean) => {
        const answer = await post(
          `${g.url}/${isProtected ? '?anti_mev=1' : ''}`,
          { jsonrpc: '2.0', id: 1, method: 'sendTransaction', params: [tx, { encoding: 'base64', skipPreflight: true }] },
          { 'x-api-key': g.key },
        );
        assert.equal(typeof answer.body.result, 'string', JSON.stringify(answer.body));
        return answer.body.result as string;
      };

      // First the tracker must know the schedule (a protected transaction goes out), so that
      // what follows tests a schedule gone stale, not one never learned (a busy machine is slow to start).
      const first = await sendTx(transfer(3_000_000), true);
      for (let i = 0; i < 400 && (await exposureOn(first)) === null; i++) await new Promise((resolve) => setTimeout(resolve, 25));
      assert.notEqual(await exposureOn(first), null, 'the tracker learned the schedule');
      split.nodes[0]!.fault('error');
      // The tracker's knowledge goes stale after 2 s without an answer.
      await new Promise((resolve) => setTimeout(resolve, 2_300));
      const shielded = await sendTx(transfer(1_000_000), true);
      const plain = await sendTx(transfer(2_000_000), false);
      for (let i = 0; i < 100 && (await exposureOn(plain)) === null; i++) await new Promise((resolve) => setTimeout(resolve, 20));
      assert.notEqual(await exposureOn(plain), null, 'the unprotected one landed');
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert.equal(await exposureOn(shielded), null, 'the protected one was not sent');
      const [entry] = await g.app.journal.find(shielded);
      assert.equal(entry!.transactions[0]!.state, 'held');
      assert.match(
        entry!.transactions[0]!.reason!,
        /^the leader schedule is stale \(last slot seen \d+ ms ago\): every endpoint failed: http:\S+: HTTP 503$/,
      );

      // The node answers again: the protected one goes out in a safe window.
      split.nodes[0]!.fault('none');
      let exposure: Exposure | null = null;
      for (let i = 0; i < 400 && exposure === null; i++) {
        await new Promise((resolve) => setTimeout(resolve, 25));
        exposure = await exposureOn(shielded);
      }
      assert.ok(exposure !== null && !sandwichers.includes(exposure.leader) && exposure.sandwichedBy === null, JSON.stringify(exposure));
    } finally {
      await g.close();
      await split.close();
    }
  });

  it('protected rebroadcasts wait for a safe window too, and each is journaled with its evidence', async () => {
    const node = cluster.nodes[0]!;
    const dir = makeDataDir();
    const file = path.join(dir, 'policy.json');
    fs.writeFileSync(file, JSON.stringify({ deny: sandwichers }));
    const g = await startTestGateway(
      { validatorPolicy: file, leaderPollMs: 50, policyRefreshMs: 100 },
      {
        upstreams: { rpc: { type: 'rpc', urls: [node.url] }, engine: { type: 'jito', urls: [`${node.url}/api/v1`] } },
        routes: { sendTransaction: ['rpc'], submitBatch: ['rpc'], sendBundle: ['engine'], antiMev: ['engine'], reads: 'rpc' },
        rebroadcast: { intervalMs: 100, maxAttempts: 1000, queueCapacity: 1000 },
      },
    );
    const engineSends = () => node.calls.filter((c) => c.path === 'transactions' && c.method === 'sendTransaction').length;
    try {
      const payer = Keypair.generate();
      cluster.ledger.airdrop(payer.publicKey.toBytes(), 10n * BigInt(LAMPORTS_PER_SOL));
      const tx = ledgerTransfer(cluster.ledger, payer, 1_000_000);
      // The engine takes it but drops it: it must be sent again.
      node.fault('drop');
      const answer = await post(
        `${g.url}/?anti_mev=1`,
        { jsonrpc: '2.0', id: 1, method: 'sendTransaction', params: [tx, { encoding: 'base64' }] },
        { 'x-api-key': g.key },
      );
      const signature = answer.body.result as string;
      assert.equal(typeof signature, 'string', JSON.stringify(answer.body));
      const journaled = async () => (await g.app.journal.find(signature))[0]!.transactions[0]!;
      for (let i = 0; i < 200 && (await journaled()).sends.length < 3; i++) await new Promise((resolve) => setTimeout(resolve, 25));
      // No leader trusted any more: rebroadcast stops while the window is closed.
      fs.writeFileSync(file, JSON.stringify({ deny: identities }));
      await new Promise((resolve) => setTimeout(resolve, 400));
      const before = engineSends();
      const sendsBefore = (await journaled()).sends.length;
      await new Promise((resolve) => setTimeout(resolve, 500));
      assert.equal(engineSends(), before, 'no rebroadcast while no safe window is open');
      assert.equal((await journaled()).sends.length, sendsBefore);
      // Trusted again, and the engine executes: the next rebroadcast lands it.
      node.fault('none');
      fs.writeFileSync(file, JSON.stringify({ deny: sandwichers }));
      let exposure: Exposure | null = null;
      for (let i = 0; i < 400 && exposure === null; i++) {
        await new Promise((resolve) => setTimeout(resolve, 25));
        exposure = (await exposures([signature]))[0]!;
      }
      assert.ok(exposure !== null && !sandwichers.includes(exposure.leader), JSON.stringify(exposure));
      // The send that landed is journaled once the engine has answered it, which can be a
      // moment after the cluster executed it: wait for it (2 s at most) before reading them.
      const landedSlot = exposure.slot;
      const covers = (send: { slot?: number | null; windowSlots: number }) =>
        send.slot != null && landedSlot >= send.slot && landedSlot < send.slot + send.windowSlots;
      for (let i = 0; i < 80 && !(await journaled()).sends.some((send) => covers(send) && send.attempt >= 3); i++)
        await new Promise((resolve) => setTimeout(resolve, 25));
      const { sends } = await journaled();
      assert.deepEqual(
        sends.map((s) => s.attempt),
        sends.map((_, i) => i),
      );
      const last = sends[sends.length - 1]!;
      assert.ok(last.attempt >= 3 && last.heldMs >= 500, JSON.stringify(last));
      assert.match(last.heldReason!, /is not trusted by the validator policy/);
      assert.ok(exposure.slot >= last.slot! && exposure.slot < last.slot! + last.windowSlots);
      for (const send of sends)
        assert.ok(
          send.leaders.every((leader) => !sandwichers.includes(leader)),
          JSON.stringify(send),
        );
    } finally {
      node.fault('none');
      await g.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
