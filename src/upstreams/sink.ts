/**
 * A benchmarking aid (`bin/slipway serve --upstream sink`): an upstream that accepts every
 * transaction and bundle and drops it. Everything in front of it runs as usual (auth,
 * validation, signature verification, duplicates, journal), so the benchmark measures
 * Slipway and nothing else. A submission is final when accepted: nothing is tracked.
 * Never use it in front of users: what it accepts goes nowhere.
 */
import type { Upstream } from './upstream';

export function createSinkUpstream(name = 'sink'): Upstream {
  return {
    name,
    kind: 'sink',
    protected: true,
    simulates: true,
    tracked: false,
    getSlot: async () => 0,
    simulate: async () => ({ err: null, errText: null, logs: [], unitsConsumed: 0, slot: 0 }),
    sendTransaction: async () => ({ dropped: null }),
    admitBundle: async () => null,
    sendBundle: async () => ({ accepted: true }),
    call: async (method) => (method === 'getHealth' ? { result: 'ok' } : method === 'getSlot' ? { result: 0 } : undefined),
    getSignatureStatuses: async (signatures) => signatures.map(() => null),
    getBundleStatuses: async (ids) => ids.map(() => ({ status: 'Invalid', landedSlot: null, reason: null })),
    isBlockhashValid: async () => true,
    close: async () => {},
  };
}
