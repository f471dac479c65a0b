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
import {
  loadedAccountsDataCost,
  MAX_BLOCK_UNITS,
  MAX_WRITABLE_ACCOUNT_UNITS,
  transactionCost,
  type TransactionCost,
} from '../leader/cost-model';
import { HOLD_SLOTS, LeaderScheduler, type Candidate, type DropReason, type SlotStats } from '../leader/leader-scheduler';
import { leaderReward, schedulingPriority } from '../leader/scheduler-priority';
import { feeDetailsOf } from '../leader/compute-budget';
import type { CostLimits } from '../leader/cost-tracker';
import { SLOTS_PER_LEADER, type LeaderSchedule } from './leader-schedule';
import type { SubmissionPath } from './exposure';
import type { ExecutionOutcome } from './execution-outcome';

export interface ContentionSettings extends CostLimits {
  /** Transactions each validator buffers (Agave: 100,000). */
  readonly bufferCapacity?: number;
}

/** block_cost_limits.rs: a writable account's share of the block (24,000,000 of 60,000,000), kept when the block is scaled. */
const ACCOUNT_SHARE = MAX_WRITABLE_ACCOUNT_UNITS / MAX_BLOCK_UNITS;

/** The contention the settings ask for (`blockUnits`: 0 for none). */
export function contentionOf(settings: { readonly blockUnits: number }): ContentionSettings | undefined {
  if (settings.blockUnits === 0) return undefined;
  return { blockUnits: settings.blockUnits, accountUnits: Math.floor(settings.blockUnits * ACCOUNT_SHARE) };
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
}

export class BlockProducer {
  private readonly scheduler: LeaderScheduler<Queued>;
  private seq = 0;
  private timer: NodeJS.Timeout | undefined;
  private readonly kept = new Map<number, SlotStats>();
  /** The RPC node's retry pool: signature → the transaction and the slot it is forwarded again. */
  private readonly retryPool = new Map<string, { queued: Queued; due: number }>();
  private readonly retrySlots: number;
  /** Called when a transaction runs and throws (a bug: reported, and the next goes on). */
  onError: (error: unknown) => void = () => {};

  constructor(
    private readonly ledger: ProducingLedger,
    settings: ContentionSettings,
    slotMs: number,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.retrySlots = Math.max(1, Math.ceil(RPC_RETRY_MS / slotMs));
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

  /** A slot begins: the schedulers move on, the RPC node forwards what is due again, and the leader starts packing. */
  beginSlot(slot: number, leader: string): void {
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

  /** The leader executes what its scheduler hands out now. */
  pump(): void {
    const now = this.now();
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

  /** To the current leader and the next one, as the RPC node's send-transaction service forwards. */
  private forwardPublicly(queued: Queued, slot: number): void {
    const leaders = new Set([this.ledger.schedule.leaderAt(slot), this.ledger.schedule.leaderAt(slot + SLOTS_PER_LEADER)]);
    for (const leader of leaders) this.scheduler.receive(leader, queued, slot);
  }
}

/** The units a committed transaction is charged: its estimate with the units it used and the accounts it loaded in place of its limits. */
function usedCost(estimate: TransactionCost, outcome: ExecutionOutcome): number {
  const loaded = outcome.loadedAccountsBytes;
  const loadedCost = loaded === undefined ? estimate.loadedAccountsData : loadedAccountsDataCost(loaded);
  return (
    estimate.total - estimate.execution - estimate.loadedAccountsData + Math.min(outcome.unitsConsumed, estimate.execution) + loadedCost
  );
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
