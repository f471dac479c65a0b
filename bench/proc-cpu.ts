/** A process's CPU time (user + system) from /proc, in microseconds: what a child used, read from outside it. */
import fs from 'node:fs';
import os from 'node:os';

const TICKS_PER_SECOND = 100;

export function cpuMicros(pid: number): number {
  return statMicros(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'));
}

/** Each thread of a process with its name (what the runtime called it: the main thread, libuv's pool, V8's, workers) and CPU time, µs. */
export function threadMicros(pid: number): { tid: number; name: string; micros: number }[] {
  return fs.readdirSync(`/proc/${pid}/task`).flatMap((tid) => {
    try {
      const name = fs.readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim();
      return [{ tid: Number(tid), name, micros: statMicros(fs.readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8')) }];
    } catch {
      return []; // the thread ended while being read
    }
  });
}

function statMicros(stat: string): number {
  // The command name may hold spaces and parentheses: fields are counted from the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  return ((utime + stime) * 1_000_000) / TICKS_PER_SECOND;
}

/** The machine's CPU time since boot from /proc/stat, in ticks: all of it, idle (with I/O wait), and stolen by the host. */
export function machineTicks(): { total: number; idle: number; steal: number } {
  const line = fs.readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!;
  const [user, nice, system, idle, iowait, irq, softirq, steal] = line.trim().split(/\s+/).slice(1).map(Number) as number[];
  return {
    total: user! + nice! + system! + idle! + iowait! + irq! + softirq! + steal!,
    idle: idle! + iowait!,
    steal: steal!,
  };
}

/** CPU while a step ran, in % of one core: the cluster's process, each gateway's, this process's, the whole machine's and what the host stole. */
export interface CpuShares<G extends string> {
  readonly clusterPct: number;
  readonly gatewaysPct: Record<G, number>;
  readonly benchPct: number;
  readonly machineBusyPct: number;
  readonly machineStealPct: number;
  readonly cores: number;
}

/** Starts counting CPU time of the cluster `clusterPid` and the `gateways` (name → pid); `end()` gives each share since. */
export function cpuDuring<G extends string>(clusterPid: number, gateways: Record<G, number>): { end(): CpuShares<G> } {
  const startedAt = performance.now();
  const names = Object.keys(gateways) as G[];
  const pids = [clusterPid, ...names.map((name) => gateways[name])];
  const before = pids.map(cpuMicros);
  const bench = process.cpuUsage();
  const machine = machineTicks();
  return {
    end() {
      const elapsedUs = (performance.now() - startedAt) * 1000;
      const pct = (us: number) => Math.round((1000 * us) / elapsedUs) / 10;
      const used = pids.map((pid, i) => cpuMicros(pid) - before[i]!);
      const benchUsed = process.cpuUsage(bench);
      const now = machineTicks();
      const cores = os.cpus().length;
      const total = now.total - machine.total;
      return {
        clusterPct: pct(used[0]!),
        gatewaysPct: Object.fromEntries(names.map((name, i) => [name, pct(used[i + 1]!)])) as Record<G, number>,
        benchPct: pct(benchUsed.user + benchUsed.system),
        machineBusyPct: Math.round((1000 * cores * (total - (now.idle - machine.idle))) / total) / 10,
        machineStealPct: Math.round((1000 * cores * (now.steal - machine.steal)) / total) / 10,
        cores,
      };
    },
  };
}
