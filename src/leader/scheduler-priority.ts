/**
 * The priority a leader's scheduler gives a transaction, as Agave's
 * (core/src/transaction_priority.rs `calculate_priority_and_cost`): what the leader is paid
 * for it per unit of block it takes, reward × 1,000,000 / (cost + 1). The reward is what the
 * leader keeps (runtime/src/bank/fee_distribution.rs): the whole priority fee and the base
 * fee less its burnt half (DEFAULT_BURN_PERCENT 50, the burn rounded down). Integers
 * throughout, as Agave's u64 arithmetic (reward × 1,000,000 fits a bigint, not always a double).
 */
import type { WireTransaction } from '../validation/wire-transaction';
import { feeDetailsOf } from './compute-budget';
import { transactionCost } from './cost-model';

const MULTIPLIER = 1_000_000n;
const BURN_PERCENT = 50n;

/** Lamports the leader keeps of a fee: the priority fee, and the base fee's unburnt part. */
export function leaderReward(fee: { baseFee: bigint; priorityFee: bigint }): bigint {
  return fee.priorityFee + (fee.baseFee - (fee.baseFee * BURN_PERCENT) / 100n);
}

export function schedulingPriority(reward: bigint, cost: number): bigint {
  return (reward * MULTIPLIER) / BigInt(cost + 1);
}

/** A transaction's priority and cost, as the scheduler orders and packs it. */
export function priorityAndCost(wire: WireTransaction): { priority: bigint; cost: number } {
  const cost = transactionCost(wire).total;
  return { priority: schedulingPriority(leaderReward(feeDetailsOf(wire)), cost), cost };
}
