/**
 * Which read methods the gateway forwards to its reads upstream: by default what a client
 * needs to build, send and confirm a transaction or a bundle, and what the popular clients
 * call on the way (gill, anchor, umi, @solana-developers/helpers, kit; a payment found by
 * its reference with `getSignaturesForAddress`, bounded at 1,000 per call), and nothing that
 * would make the gateway an open proxy to the operator's (paid) RPC nodes
 * (`getProgramAccounts`, `getTokenAccountsByOwner`, `getBlock`, range scans…). `readMethods` replaces the list (`*`: every method).
 * `requestAirdrop` is added only where the reads upstream is the embedded ledger or a local
 * cluster (every node on this machine): elsewhere it would ask a real faucet.
 * Slipway's own status methods (getSignatureStatuses and the like) are always served.
 */
export const DEFAULT_READ_METHODS: readonly string[] = [
  'getLatestBlockhash',
  'isBlockhashValid',
  'getBlockHeight',
  'getSlot',
  'getEpochInfo',
  'getBalance',
  'getAccountInfo',
  'getMultipleAccounts',
  'getTokenAccountBalance',
  'getMinimumBalanceForRentExemption',
  'getFeeForMessage',
  'getRecentPrioritizationFees',
  'getTransaction',
  'getSignaturesForAddress',
  'simulateTransaction',
  'getVersion',
  'getHealth',
  'getTipAccounts',
];

export const LOCAL_ONLY_READ_METHODS: readonly string[] = ['requestAirdrop'];

/** Whether an upstream is on this machine: the embedded ledger, or nodes at loopback addresses only (a local cluster). */
export function isLocalUpstream(upstream: { readonly type: string; readonly urls?: readonly string[] }): boolean {
  if (upstream.type === 'embedded') return true;
  if (upstream.urls === undefined || upstream.urls.length === 0) return false;
  return upstream.urls.every((url) => {
    const host = new URL(url).hostname;
    return host === 'localhost' || host === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(host);
  });
}

/** Whether `method` may be forwarded, given the `readMethods` setting (empty: the default list). */
export function readMethodPolicy(configured: readonly string[], readsUpstreamIsLocal: boolean): (method: string) => boolean {
  if (configured.includes('*')) return () => true;
  const allowed = new Set([
    ...(configured.length === 0 ? DEFAULT_READ_METHODS : configured),
    ...(readsUpstreamIsLocal ? LOCAL_ONLY_READ_METHODS : []),
  ]);
  return (method) => allowed.has(method);
}
