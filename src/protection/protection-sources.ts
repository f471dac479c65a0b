/** Where protection learns what it decides on, as the configuration says: the leaders, and the validator policy. */
import type { NetworkConfig } from '../config/config-file';
import type { LocalLedger } from '../ledger/local-ledger';
import type { RpcAnswer } from '../core/rpc-types';
import { createLedgerLeaderTracker, type LeaderTracker } from '../upstreams/leader-tracker';
import { createRpcLeaderTracker } from '../upstreams/rpc-leader-tracker';
import { createShieldPolicySource } from './shield-policy';
import { createFilePolicySource, createUrlPolicySource, type PolicySource } from './validator-policy';

/** The embedded ledger's own schedule, or the RPC nodes that answer reads (an rpc or tpu upstream's); unknown (protection holds) otherwise. */
export function leaderTrackerFor(network: NetworkConfig, leaderPollMs: number, ledger: LocalLedger | undefined): LeaderTracker {
  if (ledger !== undefined) return createLedgerLeaderTracker(ledger);
  const reads = network.upstreams[network.routes.reads]!;
  if ((reads.type !== 'rpc' && reads.type !== 'tpu') || network.routes.antiMev.length === 0) {
    const reason =
      network.routes.antiMev.length === 0
        ? 'no route takes anti-MEV traffic'
        : `the reads upstream "${network.routes.reads}" has no leader schedule`;
    return { upcoming: () => ({ known: false, reason: `the leader schedule is unknown: ${reason}` }), close: async () => {} };
  }
  return createRpcLeaderTracker({ urls: reads.urls, timeoutMs: network.requestTimeoutMs, pollMs: leaderPollMs });
}

/** The validator policy `where` names: a file, an http(s) URL, or shield:ADDRESS (read with `call`, the reads upstream); none when empty. */
export function policySourceFor(
  where: string,
  refreshMs: number,
  call: (method: string, params: readonly unknown[]) => Promise<RpcAnswer | undefined>,
): PolicySource | undefined {
  const trimmed = where.trim();
  const options = { refreshMs };
  if (trimmed === '') return undefined;
  if (trimmed.startsWith('shield:')) return createShieldPolicySource(trimmed.slice('shield:'.length), call, options);
  if (/^https?:\/\//.test(trimmed)) return createUrlPolicySource(trimmed, options);
  return createFilePolicySource(trimmed, options);
}
