/**
 * Signature verification where it costs the request least: in the request's own thread
 * while that thread has time to spare, on the worker threads once it is busy (see
 * runtime/thread-load.ts for the switch and why).
 */
import { inlineVerificationGauge } from '../metrics/metrics';
import type { ThreadLoad } from '../runtime/thread-load';
import { createOffloadSwitch } from '../runtime/thread-load';
import type { SignatureVerifier } from './transaction-validator';
import { createTurnGroupVerifier } from './turn-group-verifier';
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
  // Inline, the transactions of a turn are verified as one group (turn-group-verifier.ts).
  const here = createTurnGroupVerifier((signatures, ms) => where.ran(signatures, ms));
  return {
    get inline() {
      return where.inline;
    },
    verify(wire) {
      if (!where.inline) {
        where.ran(wire.signatures.length);
        return workers.verify(wire);
      }
      return here.verify(wire);
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
  if (settings.verifyThreads === 0) return createTurnGroupVerifier();
  return createAdaptiveVerifier(createWorkerVerifier(settings.verifyThreads, settings.verifySpinUs / 1000), load);
}
