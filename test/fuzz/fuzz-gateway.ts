/**
 * Attacks every door of a running gateway, one door after the other, with inputs drawn
 * from one seed, and reports per door: what was sent, the answers by class, and what broke
 * a rule (answer-checks.ts). Meanwhile /health is asked twice a second over a connection of
 * its own (health-watch.ts), and the process is watched: if it exits, that door counts an
 * exit and the gateway is started again for the next door.
 *
 * A failure names its door, the input's index and the seed: `npm run fuzz -- --seed S
 * --count N` draws the same inputs again.
 */
import type { Failure } from './answer-checks';
import { count } from './answer-checks';
import { forEachSample, newDoorReport, type DoorReport, type DoorRun } from './door-report';
import { postAndCheck } from './fetch-doors';
import type { FuzzTarget } from './fuzz-target';
import { watchHealth, type HealthCheck } from './health-watch';
import { hostileFrames } from './hostile-frames';
import { hostileRawRequests, methodsOnPaths } from './hostile-raw-requests';
import { readArbitraries } from './hostile-reads';
import { hostileRequests } from './hostile-requests';
import { hostileUpgrades } from './hostile-upgrades';
import { sendRawRequests, sendUpgrades } from './socket-doors';
import { sendFrames } from './websocket-door';

/** The doors, in the order they are attacked, with their share of a run's inputs. */
export const DOORS = {
  'http bodies': 0.3,
  'read methods': 0.15,
  'json-rpc batches': 0.05,
  'methods × paths': 0.1,
  'raw http, main port': 0.15,
  'raw http, port + 1': 0.05,
  upgrades: 0.08,
  'websocket frames': 0.12,
} as const;
export type DoorName = keyof typeof DOORS;

/** A run of `total` inputs shared out by DOORS (rounding given to the first door). */
export function countsFor(total: number): Record<DoorName, number> {
  const names = Object.keys(DOORS) as DoorName[];
  const counts = Object.fromEntries(names.map((name) => [name, Math.floor(total * DOORS[name])])) as Record<DoorName, number>;
  counts['http bodies'] += total - names.reduce((sum, name) => sum + counts[name], 0);
  return counts;
}

export interface FuzzOptions {
  readonly target: FuzzTarget;
  readonly seed: number;
  readonly counts: Partial<Record<DoorName, number>>;
  /** Connections at once (WebSocket: at most 6 sockets). */
  readonly concurrency?: number;
  readonly onProgress?: (door: DoorName, sent: number) => void;
}

export interface FuzzReport {
  readonly seed: number;
  readonly doors: DoorReport[];
  readonly health: HealthCheck[];
  /** The gateway's log lines at level error, for the report. */
  readonly errorLines: string[];
}

type DoorRunner = (run: DoorRun, target: FuzzTarget) => Promise<void>;

const RUNNERS: Record<DoorName, DoorRunner> = {
  'http bodies': (run, t) => forEachSample(run, hostileRequests(t.validTransactions), postAndCheck(run)),
  'read methods': (run, t) => forEachSample(run, readArbitraries(t).reads, postAndCheck(run)),
  'json-rpc batches': (run, t) => forEachSample(run, readArbitraries(t).batches, postAndCheck(run)),
  // One in five on port + 1, which must refuse every plain request with 426.
  'methods × paths': (run, t) => forEachSample(run, methodsOnPaths(t.key), sendRawRequests(run, 5)),
  'raw http, main port': (run, t) => forEachSample(run, hostileRawRequests(t.key), sendRawRequests(run, 0)),
  'raw http, port + 1': (run, t) => forEachSample(run, hostileRawRequests(t.key), sendRawRequests(run, 1)),
  upgrades: (run, t) => forEachSample(run, hostileUpgrades(t.key), sendUpgrades(run)),
  'websocket frames': async (run, t) => {
    const door = sendFrames(run);
    try {
      await forEachSample(run, hostileFrames(t.knownSignatures), door.send, Math.min(run.concurrency, 6));
    } finally {
      const notifications = door.close();
      if (notifications > 0) run.report.classes.set('(notifications received meanwhile)', notifications);
    }
  },
};

export async function fuzzGateway(options: FuzzOptions): Promise<FuzzReport> {
  const { target, seed } = options;
  const health = watchHealth(target.url);
  const doors: DoorReport[] = [];
  const windows: { door: DoorReport; from: number; to: number }[] = [];
  let checks: HealthCheck[];
  try {
    for (const name of Object.keys(DOORS) as DoorName[]) {
      const inputs = options.counts[name] ?? 0;
      if (inputs === 0) continue;
      const report = newDoorReport(name);
      doors.push(report);
      const run: DoorRun = {
        target,
        seed,
        count: inputs,
        concurrency: options.concurrency ?? 8,
        report,
        onSent: () => options.onProgress?.(name, report.sent),
      };
      report.rssBeforeMiB = target.rssMiB();
      const from = Date.now();
      try {
        await RUNNERS[name](run, target);
      } catch (error) {
        report.failures.push({
          door: name,
          index: -1,
          kind: 'the fuzzer',
          problem: `the door's run threw: ${error instanceof Error ? error.stack : String(error)}`,
        });
      }
      // Answers in flight when the process died are failures of their own; the exit is this door's.
      report.rssAfterMiB = target.rssMiB();
      if (await target.restartIfExited()) {
        report.exits += 1;
        report.failures.push({
          door: name,
          index: report.sent,
          kind: 'process',
          problem: `the gateway process exited during this door (after about ${report.sent} inputs) and was started again`,
        });
        health.retarget(target.url);
      }
      report.seconds = (Date.now() - from) / 1000;
      windows.push({ door: report, from, to: Date.now() });
    }
  } finally {
    checks = await health.stop();
  }
  for (const check of checks) {
    if (check.problem === undefined) continue;
    const door = windows.find((w) => check.at >= w.from && check.at <= w.to)?.door ?? doors[doors.length - 1];
    const failure: Failure = {
      door: door?.door ?? 'none',
      index: -1,
      kind: 'health',
      problem: `${check.problem} (asked ${new Date(check.at).toISOString()}, ${check.ms} ms)`,
    };
    door?.failures.push(failure);
    if (door !== undefined) count(door.classes, '(GET /health failed meanwhile)');
  }
  return { seed, doors, health: checks, errorLines: target.errorLines() };
}
