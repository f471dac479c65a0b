/**
 * What a start does with what the last run left (pipeline/recovery.ts), over an in-memory
 * journal: the duplicate window warmed from recent submissions, unfinished ones followed
 * again (forwarded ones tracked, held ones held), and in a cluster the lease loop that takes
 * over what another gateway left and lets go of what another took.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Keypair, PublicKey, SystemProgram, Transaction } from '@solana/web3.js';
import { JITO_TIP_ACCOUNTS } from '../../src/core/jito-tip-accounts';
import { LandingTracker } from '../../src/pipeline/landing-tracker';
import { RecentTransactions } from '../../src/pipeline/recent-transactions';
import { followUnfinished, warmDuplicateWindow } from '../../src/pipeline/recovery';
import type { JournalEntry, NewSubmission, SubmissionLeases } from '../../src/stores/journal';
import type { Upstream } from '../../src/upstreams/upstream';
import { digestWireTransaction } from '../../src/validation/transaction-digest';
import { validateTransaction } from '../../src/validation/validate-transaction';
import { countingUpstream, memoryJournal, pipelineOver, signedTransfer } from '../helpers/pipeline-doubles';
import { until } from '../helpers/until';

const TTL_MS = 60_000;
const fail = (error: unknown) => {
  throw error;
};

function submission(state: NewSubmission['transactions'][number]['state'], overrides: Partial<NewSubmission> = {}): NewSubmission {
  const tx = signedTransfer();
  return {
    kind: 'transaction',
    keyId: 'key_a',
    antiMev: state === 'held',
    bundleId: null,
    routes: ['node'],
    transactions: [{ signature: tx.signature, wire: Buffer.from(tx.base64, 'base64'), state }],
    ...overrides,
  };
}

/** A transfer that also tips `tip` lamports to one of Jito's tip accounts, validated as the gateway validates. */
function tippedTransfer(tip: number) {
  const payer = Keypair.generate();
  const tx = new Transaction({ feePayer: payer.publicKey, recentBlockhash: Keypair.generate().publicKey.toBase58() }).add(
    SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: Keypair.generate().publicKey, lamports: 1_000 }),
    SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: new PublicKey(JITO_TIP_ACCOUNTS[5]!), lamports: tip }),
  );
  tx.sign(payer);
  const validated = validateTransaction(tx.serialize().toString('base64'), '');
  if (!validated.ok) throw new Error(validated.error.message);
  return validated.value;
}

/** The digest the gateway computes for an entry's exact bytes: the window must know them by it. */
const digestOf = (entry: JournalEntry) => digestWireTransaction(entry.transactions[0]!.wire);

