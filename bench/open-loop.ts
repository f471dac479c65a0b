/**
 * An open-loop client: sends at a fixed rate on a schedule, whatever the server's answers
 * (a closed-loop client would slow down with the server and hide its queueing), and times
 * each request itself in microseconds into an HDR histogram.
 */
import * as hdr from 'hdr-histogram-js';
import { Pool } from 'undici';

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

export async function runOpenLoop(options: OpenLoopOptions): Promise<LatencyResult> {
  const pool = new Pool(options.url, { connections: options.connections, pipelining: 1, keepAliveTimeout: 60_000 });
  const histogram = hdr.build({ lowestDiscernibleValue: 1, highestTrackableValue: 60_000_000, numberOfSignificantValueDigits: 3 });
  const interval = 1e9 / options.rate; // ns between sends
  const started = process.hrtime.bigint();
  const end = started + BigInt(options.durationMs) * 1_000_000n;
  let sent = 0;
  let ok = 0;
  let failed = 0;
  const inFlight = new Set<Promise<void>>();

  const send = () => {
    const body = options.nextBody();
    const t0 = process.hrtime.bigint();
    const p = pool
      .request({ path: options.path, method: 'POST', headers: options.headers, body })
      .then(async (response) => {
        const text = await response.body.text();
        const micros = Number((process.hrtime.bigint() - t0) / 1000n);
        histogram.recordValue(Math.max(1, micros));
        if (response.statusCode === 200 && !text.includes('"error"')) ok++;
        else failed++;
      })
      .catch(() => {
        failed++;
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
      // what is due; each request is still timed from its own send.
      setTimeout(tick, Math.max(0, Math.floor(waitMs)));
    };
    tick();
  });
  await Promise.all(inFlight);
  await pool.close();
  const elapsedS = Number(process.hrtime.bigint() - started) / 1e9;
  return {
    sent,
    ok,
    failed,
    achievedRate: sent / elapsedS,
    p50: histogram.getValueAtPercentile(50),
    p90: histogram.getValueAtPercentile(90),
    p99: histogram.getValueAtPercentile(99),
    p999: histogram.getValueAtPercentile(99.9),
    max: histogram.maxValue,
  };
}
