/**
 * Signature verification where it costs the request least: in the request's own thread
 * while that thread has time to spare, on the worker threads once it is busy (see
 * runtime/thread-load.ts for the switch and why).
 */
import { performance } from 'node:perf_hooks';
import { inlineVerificationGauge } from '../metrics/metrics';
import type { ThreadLoad } from '../runtime/thread-load';
import { createOffloadSwitch } from '../runtime/thread-load';
import { inlineVerifier, type SignatureVerifier } from './transaction-validator';
import { verifyTransactionSignatures } from './verify-signatures';
import { createWorkerVerifier } from './worker-verifier';

/** libsodium's ed25519 verification, per signature, before one has been timed here. */
const INITIAL_COST_MS = 0.05;

export interface AdaptiveVerifier extends SignatureVerifier {
  /** Whether verification currently runs in the request thread. */
  readonly inline: boolean;
}

export function createAdaptiveVerifier(workers: SignatureVerifier, load: ThreadLoad): AdaptiveVerifier {
  inlineVerificationGauge.set(1);
  const where = createOffloadSwitch(load, INITIAL_COST_MS, (inline) => inlineVerificationGauge.set(inline ? 1 : 0));
  return {
    get inline() {
      return where.inline;
    },
    verify(wire) {
      if (!where.inline) {
        where.ran(wire.signatures.length);
        return workers.verify(wire);
      }
      const started = performance.now();
      const check = verifyTransactionSignatures(wire);
      where.ran(wire.signatures.length, performance.now() - started);
      return Promise.resolve(check);
    },
    close: () => workers.close(),
  };
}

export interface VerificationSettings {
  readonly verifySignatures: boolean;
  readonly verifyThreads: number;
  readonly verifySpinUs: number;
}

/** The verifier the settings ask for: none (a trusted verifier upstream), inline only, or adaptive over worker threads. */
export function verifierFor(settings: VerificationSettings, load: ThreadLoad): SignatureVerifier | null {
  if (!settings.verifySignatures) return null;
  if (settings.verifyThreads === 0) return inlineVerifier;
  return createAdaptiveVerifier(createWorkerVerifier(settings.verifyThreads, settings.verifySpinUs / 1000), load);
}
