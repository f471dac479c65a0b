/**
 * `npm run soak [-- --minutes 10 | --cycles 200] [--connections 16]`: the gateway on the Node.js
 * that runs this (and so on any supported version: `PATH=/opt/node24/bin:$PATH npm run soak`),
 * in front of the sink upstream, with every acknowledged submission checked in the journal.
 *
 * --minutes N (default 10): distinct signed transfers at full load (closed loop) for N minutes,
 *   the resident set sampled each second, and each minute the gateway's CPU time a request,
 *   the load generator's, and one bare libsodium verification (the machine's speed then);
 *   then SIGTERM.
 * --cycles N: N start/stop cycles, each serving 200 transfers before SIGTERM.
 *
 * Fails (exit 1) on an abort or any exit other than 0, on a failed request, or on an
 * acknowledged submission missing from the journal. Writes bench/results/soak-node<major>.json
 * (or soak-cycles-node<major>.json).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { parsePrometheusText } from '../src/metrics/prometheus-text';
import { lostAcknowledgements, newTally, sendAcknowledged, type LoadTally } from './acknowledged-load';
import { libsodiumVerifyMicros } from './machine-state';
import { cpuMicros } from './proc-cpu';
import { rssMiB, startSlipway } from './processes';
import { newSigner, transferFactory } from './signed-transactions';

const { values } = parseArgs({ options: { minutes: { type: 'string' }, cycles: { type: 'string' }, connections: { type: 'string' } } });
const CONNECTIONS = Number(values.connections ?? 16);
const SINK = ['--upstream', 'sink'];
const PER_CYCLE = 200;

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;
const round = (value: number, digits = 1) => Number(value.toFixed(digits));
const transfers = () => transferFactory(newSigner(), newSigner().publicKey, Buffer.alloc(32, 7));

async function soakAtLoad(dataDir: string, minutes: number, tally: LoadTally) {
  const server = await startSlipway(dataDir, SINK);
  let ended: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  void server.exited.then((how) => (ended = how));
  const rss: number[] = [];
  // The JavaScript heap in use and memory held outside it (native, buffers), from the
  // gateway's own /metrics every 10 s: which of the two a growing resident set comes from.
  const heap: { usedMiB: number; externalMiB: number }[] = [];
  const heapSampler = setInterval(() => {
    void fetch(`${server.url}/metrics`)
      .then((answer) => answer.text())
      .then((text) => {
        const value = (name: string) => (parsePrometheusText(text).find((sample) => sample.name === name)?.value ?? 0) / 2 ** 20;
        heap.push({ usedMiB: round(value('nodejs_heap_size_used_bytes')), externalMiB: round(value('nodejs_external_memory_bytes')) });
      })
      .catch(() => {});
  }, 10_000);
  const startedAt = Date.now();
  const until = startedAt + minutes * 60_000;
  let lastRequests = 0;
  // Each minute's requests and the gateway's CPU time a request, and this process's (the load
  // generator signs as it sends): a minute with fewer requests but the same cost a request
  // was slowed by the load generator or the machine, not by the gateway.
  // One bare libsodium verification timed each minute gauges the machine's speed then.
  const minutesSeen: { requests: number; cpuUsPerRequest: number; loadGeneratorCpuUsPerRequest: number; libsodiumVerifyUs: number }[] = [];
  let lastCpu = cpuMicros(server.pid);
  let lastOwnCpu = cpuMicros(process.pid);
  const sampler = setInterval(() => {
    if (ended !== undefined) return;
    rss.push(rssMiB(server.pid));
    if (rss.length % 60 === 0) {
      const requests = tally.requests - lastRequests;
      const cpu = cpuMicros(server.pid);
      const ownCpu = cpuMicros(process.pid);
      minutesSeen.push({
        requests,
        cpuUsPerRequest: round((cpu - lastCpu) / Math.max(1, requests)),
        loadGeneratorCpuUsPerRequest: round((ownCpu - lastOwnCpu) / Math.max(1, requests)),
        libsodiumVerifyUs: round(libsodiumVerifyMicros(200)),
      });
      process.stderr.write(
        `soak: minute ${rss.length / 60}: ${requests} requests, ${tally.failed} failed, resident set ${Math.round(rss.at(-1)!)} MiB, ` +
          `${minutesSeen.at(-1)!.cpuUsPerRequest} µs of the gateway's CPU a request (the load generator's ${minutesSeen.at(-1)!.loadGeneratorCpuUsPerRequest}; libsodium ${minutesSeen.at(-1)!.libsodiumVerifyUs} µs)\n`,
      );
      lastRequests = tally.requests;
      lastCpu = cpu;
      lastOwnCpu = ownCpu;
    }
  }, 1000);
  await sendAcknowledged(
    {
      url: server.url,
      key: server.key!,
      connections: CONNECTIONS,
      nextTransaction: transfers(),
      done: () => Date.now() > until || ended !== undefined,
    },
    tally,
  );
  clearInterval(sampler);
  clearInterval(heapSampler);
  const seconds = (Date.now() - startedAt) / 1000;
  const abortedUnderLoad = ended !== undefined;
  await server.stop();
  const how = await server.exited;
  if (how.code !== 0) process.stderr.write(server.stderr().slice(-4000));
  const perMinute = Array.from({ length: Math.floor(rss.length / 60) }, (_, m) => round(median(rss.slice(m * 60, (m + 1) * 60))));
  return {
    ended: [how],
    abortedUnderLoad,
    seconds: round(seconds),
    rps: Math.round(tally.requests / seconds),
    // Memory: the median resident set of each minute, and the growth from the third minute
    // (the 120 s duplicate window has filled) to the last.
    rssMedianPerMinuteMiB: perMinute,
    rssMaxMiB: round(Math.max(...rss)),
    rssGrowthAfterMinute3MiB: perMinute.length >= 3 ? round(perMinute.at(-1)! - perMinute[2]!) : null,
    heapUsedMedianPerMinuteMiB: Array.from({ length: Math.floor(heap.length / 6) }, (_, m) =>
      median(heap.slice(m * 6, (m + 1) * 6).map((h) => h.usedMiB)),
    ),
    externalMedianPerMinuteMiB: Array.from({ length: Math.floor(heap.length / 6) }, (_, m) =>
      median(heap.slice(m * 6, (m + 1) * 6).map((h) => h.externalMiB)),
    ),
    perMinute: minutesSeen,
    rssEverySecond: rss.map((value) => Math.round(value)),
  };
}

async function startStopCycles(dataDir: string, cycles: number, tally: LoadTally) {
  const next = transfers();
  const ended: { code: number | null; signal: NodeJS.Signals | null }[] = [];
  let key: string | undefined; // printed on the first start only
  const startedAt = Date.now();
  for (let cycle = 0; cycle < cycles; cycle++) {
    let server;
    try {
      server = await startSlipway(dataDir, SINK);
    } catch (error) {
      ended.push({ code: null, signal: /exited with null/.test((error as Error).message) ? 'SIGABRT' : null });
      process.stderr.write(`soak: cycle ${cycle + 1} did not start: ${(error as Error).message.slice(-2000)}\n`);
      continue;
    }
    key ??= server.key;
    let sent = 0;
    await sendAcknowledged({ url: server.url, key: key!, connections: 4, nextTransaction: next, done: () => sent++ >= PER_CYCLE }, tally);
    await server.stop();
    const how = await server.exited;
    ended.push(how);
    if (how.code !== 0) process.stderr.write(`soak: cycle ${cycle + 1} ended ${JSON.stringify(how)}: ${server.stderr().slice(-2000)}\n`);
    if ((cycle + 1) % 20 === 0) process.stderr.write(`soak: ${cycle + 1} cycles\n`);
  }
  return { ended, seconds: round((Date.now() - startedAt) / 1000) };
}

async function main(): Promise<number> {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'slipway-soak-'));
  const dataDir = path.join(work, 'data');
  const cycles = values.cycles === undefined ? undefined : Number(values.cycles);
  const minutes = Number(values.minutes ?? 10);
  const tally = newTally();
  process.stderr.write(
    `soak: Node.js ${process.versions.node}, ${cycles === undefined ? `${minutes} minutes at full load, ${CONNECTIONS} connections` : `${cycles} start/stop cycles`}\n`,
  );
  try {
    const run = cycles === undefined ? await soakAtLoad(dataDir, minutes, tally) : await startStopCycles(dataDir, cycles, tally);
    const lost = await lostAcknowledgements(path.join(dataDir, 'journal.sqlite'), tally);
    const { ended, ...figures } = run;
    const { rssEverySecond, ...shown } = { rssEverySecond: undefined, ...figures };
    const summary = {
      node: process.versions.node,
      at: new Date().toISOString(),
      machine: { cores: os.cpus().length, cpu: os.cpus()[0]?.model ?? 'unknown' },
      mode: cycles === undefined ? { minutes, connections: CONNECTIONS } : { cycles },
      requests: tally.requests,
      acknowledged: tally.count,
      failed: tally.failed,
      failureReasons: Object.fromEntries(tally.reasons),
      notCleanExits: ended.filter((how) => how.code !== 0).map((how) => how.signal ?? `code ${how.code}`),
      lostAcknowledged: lost,
      ...shown,
    };
    process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
    const name = `soak${cycles === undefined ? '' : '-cycles'}-node${process.versions.node.split('.')[0]}.json`;
    fs.writeFileSync(path.resolve(__dirname, '../../bench/results', name), `${JSON.stringify({ ...summary, rssEverySecond }, null, 1)}\n`);
    return summary.notCleanExits.length === 0 && summary.failed === 0 && lost === 0 ? 0 : 1;
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

main().then(
  (code) => (process.exitCode = code),
  (error: unknown) => {
    process.stderr.write(`soak failed: ${error instanceof Error ? error.stack : String(error)}\n`);
    process.exitCode = 1;
  },
);
