/**
 * What sending over QUIC to a TPU costs, beside the floor of the same machine in the same
 * run: the CPU per datagram of a process that only calls `dgram.send`, and the CPU per
 * transaction of Slipway's QUIC client (`tpu-sender.ts`), each read from /proc over a
 * measured stretch after warm-up, against a receiver in processes of their own: Debian's
 * quic-go 0.29 when it is installed (an implementation not ours), else Slipway's own server.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import readline from 'node:readline';
import { cpuMicros } from './proc-cpu';

const ROOT = path.resolve(__dirname, '../..');

export interface TpuRun {
  readonly leaders: number;
  readonly transactions: number;
  readonly seconds: number;
  readonly tps: number;
  readonly cpuUsPerTx: number;
  /** The receivers' CPU per transaction over the same stretch (they must not be the bottleneck). */
  readonly receiverCpuUsPerTx: number;
  readonly datagramsPerTx: number;
  readonly packetsLost: number;
}

export interface TpuCost {
  readonly receiver: string;
  readonly floor: { readonly datagrams: number; readonly seconds: number; readonly cpuUsPerDatagram: number };
  readonly oneLeader: TpuRun;
  readonly severalLeaders: TpuRun;
}

type Line = Record<string, unknown> & { event: string };

/** A child whose stdout is JSON lines; `next(event)` resolves with the next line of that event. */
function child(command: string, args: string[]) {
  const process_ = spawn(command, args, { cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'] });
  const waiting: { event: string; resolve: (line: Line) => void; reject: (error: Error) => void }[] = [];
  const backlog: Line[] = [];
  let stderr = '';
  process_.stderr!.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-2000)));
  readline.createInterface({ input: process_.stdout! }).on('line', (text) => {
    let line: Line;
    try {
      line = JSON.parse(text) as Line;
    } catch {
      return;
    }
    if (line.event === 'error') for (const waiter of waiting.splice(0)) waiter.reject(new Error(String(line.message)));
    const index = waiting.findIndex((waiter) => waiter.event === line.event);
    if (index >= 0) waiting.splice(index, 1)[0]!.resolve(line);
    else backlog.push(line);
  });
  process_.once('exit', (code) => {
    for (const waiter of waiting.splice(0))
      waiter.reject(new Error(`${path.basename(command)} ${args[0] ?? ''} exited with ${code}: ${stderr}`));
  });
  return {
    process: process_,
    next(event: string): Promise<Line> {
      const index = backlog.findIndex((line) => line.event === event);
      if (index >= 0) return Promise.resolve(backlog.splice(index, 1)[0]!);
      return new Promise((resolve, reject) => waiting.push({ event, resolve, reject }));
    },
  };
}

function stop(process_: ChildProcess): Promise<void> {
  if (process_.exitCode !== null || process_.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    process_.once('exit', () => resolve());
    process_.kill('SIGTERM');
  });
}

/** The quic-go receiver's binary, built offline from Debian's packages; undefined when they are not installed. */
function quicGoPeer(): string | undefined {
  try {
    return execFileSync('sh', [path.join(ROOT, 'scripts/build-interop.sh')], { cwd: ROOT, stdio: ['ignore', 'pipe', 'ignore'] })
      .toString()
      .trim()
      .split('\n')
      .pop();
  } catch {
    return undefined;
  }
}

async function receivers(count: number): Promise<{ name: string; ports: number[]; pids: number[]; close: () => Promise<void> }> {
  const binary = quicGoPeer();
  if (binary !== undefined) {
    const started = await Promise.all(
      Array.from({ length: count }, async () => {
        const peer = child(binary, ['receive', '--listen', '127.0.0.1:0', '--quiet']);
        const listening = await peer.next('listening');
        return { peer, port: Number(listening.port) };
      }),
    );
    return {
      name: 'quic-go 0.29 (Debian), one process per leader',
      ports: started.map((entry) => entry.port),
      pids: started.map((entry) => entry.peer.process.pid!),
      close: async () => void (await Promise.all(started.map((entry) => stop(entry.peer.process)))),
    };
  }
  const own = child(process.execPath, [path.join(ROOT, 'dist/bench/tpu-receiver.js'), String(count)]);
  const ports: number[] = [];
  for (let i = 0; i < count; i++) ports.push(Number((await own.next('listening')).port));
  return {
    name: "Slipway's own QUIC server, one process (quic-go is not installed: apt-get install golang-go golang-github-lucas-clemente-quic-go-dev)",
    ports,
    pids: [own.process.pid!],
    close: () => stop(own.process),
  };
}

async function floor(port: number, warmupS: number, seconds: number) {
  const sender = child(process.execPath, [path.join(ROOT, 'dist/bench/udp-floor.js'), String(port), String(warmupS), String(seconds)]);
  const start = await sender.next('start');
  const cpuStart = cpuMicros(sender.process.pid!);
  const end = await sender.next('end');
  const cpuEnd = cpuMicros(sender.process.pid!);
  await stop(sender.process);
  const datagrams = Number(end.sent) - Number(start.sent);
  return { datagrams, seconds, cpuUsPerDatagram: (cpuEnd - cpuStart) / datagrams };
}

async function tpuRun(ports: number[], receiverPids: number[], warmupS: number, seconds: number): Promise<TpuRun> {
  const config = { ports, warmupS, seconds, outstanding: 512 };
  const sender = child(process.execPath, [path.join(ROOT, 'dist/bench/tpu-sender.js'), JSON.stringify(config)]);
  const receiversCpu = () => receiverPids.reduce((sum, pid) => sum + cpuMicros(pid), 0);
  await sender.next('start');
  const cpuStart = cpuMicros(sender.process.pid!);
  const receiverStart = receiversCpu();
  const end = await sender.next('end');
  const cpuEnd = cpuMicros(sender.process.pid!);
  const receiverEnd = receiversCpu();
  await stop(sender.process);
  const transactions = Number(end.measured);
  return {
    leaders: ports.length,
    transactions,
    seconds: Number(end.seconds),
    tps: transactions / Number(end.seconds),
    cpuUsPerTx: (cpuEnd - cpuStart) / transactions,
    receiverCpuUsPerTx: (receiverEnd - receiverStart) / transactions,
    datagramsPerTx: Number(end.datagramsSent) / Number(end.delivered),
    packetsLost: Number(end.packetsLost),
  };
}

export async function measureTpuCost(quick: boolean, progress: (what: string, seconds: number) => void): Promise<TpuCost> {
  const warmupS = quick ? 1 : 5;
  const several = 4;
  const started = await receivers(1 + several);
  try {
    const floorS = quick ? 3 : 10;
    progress('floor: a process that only calls dgram.send (1,252-byte datagrams)', warmupS + floorS);
    const floorResult = await floor(started.ports[0]!, warmupS, floorS);
    const oneS = quick ? 5 : 30;
    progress(`TPU over QUIC: one connection, pre-signed 1,232-byte transactions (${started.name})`, warmupS + oneS);
    const oneLeader = await tpuRun([started.ports[0]!], started.pids.length > 1 ? [started.pids[0]!] : started.pids, warmupS, oneS);
    const severalS = quick ? 3 : 10;
    progress(`TPU over QUIC: ${several} leaders from one process`, warmupS + severalS);
    const severalLeaders = await tpuRun(
      started.ports.slice(1),
      started.pids.length > 1 ? started.pids.slice(1) : started.pids,
      warmupS,
      severalS,
    );
    return { receiver: started.name, floor: floorResult, oneLeader, severalLeaders };
  } finally {
    await started.close();
  }
}
