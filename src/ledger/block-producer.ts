/**
 * The local cluster's block production under contention (on when a block limit is set): the
 * validators' schedulers (leader/leader-scheduler.ts) fed by the paths a transaction arrives
 * by, and the slot's leader executing what its scheduler hands out, paced through the slot.
 *
 * Where a transaction goes, as on a cluster:
 * - `public` (the RPC node's `sendTransaction`): to the current leader and the next
 *   (send_transaction_service.rs, DEFAULT_LEADER_FORWARD_COUNT 2), and into the node's retry
 *   pool, forwarded again every DEFAULT_RETRY_RATE_MS (2 s) to the leaders of that moment
 *   until it lands or its blockhash expires (the pool holds at most 10,000);
 * - `private` (the block engine's `sendTransaction`, Slipway's in-process route): to the
 *   current leader only;
 * - `tpu`: to the validator whose TPU received it.
 * What a leader has not packed when its window ends is dropped by it (leader-scheduler.ts).
 */
import type { ValidatedTransaction } from '../validation/validate-transaction';
import { executedCost, MAX_BLOCK_UNITS, MAX_WRITABLE_ACCOUNT_UNITS, transactionCost, type TransactionCost } from '../leader/cost-model';
import { HOLD_SLOTS, LeaderScheduler, type Candidate, type DropReason, type SlotStats } from '../leader/leader-scheduler';
import { leaderReward, schedulingPriority } from '../leader/scheduler-priority';
import { feeDetailsOf } from '../leader/compute-budget';
import type { CostLimits } from '../leader/cost-tracker';
import { SLOTS_PER_LEADER, type LeaderSchedule } from './leader-schedule';
import type { SubmissionPath } from './exposure';
import type { BundleOutcome, ExecutionOutcome } from './execution-outcome';
import { BlockAuction, MIN_TIP_LAMPORTS, tipOf, type Bid } from '../leader/block-auction';

export interface ContentionSettings extends CostLimits {
  /** Transactions each validator buffers (Agave: 100,000). */
  readonly bufferCapacity?: number;
  /** The share of validators that run the block engine, from 0 to 1 (default 0.9). */
  readonly engineShare?: number;
}

/** The share of a block the engine's bundles may take (Jito publishes none: our choice). */
export const BUNDLE_BLOCK_SHARE = 0.25;
/** Jito's auctions: every 200 ms (at least twice a slot when slots are shorter). */
const AUCTION_MS = 200;

/** block_cost_limits.rs: a writable account's share of the block (24,000,000 of 60,000,000), kept when the block is scaled. */
const ACCOUNT_SHARE = MAX_WRITABLE_ACCOUNT_UNITS / MAX_BLOCK_UNITS;

/**
 * The block limit `--market` picks when none is given: about a hundred of the market's
 * transfers a block, 250 a second at 400 ms slots, which this machine's ledger executes at
 * twice and four times the load with a third and a half of one core (docs/LEDGER.md).
 */
export const MARKET_BLOCK_UNITS = 200_000;

/** The contention the settings ask for (`blockUnits` 0 and `market` 0: none). */
export function contentionOf(settings: {
  readonly blockUnits: number;
  readonly market: number;
  readonly engineStakePercent: number;
}): ContentionSettings | undefined {
  const blockUnits = settings.blockUnits > 0 ? settings.blockUnits : settings.market > 0 ? MARKET_BLOCK_UNITS : 0;
  if (blockUnits === 0) return undefined;
  return {
    blockUnits,
    accountUnits: Math.floor(blockUnits * ACCOUNT_SHARE),
    engineShare: settings.engineStakePercent / 100,
  };
}

/** send_transaction_service.rs: DEFAULT_RETRY_RATE_MS and MAX_TRANSACTION_RETRY_POOL_SIZE. */
const RPC_RETRY_MS = 2_000;
const RPC_RETRY_POOL = 10_000;
/** How often the leader looks for more to schedule when nothing new arrives (the pacer frees room as time passes). */
const TICK_MS = 10;
/** Slots whose figures are kept for `getSlotStats`. */
const KEPT_SLOTS = 512;

interface Queued extends Candidate {
  readonly tx: ValidatedTransaction;
  readonly path: SubmissionPath;
  readonly estimate: TransactionCost;
}

interface BundleBid extends Bid {
  readonly txs: readonly ValidatedTransaction[];
  readonly items: readonly { readonly cost: number; readonly writeAccounts: readonly string[]; readonly estimate: TransactionCost }[];
}

