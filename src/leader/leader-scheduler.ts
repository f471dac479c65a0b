/**
 * What each validator of the local cluster does with the transactions it receives, as
 * Agave's banking stage (core/src/banking_stage/transaction_scheduler/, decision_maker.rs,
 * consumer.rs, qos_service.rs), without I/O or a clock: the caller says what time it is and
 * executes what it is handed.
 *
 * - **Receiving.** A validator that will not lead within HOLD_SLOTS slots drops what it
 *   receives (decision_maker.rs: `Forward`, and the scheduler no longer forwards); otherwise
 *   the transaction goes into that validator's bounded buffer, the lowest dropped when full.
 * - **Leading.** As each slot begins, every validator that will not lead within HOLD_SLOTS
 *   slots empties its buffer (what a leader has not packed by the end of its window is not
 *   carried to the next leader), the leader's transactions held over from its previous slot
 *   return to its buffer (`flush_held_transactions`), and the block's cost tracker is new.
 * - **Scheduling.** The leader takes its highest-priority transaction while the pacer allows
 *   (CostPacer: the block's units spread evenly over the slot less 50 ms); one whose
 *   blockhash expired or that was already processed is dropped; one that does not fit the
 *   block or an account's limit is held for the leader's next slot (consumer.rs: retryable).
 * - **After execution** the block is charged what the transaction used, not what it asked
 *   for (`update_execution_cost`), or nothing when it was not committed (`remove`).
 */
import { CostTracker, type CostLimits, type CostRefusal } from './cost-tracker';
import { PriorityBuffer, type Prioritized } from './priority-buffer';

/** decision_maker.rs HOLD_TRANSACTIONS_SLOT_OFFSET: a validator further than this from leading keeps nothing. */
export const HOLD_SLOTS = 20;
/** scheduler_controller.rs DEFAULT_SCHEDULER_PACING_NON_FILL_TIME_MILLIS: the end of a slot the pacer leaves unfilled. */
export const PACING_NON_FILL_MS = 50;
/** transaction_state_container.rs: TOTAL_BUFFERED_PACKETS, each validator's buffer. */
export const DEFAULT_BUFFER_CAPACITY = 100_000;

export interface Candidate extends Prioritized {
  /** What makes two copies one (a signature): a validator buffers a transaction once (sigverify's deduper). */
  readonly key: string;
  /** Its cost as Agave's cost model counts it (cost-model.ts). */
  readonly cost: number;
  /** The accounts it locks for writing, each once, in one encoding. */
  readonly writeAccounts: readonly string[];
}

export type DropReason = 'bufferFull' | 'expired' | 'alreadyProcessed' | 'windowEnded' | 'notLeaderSoon';

export interface SlotStats {
  readonly slot: number;
  readonly leader: string;
  /** The block's limit. */
  readonly blockUnits: number;
  /** Units charged to the block by what was committed in it. */
  units: number;
  /** Transactions the scheduler handed to execution in this slot (committed or not). */
  packed: number;
  /** Refused by the cost tracker and held for the leader's next slot, by refusal. */
  held: Record<CostRefusal, number>;
  /** Dropped during this slot, by reason (by any validator). */
  dropped: Record<DropReason, number>;
}

export interface SchedulerOptions {
  readonly limits: CostLimits;
  readonly slotMs: number;
  readonly bufferCapacity?: number;
  /** Slots from `slot` until `validator` next leads (0 while it leads `slot`). */
  readonly slotsUntilLeading: (validator: string, slot: number) => number;
}

const noDrops = (): Record<DropReason, number> => ({ bufferFull: 0, expired: 0, alreadyProcessed: 0, windowEnded: 0, notLeaderSoon: 0 });

export class LeaderScheduler<T extends Candidate> {
  private readonly buffers = new Map<string, PriorityBuffer<T>>();
  /** Per validator, the keys of what it holds (buffered or held over). */
  private readonly holding = new Map<string, Set<string>>();
  /** The leader's transactions refused by the cost tracker in this slot, back in its buffer at the next. */
  private held: T[] = [];
  private tracker: CostTracker;
  private slotStart = 0;
  private current: SlotStats;
  private readonly fillMs: number;
  private readonly capacity: number;
  /** Called with what a validator drops (not with what is held): the caller's bookkeeping. */
  onDrop: (entry: T, reason: DropReason) => void = () => {};

  constructor(private readonly options: SchedulerOptions) {
    this.capacity = options.bufferCapacity ?? DEFAULT_BUFFER_CAPACITY;
    this.fillMs = Math.max(1, options.slotMs - PACING_NON_FILL_MS);
    this.tracker = new CostTracker(options.limits);
    this.current = this.newStats(0, '');
  }

  /** The slot being built's figures, so far. */
  get stats(): Readonly<SlotStats> {
    return this.current;
  }

  /** Transactions `validator` holds (its buffer and what it holds over for its next slot). */
  buffered(validator: string): number {
    return (this.buffers.get(validator)?.size ?? 0) + (validator === this.current.leader ? this.held.length : 0);
  }

