/**
 * `npm run soak [-- --minutes 10 | --cycles 200] [--connections 16]`: the gateway on the Node.js
 * that runs this (and so on any supported version: `PATH=/opt/node24/bin:$PATH npm run soak`),
 * in front of the sink upstream, with every acknowledged submission checked in the journal.
 *
 * --minutes N (default 10): distinct signed transfers at full load (closed loop) for N minutes,
 *   the resident set sampled each second, and each minute the gateway's CPU time a request,
 *   the load generator's, and one bare libsodium verification (the machine's speed then);
 *   then SIGTERM. Every 10 s the JavaScript heap (used and committed) and memory outside it from
 *   the gateway's /metrics, and its resident set split into anonymous and file-backed pages
 *   (/proc/<pid>/smaps_rollup); at the end of minute 3 and of the run, its mappings grouped
 *   by what they map (/proc/<pid>/smaps), and the groups that grew between the two.
 * --cycles N: N start/stop cycles, each serving 200 transfers before SIGTERM.
 * --gateway-env NAME=VALUE (repeatable): set for the gateway's process only, e.g.
 *   NODE_OPTIONS=--max-semi-space-size=16 or MALLOC_ARENA_MAX=2, to measure a bound on its memory.
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
import { grownMappings, mappingSummary, memoryParts, type MappingGroup, type MemoryParts } from './proc-memory';
import { rssMiB, startSlipway } from './processes';
import { newSigner, transferFactory } from './signed-transactions';

const { values } = parseArgs({
  options: {
    minutes: { type: 'string' },
    cycles: { type: 'string' },
    connections: { type: 'string' },
    'gateway-env': { type: 'string', multiple: true },
  },
});
const CONNECTIONS = Number(values.connections ?? 16);
/** Variables set for the gateway only (not the load generator), e.g. NODE_OPTIONS=--max-semi-space-size=16 or MALLOC_ARENA_MAX=2. */
const GATEWAY_ENV = Object.fromEntries(
  (values['gateway-env'] ?? []).map((pair) => {
    const at = pair.indexOf('=');
    if (at < 1) throw new Error(`--gateway-env takes NAME=VALUE, not ${pair}`);
    return [pair.slice(0, at), pair.slice(at + 1)];
  }),
);
const SINK = ['--upstream', 'sink'];
const PER_CYCLE = 200;

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;
const round = (value: number, digits = 1) => Number(value.toFixed(digits));
/** The median of each minute of samples taken every 10 s. */
const perMinuteMedians = <T>(samples: T[], pick: (sample: T) => number) =>
  Array.from({ length: Math.floor(samples.length / 6) }, (_, m) => median(samples.slice(m * 6, (m + 1) * 6).map(pick)));
const transfers = () => transferFactory(newSigner(), newSigner().publicKey, Buffer.alloc(32, 7));

async function soakAtLoad(dataDir: string, minutes: number, tally: LoadTally) {
  const server = await startSlipway(dataDir, SINK, GATEWAY_ENV);
  let ended: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  void server.exited.then((how) => (ended = how));
  const rss: number[] = [];
  // The JavaScript heap in use, what V8 has committed for it (all, and its young and old
  // generations), and memory held outside it (native, buffers), from the gateway's own
  // /metrics every 10 s (the main thread's isolate only: the verification workers' heaps are
  // not in it), and the resident set split into anonymous and file-backed pages at the same
  // moments: which kind a growing resident set comes from.
  const heap: { usedMiB: number; totalMiB: number; newSpaceTotalMiB: number; oldSpaceTotalMiB: number; externalMiB: number }[] = [];
  const parts: MemoryParts[] = [];
  const heapSampler = setInterval(() => {
    try {
      if (ended === undefined) parts.push(memoryParts(server.pid));
    } catch {
      // the gateway ended between the check and the read
    }
    void fetch(`${server.url}/metrics`)
      .then((answer) => answer.text())
      .then((text) => {
        const samples = parsePrometheusText(text);
        const value = (name: string, space?: string) =>
          (samples.find((sample) => sample.name === name && (space === undefined || sample.labels.space === space))?.value ?? 0) / 2 ** 20;
        heap.push({
          usedMiB: round(value('nodejs_heap_size_used_bytes')),
          totalMiB: round(value('nodejs_heap_size_total_bytes')),
          newSpaceTotalMiB: round(value('nodejs_heap_space_size_total_bytes', 'new')),
          oldSpaceTotalMiB: round(value('nodejs_heap_space_size_total_bytes', 'old')),
          externalMiB: round(value('nodejs_external_memory_bytes')),
        });
      })
      .catch(() => {});
  }, 10_000);
  // The mappings by what they map, once the duplicate window has filled and at the end.
  let mappingsAtMinute3: Record<string, MappingGroup> | undefined;
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
    if (rss.length === 180) mappingsAtMinute3 = mappingSummary(server.pid);
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
        `soak: minute ${rss.length / 60}: ${requests} requests, ${tally.failed} failed, resident set ${Math.round(rss.at(-1)!)} MiB (anonymous ${parts.at(-1)?.anonymousMiB}, file-backed ${parts.at(-1)?.fileBackedMiB}; heap used ${heap.at(-1)?.usedMiB} of ${heap.at(-1)?.totalMiB}), ` +
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
  const mappingsAtEnd = ended === undefined ? mappingSummary(server.pid) : undefined;
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
    heapUsedMedianPerMinuteMiB: perMinuteMedians(heap, (h) => h.usedMiB),
    // What V8 has committed for the heap (nodejs_heap_size_total_bytes), used or not.
    heapTotalMedianPerMinuteMiB: perMinuteMedians(heap, (h) => h.totalMiB),
    // Of it, the young generation's two semi-spaces and the old generation.
    newSpaceTotalMedianPerMinuteMiB: perMinuteMedians(heap, (h) => h.newSpaceTotalMiB),
    oldSpaceTotalMedianPerMinuteMiB: perMinuteMedians(heap, (h) => h.oldSpaceTotalMiB),
    externalMedianPerMinuteMiB: perMinuteMedians(heap, (h) => h.externalMiB),
    // The resident set by kind (smaps_rollup): anonymous (V8's heap, malloc, stacks) and file-backed.
    anonymousMedianPerMinuteMiB: perMinuteMedians(parts, (p) => p.anonymousMiB),
    fileBackedMedianPerMinuteMiB: perMinuteMedians(parts, (p) => p.fileBackedMiB),
    mappings: {
      atMinute3: mappingsAtMinute3 ?? null,
      atEnd: mappingsAtEnd ?? null,
      grownFromMinute3: mappingsAtMinute3 && mappingsAtEnd ? grownMappings(mappingsAtMinute3, mappingsAtEnd) : null,
    },
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
      server = await startSlipway(dataDir, SINK, GATEWAY_ENV);
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
    `soak: Node.js ${process.versions.node}, ${cycles === undefined ? `${minutes} minutes at full load, ${CONNECTIONS} connections` : `${cycles} start/stop cycles`}` +
      `${Object.keys(GATEWAY_ENV).length > 0 ? `, the gateway with ${JSON.stringify(GATEWAY_ENV)}` : ''}\n`,
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
      mode: {
        ...(cycles === undefined ? { minutes, connections: CONNECTIONS } : { cycles }),
        ...(Object.keys(GATEWAY_ENV).length > 0 ? { gatewayEnv: GATEWAY_ENV } : {}),
      },
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
