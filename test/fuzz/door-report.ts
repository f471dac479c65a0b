/**
 * What the fuzz suite's doors share: the gateway they attack (its ports can change when it
 * is restarted after a crash), one door's tally, and the loop that draws a door's inputs
 * from its seed a chunk at a time and sends them with a few workers.
 *
 * Inputs are drawn in chunks (the seed of chunk c is seed + c), so that a long run holds
 * only one chunk and an input's index names it: the same seed and count replay it.
 */
import fc from 'fast-check';
import type { Failure } from './answer-checks';

export interface Target {
  /** http://127.0.0.1:PORT */
  readonly url: string;
  readonly port: number;
  /** The WebSocket listener on port + 1. */
  readonly wsPort: number;
  readonly key: string;
  /** False once the gateway process has exited: the door stops. */
  alive(): boolean;
}

export interface DoorReport {
  readonly door: string;
  /** Requests, or WebSocket actions, sent. */
  sent: number;
  /** WebSocket frames written (a message in parts is several); 0 for HTTP doors. */
  frames: number;
  /** Answers by class: status and error code. */
  readonly classes: Map<string, number>;
  readonly failures: Failure[];
  fiveXx: number;
  internalErrors: number;
  /** Times the gateway process exited during the door. */
  exits: number;
  rssBeforeMiB: number | null;
  rssAfterMiB: number | null;
  seconds: number;
}

export function newDoorReport(door: string): DoorReport {
  return {
    door,
    sent: 0,
    frames: 0,
    classes: new Map(),
    failures: [],
    fiveXx: 0,
    internalErrors: 0,
    exits: 0,
    rssBeforeMiB: null,
    rssAfterMiB: null,
    seconds: 0,
  };
}

/** What a door is run with. */
export interface DoorRun {
  readonly target: Target;
  readonly seed: number;
  readonly count: number;
  readonly concurrency: number;
  readonly report: DoorReport;
  readonly onSent?: () => void;
}

const CHUNK = 1_000;

/** Draws `count` inputs from `arbitrary` and hands each to `send` with `concurrency` workers; stops early if the gateway is gone. */
export async function forEachSample<T>(
  run: DoorRun,
  arbitrary: fc.Arbitrary<T>,
  send: (input: T, index: number, worker: number) => Promise<void>,
  concurrency = run.concurrency,
): Promise<void> {
  for (let chunk = 0; chunk * CHUNK < run.count; chunk++) {
    if (!run.target.alive()) return;
    const inputs = fc.sample(arbitrary, { seed: run.seed + chunk, numRuns: Math.min(CHUNK, run.count - chunk * CHUNK) });
    let next = 0;
    await Promise.all(
      Array.from({ length: concurrency }, async (_, worker) => {
        for (;;) {
          const offset = next++;
          if (offset >= inputs.length || !run.target.alive()) return;
          await send(inputs[offset]!, chunk * CHUNK + offset, worker);
          run.report.sent += 1;
          run.onSent?.();
        }
      }),
    );
  }
}
