/** Builds each configured upstream from its entry in the configuration file: one case per adapter. */
import type { NetworkConfig, UpstreamConfig } from '../config/config-file';
import type { LocalLedger } from '../ledger/local-ledger';
import { createEmbeddedLedgerUpstream } from './embedded-ledger';
import { createJitoUpstream } from './jito';
import { createSinkUpstream } from './sink';
import { createSolanaRpcUpstream } from './solana-rpc';
import { createTpuUpstream } from './tpu';
import type { TpuIdentity } from './tpu-identity';
import type { Upstream } from './upstream';

/**
 * Every configured upstream by name, each wrapped by `decorate` (metrics); `ledger` opens the
 * embedded ledger and `identity` loads the TPU identity, each only when an upstream uses it.
 */
export function createUpstreams(
  network: NetworkConfig,
  opened: { readonly ledger: () => LocalLedger; readonly identity: () => TpuIdentity },
  decorate: (upstream: Upstream) => Upstream,
): Map<string, Upstream> {
  const limits = { timeoutMs: network.requestTimeoutMs, maxAnswerBytes: network.maxUpstreamAnswerBytes };
  return new Map(Object.entries(network.upstreams).map(([name, config]) => [name, decorate(createUpstream(name, config, limits, opened))]));
}

function createUpstream(
  name: string,
  config: UpstreamConfig,
  limits: { timeoutMs: number; maxAnswerBytes: number },
  opened: { readonly ledger: () => LocalLedger; readonly identity: () => TpuIdentity },
): Upstream {
  switch (config.type) {
    case 'embedded':
      return createEmbeddedLedgerUpstream(opened.ledger(), name);
    case 'tpu':
      return createTpuUpstream({
        name,
        urls: config.urls,
        ...limits,
        identity: opened.identity(),
        leaderWindows: config.leaderWindows,
        maxConnections: config.maxConnections,
        maxTransactionBytes: config.maxTransactionBytes,
        slotPollMs: config.slotPollMs,
      });
    case 'rpc':
      return createSolanaRpcUpstream({ name, urls: config.urls, protected: config.protected, ...limits });
    case 'sink':
      return createSinkUpstream(name);
    case 'jito':
      return createJitoUpstream({
        name,
        urls: config.urls,
        protected: config.protected,
        ...limits,
        minTipLamports: config.minTipLamports,
        requireTip: config.requireTip,
      });
  }
}
