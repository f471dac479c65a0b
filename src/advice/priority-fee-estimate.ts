/**
 * `getPriorityFeeEstimate` in Helius's shape: the levels of the recent blocks' prices
 * (fee-levels.ts) over the window asked for, answered as `priorityFeeEstimate` (the level
 * asked for, Medium by default, or the recommended fee) or `priorityFeeLevels` (all six), in
 * micro-lamports per compute unit.
 */
import { fail, ok, slipwayError, type Result } from '../errors/error-catalogue';
import { feeLevels, RECOMMENDED_FLOOR, type Levels } from './fee-levels';
import { parsePriorityFeeRequest } from './priority-fee-request';
import type { RecentFees } from './recent-fees';

export type PriorityFeeAnswer = { readonly priorityFeeEstimate: number } | { readonly priorityFeeLevels: Levels };

export class PriorityFeeAdvice {
  constructor(private readonly recent: RecentFees) {}

  /** The answer to `params`, a refusal naming what is wrong, or a throw when no block can be read. */
  async estimate(params: readonly unknown[]): Promise<Result<PriorityFeeAnswer>> {
    const request = parsePriorityFeeRequest(params);
    if (typeof request === 'string') return fail(slipwayError('INVALID_PARAMS', request));
    const levels = feeLevels(await this.recent.window(request.lookbackSlots), request.accounts, request);
    if (request.allLevels) return ok({ priorityFeeLevels: levels });
    if (request.level !== undefined) return ok({ priorityFeeEstimate: levels[request.level] });
    if (request.recommended) return ok({ priorityFeeEstimate: Math.max(levels.medium, RECOMMENDED_FLOOR) });
    return ok({ priorityFeeEstimate: levels.medium });
  }
}
