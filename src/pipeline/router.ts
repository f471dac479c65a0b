/**
 * Chooses the upstream(s) for each submission. With anti-MEV asked, only upstreams marked
 * protected qualify; what protection does beyond that is decided by a later change.
 */
import type { Result } from '../errors/error-catalogue';
import { fail, ok, slipwayError } from '../errors/error-catalogue';
import type { RpcAnswer, Upstream } from '../upstreams/upstream';

export interface Router {
  /** The upstream that takes this submission. */
  pick(antiMev: boolean): Result<Upstream>;
  /** Answers a JSON-RPC method no Slipway handler owns, from the first upstream that knows it. */
  call(method: string, params: readonly unknown[]): Promise<RpcAnswer | undefined>;
  getSlot(): Promise<number>;
}

export function createRouter(upstreams: readonly Upstream[]): Router {
  if (upstreams.length === 0) throw new Error('at least one upstream is needed');
  const primary = upstreams[0]!;
  const protectedUpstream = upstreams.find((u) => u.protected);
  return {
    pick(antiMev) {
      if (!antiMev) return ok(primary);
      if (protectedUpstream === undefined) {
        return fail(slipwayError('UPSTREAM_UNAVAILABLE', 'anti_mev=1 needs a protected upstream, and none is configured'));
      }
      return ok(protectedUpstream);
    },
    async call(method, params) {
      for (const upstream of upstreams) {
        const answer = await upstream.call(method, params);
        if (answer !== undefined) return answer;
      }
      return undefined;
    },
    getSlot: () => primary.getSlot(),
  };
}
