/**
 * The default route: the embedded ledger, in-process. Sending executes the transaction at
 * once in the current slot (under contention, hands it to the current leader's scheduler); a bundle is executed atomically, so its fate is known when
 * `sendBundle` returns. Counts as a protected route: nobody else ever sees the transaction.
 */
import type { LocalLedger } from '../ledger/local-ledger';
import { ledgerMethod, signatureStatusView } from '../ledger/ledger-rpc';
import type { Upstream } from './upstream';

export function createEmbeddedLedgerUpstream(ledger: LocalLedger, name = 'embedded'): Upstream {
  return {
    name,
    kind: 'embedded',
    protected: true,
    simulates: true,
    tracked: true,
    getSlot: async () => ledger.currentSlot,
    simulate: async (tx) => ({ ...ledger.simulate(tx), slot: ledger.currentSlot }),
    sendTransaction: async (tx) => {
      const outcome = ledger.receive(tx, { path: 'private' });
      // Queued for the leader (under contention), or already processed (a resend whose first
      // answer was lost): the ledger has it; not dropped.
      if (outcome === undefined) return { dropped: null };
      return { dropped: outcome.included || outcome.err === 'AlreadyProcessed' ? null : outcome.errText };
    },
    admitBundle: async () => null,
    sendBundle: async (bundleId, txs) => {
      const outcome = ledger.receiveBundle(bundleId, txs);
      // Bidding in the engine's auctions (under contention), or landed.
      if (outcome === undefined || ('landed' in outcome && outcome.landed)) return { accepted: true };
      if ('refused' in outcome) return { accepted: false, failedIndex: 0, err: null, errText: outcome.refused, logs: [] };
      const { err, errText, logs } = outcome.outcome;
      return { accepted: false, failedIndex: outcome.failedIndex, err, errText: errText ?? 'failed', logs };
    },
    call: async (method, params) => {
      const handler = ledgerMethod(method);
      return handler === undefined ? undefined : handler(ledger, params);
    },
    getSignatureStatuses: async (signatures) =>
      signatures.map((signature) => {
        const status = ledger.getSignatureStatus(signature);
        return status === undefined ? null : signatureStatusView(ledger, status);
      }),
    getBundleStatuses: async (bundleIds) =>
      bundleIds.map((bundleId) => {
        const bundle = ledger.getBundle(bundleId);
        if (bundle === undefined) return { status: ledger.bundlePending(bundleId) ? 'Pending' : 'Invalid', landedSlot: null, reason: null };
        return bundle.landed
          ? { status: 'Landed', landedSlot: bundle.slot, reason: null }
          : { status: 'Failed', landedSlot: null, reason: bundle.reason ?? null };
      }),
    isBlockhashValid: async (blockhash) => ledger.isBlockhashValid(blockhash),
    close: async () => {
      ledger.stop();
    },
  };
}
