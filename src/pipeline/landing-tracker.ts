/**
 * Follows every forwarded submission until it is final, and rebroadcasts transactions
 * meanwhile. One timer for all of them (no timer per transaction); each round asks for up
 * to 256 statuses per request and checks each distinct blockhash once:
 *
 * - a confirmed status → `landed` (slot) or `failed` (error); a processed one is looked at again;
 * - no status and an expired blockhash → `expired` (durable-nonce transactions never expire
 *   this way); no status after `maxAttempts` sends → `expired`, rebroadcast stops;
 * - otherwise → sent again to every upstream of its route.
 *
 * Protected transactions are rebroadcast only while a safe window is open (the same rule
 * as their first send, safe-window.ts); a round that finds none skips their resend without
 * counting it, and the send that follows records how long it waited and why.
 *
 * Bundles are polled with the bundle status of their route until `Landed` or `Failed`; a
 * landed bundle that paid a tip is told to `landedTips` (landed-tips.ts) with its landing
 * time, once its landing is journaled (a round whose journal write fails tells nothing, and
 * the next round that records it does).
 * The set of tracked transactions is bounded: when full, the most-retried ones are shed
 * (their state stays `forwarded`; counted in `slipway_rebroadcast_shed_total`).
 */
import bs58 from 'bs58';
import { describeTransactionErrorJson } from '../core/transaction-error';
import { rebroadcastsTotal, rebroadcastShedTotal, trackedGauge } from '../metrics/metrics';
import { windowOptions, type SafeWindow } from '../protection/safe-window';
import { RoundLoop } from '../runtime/round-loop';
import { sendToRoute } from './route-send';
import type { LandedTips } from './landed-tips';
import { LandingTimes, type Landing } from './landing-times';
import type { SlotWatch } from './slot-watch';
import type { Journal, SendRecord, StateChange, TransactionChange } from '../stores/journal';
import type { SendOptions, Upstream } from '../upstreams/upstream';
import type { ValidatedTransaction } from '../validation/validate-transaction';

const STATUS_BATCH = 256;
const BUNDLE_STATUS_BATCH = 5;
const RESEND_OPTIONS: SendOptions = { skipPreflight: true, preflightCommitment: 'processed', maxRetries: 0, minContextSlot: undefined };

export interface TrackedTransaction {
  readonly seq: number;
  readonly position: number;
  readonly tx: ValidatedTransaction;
  readonly upstreams: readonly Upstream[];
  attempts: number;
  /** When the request came (epoch ms), for the landing time. */
  readonly submittedAt: number;
  /** The slot the gateway saw when the request came (slot-watch.ts), for the slots to land; null or absent when unknown (followed again after a restart). */
  readonly receivedSlot?: number | null;
  /** Sent with anti_mev=1: rebroadcast only in a safe window. */
  readonly protected?: boolean;
  /** Since when its due rebroadcast has waited for a safe window, and why. */
  heldSince?: number;
  heldReason?: string;
  /** Told stuck already (`TrackerOptions.stuck`). */
  stuckTold?: boolean;
}

/** Who is told, once, of a transaction that has gone `slots` slots since its receipt without landing while its blockhash is valid. */
export interface StuckWatch {
  readonly slots: number;
  tell(seq: number, position: number, slots: number): void;
}

export interface TrackedBundle {
  readonly seq: number;
  readonly bundleId: string;
  readonly size: number;
  readonly upstreams: readonly Upstream[];
  polls: number;
  readonly submittedAt: number;
  readonly receivedSlot?: number | null;
  /** What its transactions tip (lamports, landed-tips.ts), computed when it was accepted. */
  readonly tipLamports: number;
}

export interface TrackerOptions {
  readonly journal: Journal;
  /** Where statuses and blockhash validity are asked. */
  readonly reads: Upstream;
  readonly intervalMs: number;
  readonly maxAttempts: number;
  readonly capacity: number;
  /** The network's slot time: a landing seen N slots late happened about N slots' time earlier. */
  readonly slotMs: number;
  /** The rule protected transactions' rebroadcasts obey (absent: nothing is protected). */
  readonly window?: SafeWindow;
  /** The last slot the gateway saw: receipts read it, and the tracker keeps it fresh. */
  readonly slots?: SlotWatch;
  /** Told of each landed bundle's tip (absent: nobody listens). */
  readonly landedTips?: LandedTips;
  /** Told of transactions stuck (absent: nobody listens). */
  readonly stuck?: StuckWatch;
  readonly logError: (error: unknown, what: string) => void;
}