  /** Begins `slot`, led by `leader`, at `now` (ms); returns the figures of the slot it ends. */
  beginSlot(slot: number, leader: string, now: number): SlotStats {
    const ended = this.current;
    const previousLeader = ended.leader;
    this.current = this.newStats(slot, leader);
    const held = this.held;
    this.held = [];
    for (const entry of held)
      this.buffers
        .get(previousLeader)
        ?.push(entry)
        .forEach((d) => this.drop(previousLeader, d, 'bufferFull'));
    for (const [validator, buffer] of this.buffers) {
      if (this.options.slotsUntilLeading(validator, slot) <= HOLD_SLOTS) continue;
      for (const entry of buffer.clear()) this.drop(validator, entry, 'windowEnded');
      this.buffers.delete(validator);
      this.holding.delete(validator);
    }
    this.tracker = new CostTracker(this.options.limits);
    this.slotStart = now;
    return ended;
  }

  /** `validator` received `entry` while `slot` is current. */
  receive(validator: string, entry: T, slot: number): void {
    if (this.options.slotsUntilLeading(validator, slot) > HOLD_SLOTS) {
      this.current.dropped.notLeaderSoon++;
      this.onDrop(entry, 'notLeaderSoon');
      return;
    }
    let keys = this.holding.get(validator);
    if (keys === undefined) this.holding.set(validator, (keys = new Set()));
    if (keys.has(entry.key)) return;
    keys.add(entry.key);
    let buffer = this.buffers.get(validator);
    if (buffer === undefined) this.buffers.set(validator, (buffer = new PriorityBuffer<T>(this.capacity)));
    for (const dropped of buffer.push(entry)) this.drop(validator, dropped, 'bufferFull');
  }

  /**
   * The next transaction the leader executes at `now`, already charged to the block, or
   * undefined when the pacer's budget is spent or nothing fits. `stale` says why one must be
   * dropped before it is scheduled (its blockhash expired, it was processed already), or null.
   * Each one handed out must be settled.
   */
  next(now: number, stale: (entry: T) => 'expired' | 'alreadyProcessed' | null): T | undefined {
    const buffer = this.buffers.get(this.current.leader);
    if (buffer === undefined) return undefined;
    while (this.budget(now) > 0) {
      const entry = buffer.popHighest();
      if (entry === undefined) return undefined;
      const reason = stale(entry);
      if (reason !== null) {
        this.drop(this.current.leader, entry, reason);
        continue;
      }
      const refusal = this.tracker.tryAdd(entry.cost, entry.writeAccounts);
      if (refusal !== null) {
        this.current.held[refusal]++;
        this.held.push(entry);
        continue;
      }
      this.current.packed++;
      this.holding.get(this.current.leader)?.delete(entry.key);
      return entry;
    }
    return undefined;
  }

  /** The outcome of an entry `next` handed out: the units it used (committed), or null (not committed). */
  settle(entry: T, usedCost: number | null): void {
    this.tracker.adjust(usedCost === null ? -entry.cost : usedCost - entry.cost, entry.writeAccounts);
    this.current.units = this.tracker.units;
  }

  /**
   * Charges a bundle's transactions to the block all together, or none of them (the bundle
   * stage reserves a bundle's cost in the same tracker, outside the pacer); says why not.
   */
  chargeBundle(items: readonly Pick<Candidate, 'cost' | 'writeAccounts'>[]): CostRefusal | null {
    for (const [index, item] of items.entries()) {
      const refusal = this.tracker.tryAdd(item.cost, item.writeAccounts);
      if (refusal === null) continue;
      for (const charged of items.slice(0, index)) this.tracker.adjust(-charged.cost, charged.writeAccounts);
      return refusal;
    }
    this.current.units = this.tracker.units;
    return null;
  }

  /** The outcome of a charged bundle: each transaction's used units (landed), or null (not committed). */
  settleBundle(items: readonly Pick<Candidate, 'cost' | 'writeAccounts'>[], used: readonly number[] | null): void {
    items.forEach((item, i) => this.tracker.adjust(used === null ? -item.cost : used[i]! - item.cost, item.writeAccounts));
    this.current.units = this.tracker.units;
  }

  /** The units charged to the block so far. */
  get units(): number {
    return this.tracker.units;
  }

  /** CostPacer.scheduling_budget: the block's units pro rata of the fill time elapsed, less what is charged. */
  private budget(now: number): number {
    const { blockUnits } = this.options.limits;
    const elapsed = Math.max(0, now - this.slotStart);
    const target = elapsed >= this.fillMs ? blockUnits : Math.floor(blockUnits / this.fillMs) * Math.floor(elapsed);
    return target - this.tracker.units;
  }

  private drop(validator: string, entry: T, reason: DropReason): void {
    this.holding.get(validator)?.delete(entry.key);
    this.current.dropped[reason]++;
    this.onDrop(entry, reason);
  }

  private newStats(slot: number, leader: string): SlotStats {
    return {
      slot,
      leader,
      blockUnits: this.options.limits.blockUnits,
      units: 0,
      packed: 0,
      held: { WouldExceedBlockMaxLimit: 0, WouldExceedAccountMaxLimit: 0 },
      dropped: noDrops(),
    };
  }
}
