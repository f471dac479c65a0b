/**
 * `getLandingReport`, Slipway's own: how the calling key's submissions did over a period
 * (reports/landing-reports.ts), its own only. `params`: `[]` or `[{since}]` (`[null]` reads
 * as `[]`, as an optional argument does on Agave), `since` a number of seconds or a duration
 * (`"15m"`, `"24h"`, `"7d"`; default 24 hours, at most 7 days). Anything else is refused as
 * invalid params, saying what is expected.
 */
import { fail, ok, slipwayError, type Result } from '../errors/error-catalogue';
import type { LandingReport } from '../core/landing-report';
import { DEFAULT_PERIOD_MS, parsePeriod, type LandingReports } from '../reports/landing-reports';

const SHAPE = 'getLandingReport takes [] or [{"since": seconds or a duration such as "24h"}]';

export async function landingReportOf(params: readonly unknown[], keyId: string, reports: LandingReports): Promise<Result<LandingReport>> {
  const period = periodIn(params);
  if (typeof period === 'string') return fail(slipwayError('INVALID_PARAMS', period));
  try {
    return ok(await reports.ofKey(keyId, period));
  } catch (error) {
    return fail(
      slipwayError('STORE_UNAVAILABLE', `the landing report could not be read: ${error instanceof Error ? error.message : String(error)}`, {
        retryAfterMs: 1000,
      }),
    );
  }
}

/** The period `params` ask for (ms), or why they are refused. */
function periodIn(params: readonly unknown[]): number | string {
  if (params.length > 1) return `${SHAPE}: got ${params.length} params`;
  const options = params[0];
  if (options === undefined || options === null) return DEFAULT_PERIOD_MS;
  if (typeof options !== 'object' || Array.isArray(options)) return `${SHAPE}: params[0] must be an object`;
  const unknown = Object.keys(options).filter((name) => name !== 'since');
  if (unknown.length > 0) return `${SHAPE}: unknown field ${JSON.stringify(unknown[0]!.slice(0, 40))}`;
  const { since } = options as { since?: unknown };
  return since === undefined ? DEFAULT_PERIOD_MS : parsePeriod(since);
}
