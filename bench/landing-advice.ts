/**
 * The fee and tip advice the landing benchmark's senders ask a gateway for: Slipway's
 * `getLandingEstimate` (a price for a probability of landing within some slots), Helius's
 * `getPriorityFeeEstimate` (a level), and Jito's tip floor.
 */
import { percentile as interpolated } from '../src/advice/fee-levels';
import { writableStaticAddresses } from '../src/advice/block-fees';
import { isWireDefect, parseWireTransaction } from '../src/validation/wire-transaction';
import { RpcError, type Call } from './landing-load';

/** JSON-RPC's "method not found": the gateway measured does not serve getLandingEstimate. */
const METHOD_NOT_FOUND = -32601;

export interface Advice {
  /** Micro-lamports per compute unit. */
  readonly price: number;
  /** The probability the advice was for, as the gateway answered it (null: a level, not a probability). */
  readonly probability: number | null;
}

/**
 * What getLandingEstimate is asked: the transaction itself (base64), whose shape (accounts,
 * unit limit, loaded-data limit, signatures) the price is fitted to, or its writable accounts
 * and unit limit, for which the gateway assumes Agave's default loaded-data limit.
 */
export type LandingQuestion = (
  { readonly transaction: string } | { readonly accountKeys: readonly string[]; readonly computeUnits: number }
) & {
  readonly probability: number;
  readonly withinSlots: number;
};

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
    return { price: await levelEstimate(this.gateway, accountsOf(question), 'High'), probability: null };
  }
}

/** The writable accounts a question names (those of its transaction, when it gives one). */
function accountsOf(question: LandingQuestion): readonly string[] {
  if ('accountKeys' in question) return question.accountKeys;
  const wire = parseWireTransaction(Buffer.from(question.transaction, 'base64'));
  return isWireDefect(wire) ? [] : writableStaticAddresses(wire);
}

/** `getPriorityFeeEstimate` at `level` for a transaction writing `accountKeys`, as a Helius client asks it. */
export async function levelEstimate(gateway: Call, accountKeys: readonly string[], level: 'Low' | 'Medium' | 'High'): Promise<number> {
  const result = await gateway<{ priorityFeeEstimate: number }>('getPriorityFeeEstimate', [
    { accountKeys, options: { priorityLevel: level } },
  ]);
  return Math.ceil(result.priorityFeeEstimate);
}

/**
 * The tip floor's 50th percentile in lamports, as Jito's is made: from the tips of every
 * bundle that landed on the cluster lately (`landedTips`, read from its blocks), interpolated
 * as src/advice/tip-floor.ts does. The gateway's own `GET /api/v1/bundles/tip_floor` is read
 * only when no bundle landed: it counts the bundles that gateway saw land, which for (c)'s
 * gateway are (c)'s own, so it would follow (c)'s tips rather than the market's.
 */
export async function tipFloorP50(
  gatewayUrl: string,
  key: string,
  landedTips: readonly number[],
): Promise<{ lamports: number | null; source: string }> {
  if (landedTips.length > 0)
    return {
      lamports: Math.ceil(interpolated(landedTips, 50)),
      source: "the tips of the bundles landed in the cluster's last minute of blocks",
    };
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
    // Not answered: no floor known.
  }
  return { lamports: null, source: 'no bundle landed yet' };
}
