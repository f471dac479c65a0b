/**
 * How busy the request thread is, and how much of the work that can run either here or on
 * another thread should run here.
 *
 * A hop to a worker thread and back costs latency and CPU time (two messages; waking a
 * thread is a system call, on a virtual machine an interrupt between cores; the worker may
 * wait milliseconds for a core), so while the request thread has time to spare, such work
 * runs inline. Under load the request thread is the bottleneck, and the other cores are
 * what raise throughput: then as much runs inline as keeps the thread about 85 % busy, and
 * the rest goes to the workers.
 *
 * Busy means CPU time: the thread's own, from /proc/thread-self/schedstat (nanoseconds on
 * the CPU), sampled every 50 ms and smoothed over about a quarter of a second. The event
 * loop's utilisation, the fallback where that file does not exist, overstates it when the
 * cores are contended (time the thread waits for a core counts as busy).
 */
import fs from 'node:fs';
import { performance, type EventLoopUtilization } from 'node:perf_hooks';

const SAMPLE_MS = 50;
/** Weight of the newest sample in the smoothed figure. */
const SMOOTHING = 0.2;
/** The band the inline share steers the thread's busy share into. */
export const BUSY_HIGH = 0.9;
export const BUSY_LOW = 0.8;
/** The inline share moves by one step (a tenth) per sample. */
const STEPS = 10;

export interface ThreadLoad {
  /** The smoothed share of time the request thread was busy. */
  readonly busy: number;
  /** Called after each sample. */
  onSample(listener: () => void): void;
  close(): void;
}

/** `utilisation` is for tests: by default the thread's CPU time (or event-loop utilisation) since the previous call. */
export function watchThreadLoad(utilisation: () => number = threadCpuUtilisation() ?? eventLoopUtilisation()): ThreadLoad {
  let busy = 0;
  const listeners: (() => void)[] = [];
  const timer = setInterval(() => {
    busy += (Math.min(1, utilisation()) - busy) * SMOOTHING;
    for (const listener of listeners) listener();
  }, SAMPLE_MS);
  timer.unref();
  return {
    get busy() {
      return busy;
    },
    onSample: (listener) => void listeners.push(listener),
    close: () => clearInterval(timer),
  };
}

/** Decides, piece by piece, whether work runs inline: a share of it, steered by the load. */
export interface OffloadShare {
  /** Whether the next piece of work runs inline. */
  inlineNow(): boolean;
  /** The share of work that currently runs inline (0 to 1). */
  readonly share: number;
}

export function createOffloadShare(load: ThreadLoad, onSample: (share: number) => void = () => {}): OffloadShare {
  let steps = STEPS; // the share, in whole steps
  let share = 1;
  let credit = 0;
  load.onSample(() => {
    if (load.busy > BUSY_HIGH) steps = Math.max(0, steps - 1);
    else if (load.busy < BUSY_LOW) steps = Math.min(STEPS, steps + 1);
    share = steps / STEPS;
    onSample(share);
  });
  return {
    inlineNow() {
      // Spread evenly: a share of 0.3 runs 3 pieces in 10 inline, not the first 3 of each 10.
      credit += steps;
      if (credit < STEPS) return false;
      credit -= STEPS;
      return true;
    },
    get share() {
      return share;
    },
  };
}

/** A reader of this thread's share of CPU time since the previous read, or undefined where Linux's schedstat is missing. */
function threadCpuUtilisation(): (() => number) | undefined {
  const file = '/proc/thread-self/schedstat';
  const read = () => Number(fs.readFileSync(file, 'latin1').split(' ', 1)[0]);
  try {
    if (!Number.isFinite(read())) return undefined;
  } catch {
    return undefined;
  }
  let previousCpu = read();
  let previousAt = process.hrtime.bigint();
  return () => {
    const cpu = read();
    const at = process.hrtime.bigint();
    const share = (cpu - previousCpu) / Number(at - previousAt);
    previousCpu = cpu;
    previousAt = at;
    return share;
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
