/**
 * An open-loop client: sends at a fixed rate on a schedule, whatever the server's answers
 * (a closed-loop client would slow down with the server and hide its queueing), and times
 * each request in microseconds into an HDR histogram from when it was due, not from when it
 * went out: a client running late (its timer, its own CPU) adds to the figure instead of
 * hiding the wait (coordinated omission).
 *
 * A recorder accumulates several runs, so that two servers can be measured in alternating
 * rounds (see run.ts): a burst of noise from the machine's neighbours then lands on both.
 */
import * as hdr from 'hdr-histogram-js';
import { RawHttpPool } from './raw-pool';

export interface OpenLoopOptions {
  readonly url: string;
  readonly path: string;
  readonly headers: Record<string, string>;
  readonly nextBody: () => string;
  readonly rate: number;
  readonly durationMs: number;
  readonly connections: number;
}

export interface LatencyResult {
  readonly sent: number;
  readonly ok: number;
  readonly failed: number;
  readonly achievedRate: number;
  readonly p50: number;
  readonly p90: number;
  readonly p99: number;
  readonly p999: number;
  readonly max: number;
}

export interface LatencyRecorder {
  readonly histogram: hdr.Histogram;
  sent: number;
  ok: number;
  failed: number;
  /** Why the last request that got no answer failed. */
  lastFailure?: string;
  elapsedS: number;
}

export function createLatencyRecorder(): LatencyRecorder {
  return {
    histogram: hdr.build({ lowestDiscernibleValue: 1, highestTrackableValue: 60_000_000, numberOfSignificantValueDigits: 3 }),
    sent: 0,
    ok: 0,
    failed: 0,
    elapsedS: 0,
  };
}

export function summarize(recorder: LatencyRecorder): LatencyResult {
  const { histogram } = recorder;
  return {
    sent: recorder.sent,
    ok: recorder.ok,
    failed: recorder.failed,
    achievedRate: recorder.sent / recorder.elapsedS,
    p50: histogram.getValueAtPercentile(50),
    p90: histogram.getValueAtPercentile(90),
    p99: histogram.getValueAtPercentile(99),
    p999: histogram.getValueAtPercentile(99.9),
    max: histogram.maxValue,
  };
}

export function openLoopPool(url: string, connections: number): RawHttpPool {
  return new RawHttpPool(url, connections);
}

/**
 * One run into `recorder` (a fresh one by default), on `pool`'s connections (kept open
 * across rounds) or on connections of its own.
 */
export async function runOpenLoop(
  options: OpenLoopOptions,
  recorder: LatencyRecorder = createLatencyRecorder(),
  shared?: RawHttpPool,
): Promise<LatencyResult> {
  const pool = shared ?? openLoopPool(options.url, options.connections);
  const interval = 1e9 / options.rate; // ns between sends
  const started = process.hrtime.bigint();
  const end = started + BigInt(options.durationMs) * 1_000_000n;
  let sent = 0;
  const inFlight = new Set<Promise<void>>();

  // The same headers as a JSON-RPC client (and load.ts) sends: without a Content-Type,
  // Slipway's fast path steps aside and Fastify answers, which is not what clients get.
  const headers = { 'content-type': 'application/json', ...options.headers };
  const send = () => {
    const body = options.nextBody();
    const t0 = started + BigInt(Math.round(sent * interval)); // when it was due
    const p = pool
      .request(options.path, headers, body)
      .then((answer) => {
        const micros = Number((process.hrtime.bigint() - t0) / 1000n);
        recorder.histogram.recordValue(Math.max(1, micros));
        if (answer.status === 200 && answer.body.indexOf('"error"') === -1) recorder.ok++;
        else recorder.failed++;
      })
      .catch((error: unknown) => {
        recorder.failed++;
        recorder.lastFailure = error instanceof Error ? error.message : String(error);
      })
      .finally(() => inFlight.delete(p));
    inFlight.add(p);
    sent++;
  };

  await new Promise<void>((resolve) => {
    const tick = () => {
      const now = process.hrtime.bigint();
      if (now >= end) return resolve();
      const due = Number(now - started) / interval;
      while (sent < due) send();
      const nextAt = started + BigInt(Math.ceil((sent + 1) * interval));
      const waitMs = Number(nextAt - process.hrtime.bigint()) / 1e6;
      // Sleep, never spin: a spinning client would take a core from the server on a small
      // machine. Timers fire about once a millisecond, so sends go out in small bursts of
      // what is due; each request is timed from when it was due.
      setTimeout(tick, Math.max(0, Math.floor(waitMs)));
    };
    tick();
  });
  await Promise.all(inFlight);
  if (shared === undefined) await pool.close();
  recorder.sent += sent;
  recorder.elapsedS += Number(process.hrtime.bigint() - started) / 1e9;
  return summarize(recorder);
}