describe('recovery after a restart', () => {
  it('warms the duplicate window with what was accepted within it, not with refusals or older submissions', async () => {
    const journal = memoryJournal();
    await journal.record(submission('forwarded'));
    await journal.record(submission('landed'));
    await journal.record(submission('rejected'));
    await journal.record(submission('forwarded'));
    // The last was accepted before the window: a resend of it is a new submission.
    (journal.entries[3] as { createdAt: number }).createdAt = Date.now() - TTL_MS - 1_000;
    const recent = new RecentTransactions(TTL_MS, 1_000);
    await warmDuplicateWindow(journal, recent, TTL_MS);
    assert.deepEqual(
      journal.entries.map((entry) => recent.has(digestOf(entry))),
      [true, true, false, false],
    );
  });

  it('with one gateway, follows every unfinished submission: forwarded ones tracked, held ones held, settled ones left', async () => {
    const { journal, tracker, holds, router } = pipelineOver();
    const forwarded = await journal.record(submission('forwarded'));
    const held = await journal.record(submission('held'));
    await journal.record(submission('landed'));
    await journal.record(submission('rejected'));
    const leasing = await followUnfinished({ journal, router, tracker, holds, logError: fail });
    assert.equal(leasing, undefined, 'no lease loop without leases');
    assert.deepEqual(tracker.following(), [forwarded]);
    assert.deepEqual(holds.following(), [held]);
  });

  it('a forwarded submission is rebroadcast once followed again, and tracked to its landing', async () => {
    const { journal, tracker, holds, router, upstreams } = pipelineOver();
    const seq = await journal.record(submission('forwarded'));
    await followUnfinished({ journal, router, tracker, holds, logError: fail });
    upstreams[0]!.behaviour.landedSlot = 7;
    await tracker.runRound();
    await tracker.runRound();
    const tx = journal.entries[seq - 1]!.transactions[0]!;
    assert.equal(upstreams[0]!.sent.length >= 1, true, 'rebroadcast to the route recorded in the journal');
    assert.equal(tx.state, 'landed');
    assert.deepEqual(tracker.following(), []);
  });

  it("a forwarded bundle followed again tells its tip, read from the journal's wires, once, when it lands", async () => {
    const engine = countingUpstream('engine', 'jito');
    (engine as { getBundleStatuses: Upstream['getBundleStatuses'] }).getBundleStatuses = async (ids) =>
      ids.map(() => ({ status: 'Landed' as const, landedSlot: 100, reason: null }));
    const { journal, holds, router } = pipelineOver([engine]);
    const tips: (readonly [number, number])[] = [];
    const tracker = new LandingTracker({
      journal,
      reads: router.reads,
      intervalMs: 20,
      maxAttempts: 5,
      capacity: 100,
      slotMs: 400,
      landedTips: { record: (lamports, atMs) => tips.push([lamports, atMs]) },
      logError: fail,
    });
    const txs = [tippedTransfer(3_000), tippedTransfer(4_000)];
    await journal.record({
      kind: 'bundle',
      keyId: 'key_a',
      antiMev: false,
      bundleId: 'b'.repeat(64),
      routes: ['engine'],
      transactions: txs.map((tx) => ({ signature: tx.signature, wire: Buffer.from(tx.base64, 'base64'), state: 'forwarded' as const })),
    });
    const before = Date.now();
    await followUnfinished({ journal, router, tracker, holds, logError: fail });
    await tracker.runRound();
    await tracker.runRound();
    assert.deepEqual(
      tips.map(([lamports]) => lamports),
      [7_000],
    );
    assert.ok(tips[0]![1] >= before && tips[0]![1] <= Date.now(), 'landed now: the engine reports the slot the reads upstream is at');
    assert.equal(journal.entries[0]!.transactions[0]!.state, 'landed');
  });

  it('in a cluster, takes over what no gateway holds, then each round lets go of what another took and takes what another left', async () => {
    const { journal: entries, tracker, holds, router } = pipelineOver();
    const first = await entries.record(submission('forwarded'));
    const second = await entries.record(submission('forwarded'));
    const third = await entries.record(submission('held'));
    const offers = [[entries.entries[first - 1]!], [entries.entries[third - 1]!]];
    const renewed: number[][] = [];
    let lost: number[] = [];
    const leases: SubmissionLeases = {
      async renew(following) {
        renewed.push([...following].sort());
        const taken = lost;
        lost = [];
        return taken;
      },
      async takeOver() {
        return offers.shift() ?? [];
      },
    };
    const journal = { ...entries, leases };
    const leasing = await followUnfinished({ journal, router, tracker, holds, logError: fail });
    assert.ok(leasing !== undefined, 'a lease loop with leases');
    try {
      assert.deepEqual(tracker.following(), [first], 'only what the first take-over gave');
      await until(
        () => holds.following(),
        (held) => held.includes(third),
      );
      assert.deepEqual(renewed[0], [first], 'the leases of what it follows are renewed');
      lost = [first];
      await until(
        () => tracker.following(),
        (followed) => followed.length === 0,
      );
      assert.deepEqual(holds.following(), [third], 'what another gateway took is dropped; the rest stays');
      assert.ok(!tracker.following().includes(second), 'never offered, never followed');
    } finally {
      await leasing.stop();
    }
  });
});