export class LandingTracker {
  private readonly transactions = new Map<string, TrackedTransaction>();
  private readonly bundles = new Map<string, TrackedBundle>();
  private readonly loop: RoundLoop;
  private readonly landings: LandingTimes;

  constructor(private readonly options: TrackerOptions) {
    this.landings = new LandingTimes(options.reads, options.slotMs, options.slots);
    this.loop = new RoundLoop(() => this.checkAll(), options.intervalMs);
  }

  track(item: TrackedTransaction): void {
    if (this.transactions.size >= this.options.capacity) this.shed();
    this.transactions.set(item.tx.signature, item);
    trackedGauge.set(this.transactions.size);
  }

  trackBundle(item: TrackedBundle): void {
    this.bundles.set(item.bundleId, item);
  }

  /** The slot now, as last seen (slot-watch.ts): what a submission received now is stamped with; null when unknown. */
  slotNow(): number | null {
    return this.landings.slotNow();
  }

  get size(): number {
    return this.transactions.size + this.bundles.size;
  }

  /** The sequence numbers of the submissions followed. */
  following(): number[] {
    return [...new Set([...this.transactions.values(), ...this.bundles.values()].map((item) => item.seq))];
  }

  /** Stops following these submissions (another gateway holds them now). */
  drop(seqs: ReadonlySet<number>): void {
    for (const [key, item] of this.transactions) if (seqs.has(item.seq)) this.transactions.delete(key);
    for (const [key, item] of this.bundles) if (seqs.has(item.seq)) this.bundles.delete(key);
    trackedGauge.set(this.transactions.size);
  }

  start(): void {
    this.loop.start();
  }

  stop(): Promise<void> {
    return this.loop.stop();
  }

  /** One round now (tests and shutdown use it; the timer skips a round while one runs). */
  runRound(): Promise<void> {
    return this.loop.run();
  }

  private async checkAll(): Promise<void> {
    try {
      await this.landings.refreshSlot();
      await this.checkTransactions();
      await this.checkBundles();
    } catch (error) {
      this.options.logError(error, 'tracking round');
    }
  }