/** What the producer needs of the ledger. */
export interface ProducingLedger {
  readonly schedule: LeaderSchedule;
  readonly currentSlot: number;
  /** The accounts the transaction locks for writing (static and loaded through lookup tables), as keys. */
  writeAccounts(tx: ValidatedTransaction): string[];
  /** Why it can no longer land, or null. */
  staleness(tx: ValidatedTransaction): 'expired' | 'alreadyProcessed' | null;
  /** Executes and commits it in the current slot. */
  execute(tx: ValidatedTransaction, options: { path: SubmissionPath }): ExecutionOutcome;
  /** Executes a bundle atomically in the current slot, recording its fate. */
  executeBundle(bundleId: string, txs: readonly ValidatedTransaction[]): BundleOutcome;
  /** Records that a bundle will not land, and why. */
  failBundle(bundleId: string, txs: readonly ValidatedTransaction[], reason: string): void;
}

export class BlockProducer {
  private readonly scheduler: LeaderScheduler<Queued>;
  /** The block's limit. */
  readonly blockUnits: number;
  private seq = 0;
  private timer: NodeJS.Timeout | undefined;
  private readonly kept = new Map<number, SlotStats>();
  /** The RPC node's retry pool: signature → the transaction and the slot it is forwarded again. */
  private readonly retryPool = new Map<string, { queued: Queued; due: number }>();
  private readonly retrySlots: number;
  private readonly auction = new BlockAuction<BundleBid>();
  /** The validators that run the block engine (the first of the schedule's identities, by share). */
  readonly engineLeaders: ReadonlySet<string>;
  private readonly bundleRoom: number;
  private readonly auctionMs: number;
  private lastAuction = -Infinity;
  private bundleUnits = 0;
  /** Called when a transaction runs and throws (a bug: reported, and the next goes on). */
  onError: (error: unknown) => void = () => {};

  constructor(
    private readonly ledger: ProducingLedger,
    settings: ContentionSettings,
    slotMs: number,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.blockUnits = settings.blockUnits;
    this.retrySlots = Math.max(1, Math.ceil(RPC_RETRY_MS / slotMs));
    const identities = ledger.schedule.identities;
    this.engineLeaders = new Set(identities.slice(0, Math.round((settings.engineShare ?? 0.9) * identities.length)));
    this.bundleRoom = Math.floor(settings.blockUnits * BUNDLE_BLOCK_SHARE);
    this.auctionMs = Math.min(AUCTION_MS, Math.floor(slotMs / 2));
    this.scheduler = new LeaderScheduler<Queued>({
      limits: { blockUnits: settings.blockUnits, accountUnits: settings.accountUnits },
      slotMs,
      bufferCapacity: settings.bufferCapacity,
      slotsUntilLeading: (validator, slot) => slotsUntilLeading(ledger.schedule, validator, slot),
    });
    this.scheduler.onDrop = (entry: Queued, reason: DropReason) => {
      if (reason === 'expired' || reason === 'alreadyProcessed') this.retryPool.delete(entry.key);
    };
  }

