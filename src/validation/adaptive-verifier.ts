/**
 * Signature verification where it costs the request least: in the request's own thread
 * while that thread has time to spare, on the worker threads once it is busy.
 *
 * A hop to a worker and back costs more latency than the 45 µs of verifying inline (two
 * messages, and on a small machine the worker waits for a core the scheduler may not give
 * it for milliseconds), but under full load the request thread is the bottleneck and the
 * workers' cores are what raise throughput. The switch follows the request thread's
 * event-loop utilisation, sampled every 50 ms and smoothed over about a quarter of a second
 * (one garbage collection or burst must not move it): verification moves to the workers
 * when the thread is busy more than 70 % of the time, and comes back when the thread would
 * stay under 55 % with verification's own cost added back (the gap keeps it from flapping).
 */
import { performance, type EventLoopUtilization } from 'node:perf_hooks';
import { inlineVerificationGauge } from '../metrics/metrics';
import type { SignatureVerifier } from './transaction-validator';
import { verifyTransactionSignatures } from './verify-signatures';

const SAMPLE_MS = 50;
export const OFFLOAD_ABOVE = 0.7;
export const INLINE_BELOW = 0.55;
/** Verification's cost in the request thread, per signature, before any has been timed. */
const INITIAL_COST_MS = 0.05;
/** Weight of the newest sample in the smoothed figures. */
const SMOOTHING = 0.2;

export interface AdaptiveVerifier extends SignatureVerifier {
  /** Whether verification currently runs in the request thread. */
  readonly inline: boolean;
}

/** `utilisation` is for tests: by default the event loop's own, since the previous call. */
export function createAdaptiveVerifier(workers: SignatureVerifier, utilisation: () => number = eventLoopUtilisation()): AdaptiveVerifier {
  let inline = true;
  let costMs = INITIAL_COST_MS;
  let signatures = 0; // verified since the last sample, wherever
  let busy = 0;
  let verifying = 0; // the share of the thread's time verification takes, or would take, inline
  inlineVerificationGauge.set(1);
  const sampler = setInterval(() => {
    busy += (utilisation() - busy) * SMOOTHING;
    verifying += ((signatures * costMs) / SAMPLE_MS - verifying) * SMOOTHING;
    signatures = 0;
    if (inline && busy > OFFLOAD_ABOVE) inline = false;
    else if (!inline && busy + verifying < INLINE_BELOW) inline = true;
    inlineVerificationGauge.set(inline ? 1 : 0);
  }, SAMPLE_MS);
  sampler.unref();
  return {
    get inline() {
      return inline;
    },
    verify(wire) {
      signatures += wire.signatures.length;
      if (!inline) return workers.verify(wire);
      const started = performance.now();
      const check = verifyTransactionSignatures(wire);
      // A slowly moving average: one slow call (a GC pause) must not swing the estimate.
      costMs += ((performance.now() - started) / wire.signatures.length - costMs) / 64;
      return Promise.resolve(check);
    },
    async close() {
      clearInterval(sampler);
      await workers.close();
    },
  };
}

/** A reader of the share of time the event loop was busy since the previous read. */
function eventLoopUtilisation(): () => number {
  let previous: EventLoopUtilization = performance.eventLoopUtilization();
  return () => {
    const now = performance.eventLoopUtilization();
    const share = performance.eventLoopUtilization(now, previous).utilization;
    previous = now;
    return share;
  };
}
