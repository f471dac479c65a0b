/**
 * The fee and tip advice the landing benchmark's senders ask a gateway for: Slipway's
 * `getLandingEstimate` (a price for a probability of landing within some slots), Helius's
 * `getPriorityFeeEstimate` (a level), and Jito's tip floor.
 */
import { percentile as interpolated } from '../src/advice/fee-levels';
import { RpcError, type Call } from './landing-load';

/** JSON-RPC's "method not found": the gateway measured does not serve getLandingEstimate. */
const METHOD_NOT_FOUND = -32601;

export interface Advice {
  /** Micro-lamports per compute unit. */
  readonly price: number;
  /** The probability the advice was for, as the gateway answered it (null: a level, not a probability). */
  readonly probability: number | null;
}

export interface LandingQuestion {
  readonly accountKeys: readonly string[];
  readonly computeUnits: number;
  readonly probability: number;
  readonly withinSlots: number;
}

/**
 * Asks `getLandingEstimate`; a gateway without it (-32601) is asked `getPriorityFeeEstimate`
 * `High` instead, from then on, and `fallback` says so: the figures are then those of the
 * level, not of advice for a probability, and no calibration is read from them.
 */
export class LandingAdvisor {
  fallback: string | null = null;

  constructor(private readonly gateway: Call) {}

  async advise(question: LandingQuestion): Promise<Advice> {
    if (this.fallback === null) {
      try {
        const result = await this.gateway<{ microLamportsPerComputeUnit: number; probability: number }>('getLandingEstimate', [
          { ...question },
        ]);
        if (typeof result?.microLamportsPerComputeUnit !== 'number')
          throw new Error(`getLandingEstimate answered ${JSON.stringify(result)}`);
        return { price: Math.ceil(result.microLamportsPerComputeUnit), probability: result.probability ?? question.probability };
      } catch (error) {
        if (!(error instanceof RpcError) || error.code !== METHOD_NOT_FOUND) throw error;
        this.fallback = 'getPriorityFeeEstimate High (the gateway has no getLandingEstimate: -32601)';
      }
    }
    return { price: await levelEstimate(this.gateway, question.accountKeys, 'High'), probability: null };
  }
}

/** `getPriorityFeeEstimate` at `level` for a transaction writing `accountKeys`, as a Helius client asks it. */
export async function levelEstimate(gateway: Call, accountKeys: readonly string[], level: 'Medium' | 'High'): Promise<number> {
  const result = await gateway<{ priorityFeeEstimate: number }>('getPriorityFeeEstimate', [
    { accountKeys, options: { priorityLevel: level } },
  ]);
  return Math.ceil(result.priorityFeeEstimate);
}

/**
 * The tip floor's 50th percentile in lamports: the gateway's `GET /api/v1/bundles/tip_floor`
 * (Jito's shape, in SOL) when it serves one; else, computed as src/advice/tip-floor.ts does,
 * from `landedTips` (the tips of the bundles that landed in the last minutes, read from the
 * cluster's blocks); null when neither has any.
 */
export async function tipFloorP50(
  gatewayUrl: string,
  key: string,
  landedTips: readonly number[],
): Promise<{ lamports: number | null; source: string }> {
  try {
    const response = await fetch(`${gatewayUrl}/api/v1/bundles/tip_floor`, {
      headers: { 'x-api-key': key },
      signal: AbortSignal.timeout(5_000),
    });
    if (response.ok) {
      const body = (await response.json()) as { landed_tips_50th_percentile?: unknown }[];
      const sol = Array.isArray(body) ? body[0]?.landed_tips_50th_percentile : undefined;
      if (typeof sol === 'number') return { lamports: Math.ceil(sol * 1e9), source: "the gateway's /api/v1/bundles/tip_floor" };
    }
  } catch {
    // Not served: computed below.
  }
  if (landedTips.length === 0) return { lamports: null, source: 'no bundle landed yet' };
  return { lamports: Math.ceil(interpolated(landedTips, 50)), source: "the landed bundles' tips in the cluster's recent blocks" };
}
