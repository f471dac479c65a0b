/**
 * A block's cost tracker, as Agave's (cost-model/src/cost_tracker.rs `would_fit` and
 * `add_transaction_cost`): the units packed into the block so far and per writable account,
 * and whether one more transaction fits. The checks run in Agave's order: the block's limit,
 * then the transaction against the per-account limit, then each account it writes. A
 * transaction that does not fit is not dropped by this: the scheduler holds it for the
 * leader's next slot (consumer.rs marks cost-limit failures not immediately retryable).
 * No I/O, no clock: a slot's tracker is made new at the slot's start.
 */
import { MAX_BLOCK_UNITS, MAX_WRITABLE_ACCOUNT_UNITS } from './cost-model';

export type CostRefusal = 'WouldExceedBlockMaxLimit' | 'WouldExceedAccountMaxLimit';

export interface CostLimits {
  /** Units a block may hold (Agave: 60,000,000). */
  readonly blockUnits: number;
  /** Units the transactions writing one account may hold in a block (Agave: 24,000,000). */
  readonly accountUnits: number;
}

export const AGAVE_LIMITS: CostLimits = { blockUnits: MAX_BLOCK_UNITS, accountUnits: MAX_WRITABLE_ACCOUNT_UNITS };

export class CostTracker {
  private blockCost = 0;
  private readonly byAccount = new Map<string, number>();

  constructor(readonly limits: CostLimits = AGAVE_LIMITS) {}

  /** Units packed so far. */
  get units(): number {
    return this.blockCost;
  }

  /** Units packed so far by transactions writing `account` (an address in any stable encoding). */
  accountUnits(account: string): number {
    return this.byAccount.get(account) ?? 0;
  }

  /** Why a transaction of `cost` units writing `accounts` would not fit, or null when it would. */
  wouldFit(cost: number, accounts: readonly string[]): CostRefusal | null {
    if (this.blockCost + cost > this.limits.blockUnits) return 'WouldExceedBlockMaxLimit';
    if (cost > this.limits.accountUnits) return 'WouldExceedAccountMaxLimit';
    for (const account of accounts) {
      if (this.accountUnits(account) + cost > this.limits.accountUnits) return 'WouldExceedAccountMaxLimit';
    }
    return null;
  }

  /** Packs the transaction when it fits; otherwise says why and changes nothing. */
  tryAdd(cost: number, accounts: readonly string[]): CostRefusal | null {
    const refusal = this.wouldFit(cost, accounts);
    if (refusal !== null) return refusal;
    this.blockCost += cost;
    for (const account of accounts) this.byAccount.set(account, this.accountUnits(account) + cost);
    return null;
  }

  /**
   * After execution, the transaction's charge is corrected by `delta` units (Agave's
   * `update_execution_cost`: the units it used instead of those it asked for, so a limit
   * asked for and not used frees room for others), or taken back whole when it was not
   * committed (`remove_transaction_cost`: pass minus its cost).
   */
  adjust(delta: number, accounts: readonly string[]): void {
    this.blockCost = Math.max(0, this.blockCost + delta);
    for (const account of accounts) this.byAccount.set(account, Math.max(0, this.accountUnits(account) + delta));
  }
}
