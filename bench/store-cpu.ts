/**
 * The CPU time PostgreSQL and Redis spend on a gateway's behalf, read from /proc like the
 * gateway's own (proc-cpu.ts), so that a cluster's request is costed in full: the gateway,
 * its PostgreSQL backends with the server's shared processes (WAL writer, checkpointer,
 * background writer, autovacuum), and the Redis server.
 *
 * The machine's PostgreSQL and Redis may serve others meanwhile (tests): PostgreSQL's other
 * client backends are left out and reported apart, so that a reader sees whether they were
 * busy; Redis is one process and is counted whole, with the commands it ran in the window.
 */
import fs from 'node:fs';
import pg from 'pg';
import { Redis } from 'ioredis';
import { cpuMicros } from './proc-cpu';

export interface StoreCpu {
  /** µs of CPU since `start()`: the gateways' backends and PostgreSQL's shared processes; other clients' backends; Redis. */
  readonly postgresUs: number;
  /** Of postgresUs: the gateways' own backends (the rest is the server's shared processes). */
  readonly postgresBackendsUs: number;
  readonly otherPostgresClientsUs: number;
  readonly redisUs: number;
  /** Commands Redis ran in the window (all clients'). */
  readonly redisCommands: number;
}

export interface StoreCpuMeter {
  start(): Promise<void>;
  end(): Promise<StoreCpu>;
  close(): Promise<void>;
}

interface PostgresProcess {
  readonly pid: number;
  readonly ours: boolean;
  readonly client: boolean;
}

/** A pid's CPU time, µs, or undefined when it has ended. */
function cpuOf(pid: number): number | undefined {
  try {
    return cpuMicros(pid);
  } catch {
    return undefined;
  }
}

function parentOf(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
}

/** The postmaster's children that are not in pg_stat_activity (the logger, the archiver) still count as shared. */
function childrenOf(parent: number): number[] {
  const pids: number[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (parentOf(Number(entry)) === parent) pids.push(Number(entry));
    } catch {
      // ended while being read
    }
  }
  return pids;
}

/**
 * Meters PostgreSQL (at `postgresUrl`) and Redis (at `redisUrl`); the gateways' backends are
 * those whose application_name is `applicationName` (the gateways get it as PGAPPNAME).
 */
export async function storeCpuMeter(postgresUrl: string, redisUrl: string, applicationName: string): Promise<StoreCpuMeter> {
  const client = new pg.Client({ connectionString: postgresUrl, application_name: 'slipway-bench-meter' });
  await client.connect();
  const redis = new Redis(redisUrl);
  // The postmaster is the parent of every backend, this meter's among them.
  const own = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
  const postmaster = parentOf(own);
  const redisPid = Number(/process_id:(\d+)/.exec(await redis.info('server'))?.[1]);
  const commands = async () => Number(/total_commands_processed:(\d+)/.exec(await redis.info('stats'))?.[1] ?? 0);

  const processes = async (): Promise<PostgresProcess[]> => {
    const activity = (
      await client.query<{ pid: number; backend_type: string; application_name: string }>(
        'SELECT pid, backend_type, application_name FROM pg_stat_activity',
      )
    ).rows;
    const known = new Map(activity.map((a) => [a.pid, a]));
    return [postmaster, ...childrenOf(postmaster)].map((pid) => {
      const row = known.get(pid);
      const client = row?.backend_type === 'client backend';
      return { pid, client, ours: !client || row.application_name === applicationName };
    });
  };

  let before = new Map<number, number>();
  let redisBefore = 0;
  let commandsBefore = 0;
  const sample = async () => new Map((await processes()).map((p) => [p.pid, cpuOf(p.pid) ?? 0]));

  return {
    async start() {
      before = await sample();
      redisBefore = cpuMicros(redisPid);
      commandsBefore = await commands();
    },
    async end() {
      const redisUs = cpuMicros(redisPid) - redisBefore;
      const redisCommands = (await commands()) - commandsBefore;
      let postgresUs = 0;
      let postgresBackendsUs = 0;
      let otherPostgresClientsUs = 0;
      for (const p of await processes()) {
        if (p.pid === own) continue; // this meter's own backend
        const used = (cpuOf(p.pid) ?? 0) - (before.get(p.pid) ?? 0);
        if (p.ours) postgresUs += used;
        else otherPostgresClientsUs += used;
        if (p.ours && p.client) postgresBackendsUs += used;
      }
      return { postgresUs, postgresBackendsUs, otherPostgresClientsUs, redisUs, redisCommands };
    },
    async close() {
      await client.end();
      await redis.quit();
    },
  };
}