  private async checkTransactions(): Promise<void> {
    const { journal, reads, maxAttempts } = this.options;
    const changes: StateChange[] = [];
    const finished: TrackedTransaction[] = [];
    const finish = (item: TrackedTransaction, change: TransactionChange) => {
      changes.push({ seq: item.seq, position: item.position, id: item.tx.signature, ...change });
      finished.push(item);
      this.transactions.delete(item.tx.signature);
    };

    const landed: Landing[] = [];
    const items = [...this.transactions.values()];
    const unknown: TrackedTransaction[] = [];
    for (let i = 0; i < items.length; i += STATUS_BATCH) {
      const chunk = items.slice(i, i + STATUS_BATCH);
      let statuses;
      try {
        statuses = await reads.getSignatureStatuses(chunk.map((item) => item.tx.signature));
      } catch (error) {
        this.options.logError(error, 'getSignatureStatuses');
        continue; // unknown this round: neither expire nor resend blindly
      }
      chunk.forEach((item, j) => {
        const status = statuses[j];
        if (status === null || status === undefined) unknown.push(item);
        // Processed but not yet confirmed: it may still be dropped on a fork; look again next round.
        else if (status.confirmationStatus === 'processed') return;
        else {
          const succeeded = status.err === null;
          finish(
            item,
            succeeded
              ? { state: 'landed', slot: status.slot }
              : {
                  state: 'failed',
                  slot: status.slot,
                  reasonCode: 'failed_on_chain',
                  reason: describeTransactionErrorJson(status.err),
                  error: status.err,
                },
          );
          // A failed transaction landed too (its fee was charged): it is timed the same way.
          landed.push({
            submittedAt: item.submittedAt,
            receivedSlot: item.receivedSlot ?? null,
            slot: status.slot,
            route: item.upstreams,
            observed: succeeded,
            changes: [changes.length - 1],
          });
        }
      });
    }

    const validity = new Map<string, boolean>();
    for (const item of unknown) {
      if (item.tx.usesDurableNonce) continue;
      const blockhash = bs58.encode(item.tx.wire.recentBlockhash);
      if (!validity.has(blockhash)) {
        try {
          validity.set(blockhash, await reads.isBlockhashValid(blockhash));
        } catch (error) {
          this.options.logError(error, 'isBlockhashValid');
          validity.set(blockhash, true); // not known to be expired: keep trying
        }
      }
    }

    this.tellStuck(unknown, validity);
    const resend: TrackedTransaction[] = [];
    const protectedResend: { item: TrackedTransaction; heldMs: number; heldReason: string | null }[] = [];
    // One decision for every protected rebroadcast of the round, taken when first needed.
    let decision: ReturnType<SafeWindow['decide']> | undefined;
    for (const item of unknown) {
      if (!item.tx.usesDurableNonce && validity.get(bs58.encode(item.tx.wire.recentBlockhash)) === false) {
        finish(item, { state: 'expired', reasonCode: 'blockhash_expired', reason: 'its blockhash expired before it landed' });
      } else if (item.attempts >= maxAttempts) {
        finish(item, {
          state: 'expired',
          reasonCode: 'not_landed_unknown',
          reason: `not landed after ${item.attempts} sends; rebroadcast stopped`,
        });
      } else if (item.protected === true && this.options.window !== undefined) {
        decision ??= this.options.window.decide();
        if (!decision.send) {
          item.heldSince ??= Date.now();
          item.heldReason = decision.reason;
          continue;
        }
        item.attempts += 1;
        protectedResend.push({
          item,
          heldMs: item.heldSince === undefined ? 0 : Date.now() - item.heldSince,
          heldReason: item.heldReason ?? null,
        });
        item.heldSince = undefined;
        item.heldReason = undefined;
      } else {
        item.attempts += 1;
        resend.push(item);
      }
    }
    for (const item of resend) {
      for (const upstream of item.upstreams) {
        upstream.sendTransaction(item.tx, RESEND_OPTIONS).catch(() => {
          // A failed resend is retried next round; the upstream's health records it.
        });
      }
    }
    const sends = await this.resendProtected(protectedResend, decision);
    rebroadcastsTotal.inc(resend.length + protectedResend.length);
    trackedGauge.set(this.transactions.size);
    await this.landings.time('transaction', landed, changes);
    try {
      await Promise.all([
        journal.update(changes),
        journal.countAttempts([...resend, ...protectedResend.map(({ item }) => item)].map(({ seq, position }) => ({ seq, position }))),
        journal.recordSends(sends),
      ]);
    } catch (error) {
      // Not recorded (the journal's store is down): follow them again, so that the next round records their state.
      for (const item of finished) this.transactions.set(item.tx.signature, item);
      throw error;
    }
  }

  /**
   * Protected rebroadcasts go only to the leaders of the window they were let out in, and
   * each is journaled with its evidence once sent: for routes that pick leaders (the TPU),
   * the leaders and addresses it reached, as for a first send. A failed one is retried next
   * round; the upstream's health records it.
   */
  private async resendProtected(
    items: readonly { item: TrackedTransaction; heldMs: number; heldReason: string | null }[],
    decision: ReturnType<SafeWindow['decide']> | undefined,
  ): Promise<SendRecord[]> {
    const window = this.options.window;
    if (items.length === 0 || window === undefined || decision?.send !== true) return [];
    const outcomes = await Promise.all(
      items.map(({ item }) => sendToRoute(item.upstreams, item.tx, windowOptions(RESEND_OPTIONS, decision))),
    );
    return items.map(({ item, heldMs, heldReason }, i) => ({
      seq: item.seq,
      position: item.position,
      send: window.evidence(
        decision,
        item.upstreams.map((u) => u.name),
        item.attempts,
        heldMs,
        heldReason,
        outcomes[i]!.contacted,
      ),
    }));
  }

