/**
 * How much garbage the old generation may collect before a full (mark-compact) collection.
 *
 * Every accepted submission leaves a few hundred bytes that outlive two young-generation
 * collections and die later (measured: about 600 bytes a request promoted at 5,000
 * requests/s). V8 starts the next full collection when the old generation exceeds what was
 * live after the last one times a factor it picks from its own speed; on a heap of about
 * 30 MB that factor stays low, and a full collection came every 1.5 s. Each one is some
 * 10 ms of marking steps and a 3 to 10 ms pause on the request thread, while V8's helper
 * threads (four by default) take both cores of a small machine for 20 to 30 ms: seen with
 * perf sched as the stalls behind the tail at a quarter of capacity (docs/PERFORMANCE.md).
 * A fixed, larger factor makes them rare for a bounded cost in memory.
 *
 * The flag is read each time V8 recomputes its limits, so setting it at start-up, before
 * the first full collection, is enough; isolates made later (the worker threads) share it.
 */
import v8 from 'node:v8';

/** `percent` 0 hands the choice back to V8. */
export function setHeapGrowth(percent: number): void {
  if (!Number.isInteger(percent) || percent < 0) throw new RangeError(`heap growth must be a whole number of percent, not ${percent}`);
  v8.setFlagsFromString(`--heap-growing-percent=${percent}`);
}
