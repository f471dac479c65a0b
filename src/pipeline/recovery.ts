/**
 * What a start finds left by the last run, or by a gateway of the cluster that stopped:
 *
 * - the duplicate window, warmed from the journal's recent submissions, so that a resend
 *   of something accepted just before a crash is still recognised;
 * - unfinished submissions, followed again: forwarded ones tracked to their end, held
 *   (protected) ones held again;
 * - in a cluster (a journal with leases), a loop that renews this gateway's leases and takes
 *   over what no live gateway holds.
 */
import { RoundLoop } from '../runtime/round-loop';
import type { Journal, JournalEntry } from '../stores/journal';
import type { Upstream } from '../upstreams/upstream';
import { digestWireTransaction } from '../validation/transaction-digest';
import { restoreValidatedTransaction } from '../validation/validate-transaction';
import type { HoldQueue } from './hold-queue';
import { bundleTipLamports } from './landed-tips';
import type { RecentTransactions } from './recent-transactions';
import type { Router } from './router';
import type { LandingTracker } from './landing-tracker';

/** Options for sending a held transaction after a restart (its preflight ran when it was accepted). */
const RESUMED_SEND_OPTIONS = {
  skipPreflight: true,
  preflightCommitment: 'processed',
  maxRetries: undefined,
  minContextSlot: undefined,
} as const;
/** Takes over at most this many submissions per round (a dead gateway's backlog comes over in a few rounds). */
const TAKE_OVER_BATCH = 2_000;
/** Leases are renewed (and stopped gateways' taken over) this often: well within a lease. */
const LEASE_RENEW_MS = 1_000;

/** Remembers what was accepted within the duplicate window (all but the rejected). */
export async function warmDuplicateWindow(journal: Journal, recent: RecentTransactions, ttlMs: number): Promise<void> {
  for (const entry of await journal.since(Date.now() - ttlMs)) {
    for (const tx of entry.transactions) if (tx.state !== 'rejected') recent.rememberDigest(digestWireTransaction(tx.wire));
  }
}

export interface Following {
  readonly journal: Journal;
  readonly router: Router;
  readonly tracker: LandingTracker;
  readonly holds: HoldQueue;
  readonly logError: (error: unknown, what: string) => void;
}

/**
 * Follows what is unfinished: with one gateway, everything; in a cluster, what no live
 * gateway holds, then every second what this one lost or another left. Returns the lease
 * loop to stop at shutdown (none with one gateway).
 */
export async function followUnfinished(following: Following): Promise<RoundLoop | undefined> {
  const { journal, tracker, holds, logError } = following;
  const adopt = (entries: readonly JournalEntry[]) => follow(entries, following);
  const { leases } = journal;
  if (leases === undefined) {
    adopt(await journal.unfinished());
    return undefined;
  }
  adopt(await leases.takeOver(TAKE_OVER_BATCH));
  const leasing = new RoundLoop(async () => {
    try {
      const lost = await leases.renew([...tracker.following(), ...holds.following()]);
      if (lost.length > 0) {
        tracker.drop(new Set(lost));
        holds.drop(new Set(lost));
      }
      adopt(await leases.takeOver(TAKE_OVER_BATCH));
    } catch (error) {
      logError(error, 'renewing rebroadcast leases');
    }
  }, LEASE_RENEW_MS);
  leasing.start();
  return leasing;
}

/** Tracks what is forwarded, holds again what was held. */
function follow(entries: readonly JournalEntry[], { router, tracker, holds }: Following): void {
  for (const entry of entries) {
    const upstreams = entry.routes.map((name) => router.byName(name)).filter((u): u is Upstream => u !== undefined);
    if (entry.kind === 'bundle') {
      if (upstreams.some((u) => u.tracked))
        tracker.trackBundle({
          seq: entry.seq,
          bundleId: entry.bundleId!,
          size: entry.transactions.length,
          upstreams,
          polls: 0,
          submittedAt: entry.createdAt,
          tipLamports: bundleTipLamports(entry.transactions.map((tx) => restoreValidatedTransaction(tx.wire))),
        });
      continue;
    }
    for (const tx of entry.transactions) {
      const restored = restoreValidatedTransaction(tx.wire);
      if (tx.state === 'held') {
        holds.hold([
          {
            seq: entry.seq,
            position: tx.position,
            tx: restored,
            upstreams,
            options: RESUMED_SEND_OPTIONS,
            heldSince: entry.createdAt,
            reason: tx.reason ?? 'held before the restart',
          },
        ]);
      } else if (tx.state === 'forwarded' && upstreams.some((u) => u.tracked)) {
        tracker.track({
          seq: entry.seq,
          position: tx.position,
          tx: restored,
          upstreams,
          attempts: tx.attempts,
          submittedAt: entry.createdAt,
          protected: entry.antiMev,
        });
      }
    }
  }
}