  start(): void {
    this.timer ??= setInterval(() => this.pump(), TICK_MS);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** A transaction arrives by `path` (`validator`: the TPU that received it). */
  receive(tx: ValidatedTransaction, path: SubmissionPath, validator?: string): void {
    const estimate = transactionCost(tx.wire);
    const queued: Queued = {
      key: tx.signature,
      seq: this.seq++,
      priority: schedulingPriority(leaderReward(feeDetailsOf(tx.wire)), estimate.total),
      cost: estimate.total,
      writeAccounts: this.ledger.writeAccounts(tx),
      tx,
      path,
      estimate,
    };
    const slot = this.ledger.currentSlot;
    if (path === 'tpu' && validator !== undefined) this.scheduler.receive(validator, queued, slot);
    else if (path === 'public') {
      this.forwardPublicly(queued, slot);
      if (this.retryPool.size < RPC_RETRY_POOL) this.retryPool.set(queued.key, { queued, due: slot + this.retrySlots });
    } else this.scheduler.receive(this.ledger.schedule.leaderAt(slot), queued, slot);
    this.pump();
  }

  /**
   * A bundle arrives at the block engine: it bids in the auctions of the next leaders that
   * run the engine. Returns why it cannot bid (a tip under the minimum), or null.
   */
  receiveBundle(bundleId: string, txs: readonly ValidatedTransaction[]): string | null {
    const tip = tipOf(txs.map((tx) => tx.wire));
    if (tip < MIN_TIP_LAMPORTS) return `its tip of ${tip} lamports is below the block engine's minimum of ${MIN_TIP_LAMPORTS}`;
    const items = txs.map((tx) => {
      const estimate = transactionCost(tx.wire);
      return { cost: estimate.total, writeAccounts: this.ledger.writeAccounts(tx), estimate };
    });
    this.auction.submit({ id: bundleId, tip, cost: items.reduce((sum, item) => sum + item.cost, 0), seq: this.seq++, txs, items });
    this.pump();
    return null;
  }

  /** Whether a bundle is still bidding. */
  bundlePending(bundleId: string): boolean {
    return this.auction.has(bundleId);
  }

  /** A slot begins: the schedulers move on, the RPC node forwards what is due again, and the leader starts packing. */
  beginSlot(slot: number, leader: string): void {
    this.bundleUnits = 0;
    // The slot's first auction is held AUCTION_MS into it, on the bundles gathered meanwhile.
    this.lastAuction = this.now();
    const expired = this.auction.withdrawWhere((bid) => bid.txs.some((tx) => this.ledger.staleness(tx) === 'expired'));
    for (const bid of expired)
      this.ledger.failBundle(bid.id, bid.txs, 'a blockhash expired before a leader running the block engine took it');
    const ended = this.scheduler.beginSlot(slot, leader, this.now());
    if (ended.leader !== '') {
      this.kept.set(ended.slot, ended);
      if (this.kept.size > KEPT_SLOTS) this.kept.delete(this.kept.keys().next().value!);
    }
    for (const [signature, entry] of this.retryPool) {
      if (entry.due > slot) continue;
      if (this.ledger.staleness(entry.queued.tx) !== null) {
        this.retryPool.delete(signature);
        continue;
      }
      entry.due = slot + this.retrySlots;
      this.forwardPublicly({ ...entry.queued, seq: this.seq++ }, slot);
    }
    this.pump();
  }

  /** The figures of `slot` (the current one as it stands), if kept. */
  slotStats(slot: number): Readonly<SlotStats> | undefined {
    return slot === this.ledger.currentSlot ? this.scheduler.stats : this.kept.get(slot);
  }

  /** Transactions `validator` holds now. */
  buffered(validator: string): number {
    return this.scheduler.buffered(validator);
  }

  /** The leader executes what its scheduler hands out now, after the engine's auction when one is due. */
  pump(): void {
    const now = this.now();
    if (now - this.lastAuction >= this.auctionMs && this.auction.size > 0 && this.engineLeaders.has(this.scheduler.stats.leader)) {
      this.lastAuction = now;
      this.holdAuction();
    }
    const stale = (entry: Queued) => this.ledger.staleness(entry.tx);
    for (let entry = this.scheduler.next(now, stale); entry !== undefined; entry = this.scheduler.next(now, stale)) {
      let used: number | null = null;
      try {
        const outcome = this.ledger.execute(entry.tx, { path: entry.path });
        if (outcome.included) used = usedCost(entry.estimate, outcome);
      } catch (error) {
        this.onError(error);
      }
      this.scheduler.settle(entry, used);
      if (used !== null) this.retryPool.delete(entry.key);
    }
  }

  /** The engine's auction for the current leader: winners executed as bundles in the block, losers told why. */
  private holdAuction(): void {
    const { winners, lost } = this.auction.run(this.bundleRoom - this.bundleUnits);
    for (const { bid, winningRate } of lost) {
      const bar =
        winningRate === null ? 'no bundle fitted the room left' : `the lowest rate that won paid ${winningRate} lamports per million units`;
      this.ledger.failBundle(
        bid.id,
        bid.txs,
        `lost the block engine's auction: its tip of ${bid.tip} lamports for ${bid.cost} units, where ${bar}`,
      );
    }
    for (const bid of winners) {
      if (this.scheduler.chargeBundle(bid.items) !== null) {
        // The block is full: it bids again at the next auctions, as the bundle stage retries it.
        this.auction.submit(bid);
        continue;
      }
      let used: number[] | null = null;
      try {
        const outcome = this.ledger.executeBundle(bid.id, bid.txs);
        if (outcome.landed) used = outcome.outcomes.map((o, i) => usedCost(bid.items[i]!.estimate, o));
      } catch (error) {
        this.onError(error);
      }
      this.scheduler.settleBundle(bid.items, used);
      if (used !== null) this.bundleUnits += used.reduce((sum, units) => sum + units, 0);
    }
  }

  /** To the current leader and the next one, as the RPC node's send-transaction service forwards. */
  private forwardPublicly(queued: Queued, slot: number): void {
    const leaders = new Set([this.ledger.schedule.leaderAt(slot), this.ledger.schedule.leaderAt(slot + SLOTS_PER_LEADER)]);
    for (const leader of leaders) this.scheduler.receive(leader, queued, slot);
  }
}

/** The units a committed transaction is charged: its estimate with the units it used and the accounts it loaded in place of its limits. */
function usedCost(estimate: TransactionCost, outcome: ExecutionOutcome): number {
  return executedCost(estimate, outcome.unitsConsumed, outcome.loadedAccountsBytes);
}

/** Slots from `slot` until `validator` leads (0 while it does); past what HOLD_SLOTS looks at, a large number. */
function slotsUntilLeading(schedule: LeaderSchedule, validator: string, slot: number): number {
  const first = slot - (slot % SLOTS_PER_LEADER);
  for (let window = 0; window <= Math.ceil(HOLD_SLOTS / SLOTS_PER_LEADER) + 1; window++) {
    const start = first + window * SLOTS_PER_LEADER;
    if (schedule.leaderAt(start) === validator) return Math.max(0, start - slot);
  }
  return Number.MAX_SAFE_INTEGER;
}
