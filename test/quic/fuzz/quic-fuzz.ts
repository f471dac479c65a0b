/**
 * The QUIC fuzz without sockets: cases in turn against the endpoints (datagram-target.ts),
 * the connections' frames (frame-target.ts) and the TLS handshake (tls-target.ts), each case
 * seeded from the run's seed and its number, so that a seed replays a run and a seed and a
 * case number replay one case. A case fails when an exception escapes a state machine or an
 * invariant breaks; the run also fails when one case takes seconds (a loop or a quadratic
 * path a peer can drive) or memory grows past what a process may hold.
 */
import { datagramCase } from './datagram-target';
import { frameCase } from './frame-target';
import { FuzzRandom } from './fuzz-random';
import { FuzzFailure } from './fuzz-world';
import { tlsCase } from './tls-target';

export const TARGETS = { datagrams: datagramCase, frames: frameCase, tls: tlsCase } as const;
export type TargetName = keyof typeof TARGETS;
const NAMES = Object.keys(TARGETS) as TargetName[];

/** A case slower than this is a peer-driven blow-up, not a slow machine. */
const MAX_CASE_MS = 10_000;
/** Heap and buffers past these: the fuzz is making a state machine hold without bound. */
const MAX_HEAP_BYTES = 1_536 * 1024 * 1024;
const MAX_BUFFER_BYTES = 512 * 1024 * 1024;

export interface QuicFuzzFailure {
  readonly caseNumber: number;
  readonly target: TargetName;
  readonly problem: string;
  /** The input the failing call was given, hex (empty when the failure was not one input's). */
  readonly input: string;
}

export interface QuicFuzzReport {
  readonly seed: number;
  readonly cases: number;
  /** Inputs thrown at state machines, per target. */
  readonly inputs: Record<TargetName, number>;
  readonly failure?: QuicFuzzFailure;
}

/** Case `caseNumber` of the run seeded `seed`, and the target it goes to. */
export function caseOf(seed: number, caseNumber: number): { target: TargetName; random: FuzzRandom } {
  const random = new FuzzRandom((seed ^ Math.imul(caseNumber + 1, 0x9e3779b1)) >>> 0);
  return { target: NAMES[caseNumber % NAMES.length]!, random };
}

export function runQuicFuzz(options: {
  readonly seed: number;
  /** Stop after this long, or `cases`, whichever comes first. */
  readonly seconds: number;
  readonly cases?: number;
  /** Only this case (to replay one). */
  readonly only?: number;
  readonly onProgress?: (cases: number) => void;
}): QuicFuzzReport {
  const inputs: Record<TargetName, number> = { datagrams: 0, frames: 0, tls: 0 };
  const started = performance.now();
  const first = options.only ?? 0;
  const end = options.only === undefined ? (options.cases ?? Infinity) : options.only + 1;
  let caseNumber = first;
  for (; caseNumber < end && performance.now() - started < options.seconds * 1000; caseNumber++) {
    const { target, random } = caseOf(options.seed, caseNumber);
    const caseStarted = performance.now();
    try {
      inputs[target] += TARGETS[target](random);
      const took = performance.now() - caseStarted;
      if (took > MAX_CASE_MS) throw new FuzzFailure(`the case took ${(took / 1000).toFixed(1)} s`, undefined);
      const memory = process.memoryUsage();
      if (memory.heapUsed > MAX_HEAP_BYTES || memory.arrayBuffers > MAX_BUFFER_BYTES)
        throw new FuzzFailure(
          `memory grew to ${mib(memory.heapUsed)} MiB of heap and ${mib(memory.arrayBuffers)} MiB of buffers`,
          undefined,
        );
    } catch (error) {
      const failure =
        error instanceof FuzzFailure
          ? error
          : new FuzzFailure(`the fuzz itself threw: ${(error as Error).stack ?? String(error)}`, undefined);
      return {
        seed: options.seed,
        cases: caseNumber - first + 1,
        inputs,
        failure: { caseNumber, target, problem: failure.problem, input: failure.input?.toString('hex') ?? '' },
      };
    }
    if ((caseNumber + 1) % 100 === 0) options.onProgress?.(caseNumber + 1 - first);
  }
  return { seed: options.seed, cases: caseNumber - first, inputs };
}

const mib = (bytes: number) => (bytes / 1024 / 1024).toFixed(0);
