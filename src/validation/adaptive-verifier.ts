/**
 * Signature verification where it costs least: in the request's own thread while that
 * thread has time to spare; under load, as much there as keeps it about 85 % busy and the
 * rest on the worker threads (see runtime/thread-load.ts for the share and why).
 */
import { inlineVerificationGauge } from '../metrics/metrics';
import type { ThreadLoad } from '../runtime/thread-load';
import { createOffloadShare } from '../runtime/thread-load';
import type { SignatureVerifier } from './transaction-validator';
import { verifyTransactionSignatures } from './verify-signatures';

export interface AdaptiveVerifier extends SignatureVerifier {
  /** The share of verifications that currently run in the request thread. */
  readonly inlineShare: number;
}

export function createAdaptiveVerifier(workers: SignatureVerifier, load: ThreadLoad): AdaptiveVerifier {
  inlineVerificationGauge.set(1);
  const where = createOffloadShare(load, (share) => inlineVerificationGauge.set(share));
  return {
    get inlineShare() {
      return where.share;
    },
    verify: (wire) => (where.inlineNow() ? Promise.resolve(verifyTransactionSignatures(wire)) : workers.verify(wire)),
    close: () => workers.close(),
  };
}
