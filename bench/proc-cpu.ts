/** A process's CPU time (user + system) from /proc, in microseconds: what a child used, read from outside it. */
import fs from 'node:fs';

const TICKS_PER_SECOND = 100;

export function cpuMicros(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
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