  private async checkBundles(): Promise<void> {
    const landed: Landing[] = [];
    const tipped: { tipLamports: number; change: number }[] = [];
    const changes: StateChange[] = [];
    const finishedBundles: TrackedBundle[] = [];
    const all = [...this.bundles.values()];
    for (let i = 0; i < all.length; i += BUNDLE_STATUS_BATCH) {
      const chunk = all.slice(i, i + BUNDLE_STATUS_BATCH);
      const upstream = chunk[0]!.upstreams[0]!;
      let statuses;
      try {
        statuses = await upstream.getBundleStatuses(chunk.map((b) => b.bundleId));
      } catch (error) {
        this.options.logError(error, 'getBundleStatuses');
        continue;
      }
      chunk.forEach((bundle, j) => {
        const status = statuses[j]!;
        const members = (change: TransactionChange) =>
          Array.from(
            { length: bundle.size },
            (_, position) => changes.push({ seq: bundle.seq, position, id: bundle.bundleId, ...change }) - 1,
          );
        bundle.polls += 1;
        if (status.status === 'Landed') {
          // Its transactions landed together: each gets the bundle's times.
          const landedChanges = members({ state: 'landed', slot: status.landedSlot });
          landed.push({
            submittedAt: bundle.submittedAt,
            receivedSlot: bundle.receivedSlot ?? null,
            slot: status.landedSlot,
            route: bundle.upstreams,
            observed: status.landedSlot !== null,
            changes: landedChanges,
          });
          if (bundle.tipLamports > 0) tipped.push({ tipLamports: bundle.tipLamports, change: landedChanges[0]! });
        } else if (status.status === 'Failed')
          members({
            state: 'rejected',
            reasonCode: 'engine_rejected',
            reason: `the bundle did not land: ${status.reason ?? 'the block engine gives no reason'}`,
          });
        else if (bundle.polls >= this.options.maxAttempts)
          members({
            state: 'expired',
            reasonCode: 'not_landed_unknown',
            reason: `the block engine did not report the bundle landed after ${bundle.polls} checks`,
          });
        else return;
        finishedBundles.push(bundle);
        this.bundles.delete(bundle.bundleId);
      });
    }
    await this.landings.time('bundle', landed, changes);
    try {
      await this.options.journal.update(changes);
    } catch (error) {
      for (const bundle of finishedBundles) this.bundles.set(bundle.bundleId, bundle);
      throw error;
    }
    const tips = this.options.landedTips;
    // Timed above (landing-times.ts): every landed change has its landedAt.
    if (tips !== undefined) for (const { tipLamports, change } of tipped) tips.record(tipLamports, changes[change]!.landedAt ?? Date.now());
  }

  /** Tells of the transactions without a status whose blockhash is valid and that came `stuck.slots` slots ago or more, once each. */
  private tellStuck(items: readonly TrackedTransaction[], validity: ReadonlyMap<string, boolean>): void {
    const stuck = this.options.stuck;
    const slot = stuck === undefined ? null : this.landings.slotNow();
    if (stuck === undefined || slot === null) return;
    for (const item of items) {
      if (item.stuckTold === true || item.receivedSlot === undefined || item.receivedSlot === null) continue;
      if (!item.tx.usesDurableNonce && validity.get(bs58.encode(item.tx.wire.recentBlockhash)) === false) continue;
      const slots = slot - item.receivedSlot;
      if (slots < stuck.slots) continue;
      item.stuckTold = true;
      stuck.tell(item.seq, item.position, slots);
    }
  }

  /** Drops the most-retried hundredth of the tracked transactions (at least one). */
  private shed(): void {
    const count = Math.max(1, Math.floor(this.transactions.size / 100));
    const victims = [...this.transactions.values()].sort((a, b) => b.attempts - a.attempts).slice(0, count);
    for (const victim of victims) this.transactions.delete(victim.tx.signature);
    rebroadcastShedTotal.inc(victims.length);
  }
}
