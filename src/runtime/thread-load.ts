/**
 * How busy the request thread is, and where work that can run either here or on another
 * thread should run now.
 *
 * A hop to a worker thread and back costs latency (two messages, and on a small machine the
 * worker may wait milliseconds for a core), so while the request thread has time to spare,
 * work runs inline; under load the request thread is the bottleneck and other cores are
 * what raise throughput (measured: offloading all of it under full load gives the most
 * throughput, most of all for batches; a share steered to keep the request thread 85 %
 * busy gave 20 % less for /submit-batch).
 *
 * Busy means CPU time: the thread's own, from /proc/thread-self/schedstat (nanoseconds on
 * the CPU), sampled every 50 ms and smoothed over about a quarter of a second, so that one
 * garbage collection or burst does not bring work back. Moving it off is decided by the
 * last sample alone as well: after an idle spell the smoothed figure took about 300 ms to
 * climb past the mark, and at a rate the thread cannot carry with the work inline (measured:
 * 8,000 requests/s with verification inline) the queue built in that time took a second and
 * more to drain (p99 over 2 s rounds 87 → 33 ms, median of five, bench:compare). Coming back
 * takes the last sample's agreement too, for the same lag. The event loop's utilisation, the fallback
 * where that file does not exist, overstates it when the cores are contended (time the
 * thread waits for a core counts as busy).
 */
import fs from 'node:fs';
import { performance, type EventLoopUtilization } from 'node:perf_hooks';

const SAMPLE_MS = 50;
/** Weight of the newest sample in the smoothed figures. */
const SMOOTHING = 0.2;
/** Above this share of busy time, work moves off the request thread... */
export const OFFLOAD_ABOVE = 0.7;
/** ...and comes back when the thread would stay under this share with the work's own cost added back (the gap keeps it from flapping). */
export const INLINE_BELOW = 0.55;

export interface ThreadLoad {
  /** The smoothed share of time the event loop was busy. */
  readonly busy: number;
  /** The share over the last sample alone (50 ms). */
  readonly latest: number;
  /** Called after each sample. */
  onSample(listener: () => void): void;
  close(): void;
}

/** `utilisation` is for tests: by default the thread's CPU time (or event-loop utilisation) since the previous call. */
export function watchThreadLoad(utilisation: () => number = threadCpuUtilisation() ?? eventLoopUtilisation()): ThreadLoad {
  let busy = 0;
  let latest = 0;
  const listeners: (() => void)[] = [];
  const timer = setInterval(() => {
    latest = Math.min(1, utilisation());
    busy += (latest - busy) * SMOOTHING;
    for (const listener of listeners) listener();
  }, SAMPLE_MS);
  timer.unref();
  return {
    get busy() {
      return busy;
    },
    get latest() {
      return latest;
    },
    onSample: (listener) => void listeners.push(listener),
    close: () => clearInterval(timer),
  };
}

/** Decides, for one kind of work, whether it runs inline now. */
export interface OffloadSwitch {
  readonly inline: boolean;
  /** Reports `units` of work done (inline, taking `inlineMs`; or offloaded, without a time). */
  ran(units: number, inlineMs?: number): void;
}

/** `initialCostMs` is the guess of one unit's inline cost until one has been timed. */
export function createOffloadSwitch(
  load: ThreadLoad,
  initialCostMs: number,
  onChange: (inline: boolean) => void = () => {},
): OffloadSwitch {
  let inline = true;
  let costMs = initialCostMs;
  let units = 0; // done since the last sample, wherever
  let share = 0; // of the thread's time this work takes, or would take, inline
  load.onSample(() => {
    const latestShare = (units * costMs) / SAMPLE_MS;
    share += (latestShare - share) * SMOOTHING;
    units = 0;
    const was = inline;
    if (inline && Math.max(load.busy, load.latest) > OFFLOAD_ABOVE) inline = false;
    // Back only when the smoothed figures and the last sample alone both say it would fit:
    // the smoothed ones lag after an idle spell just as they do going out, and coming back
    // on them alone undid the move 50 ms after it (seen flapping at the start of each burst
    // at a quarter of capacity, a queue building at each return).
    else if (!inline && Math.max(load.busy + share, load.latest + latestShare) < INLINE_BELOW) inline = true;
    if (inline !== was) onChange(inline);
  });
  return {
    get inline() {
      return inline;
    },
    ran(count, inlineMs) {
      units += count;
      // A slowly moving average: one slow call (a GC pause) must not swing the estimate.
      if (inlineMs !== undefined && count > 0) costMs += (inlineMs / count - costMs) / 64;
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
