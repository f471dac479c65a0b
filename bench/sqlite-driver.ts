/**
 * `npm run bench:sqlite`: what the SQLite driver of this Node.js costs Slipway (better-sqlite3
 * 13 on Node 22 and later, 12 on Node 20; src/stores/database/sqlite-binding.ts), on the journal's own
 * code: opening the journal (start-up), applying submissions to SQLite (the applier thread's
 * throughput), and a status look-up by signature. One line of figures; run it under each Node
 * in the same hour to compare (docs/RELIABILITY.md, "Node.js 24").
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import bs58 from 'bs58';
import { createSqliteJournal } from '../src/stores/journal';
import { sqliteDriverPackage } from '../src/stores/database/sqlite-binding';

const SUBMISSIONS = 100_000;
const LOOKUPS = 5_000;
const ROUNDS = 3;

interface Round {
  readonly openMs: number;
  readonly appliedPerS: number;
  readonly lookupUs: number;
}

async function round(dir: string): Promise<Round> {
  const file = path.join(dir, `journal-${crypto.randomUUID()}.sqlite`);
  let started = performance.now();
  const journal = createSqliteJournal(file);
  await journal.lastSeq();
  const openMs = performance.now() - started;
  const signatures: string[] = [];
  const pending: Promise<number>[] = [];
  started = performance.now();
  for (let i = 0; i < SUBMISSIONS; i++) {
    const wire = Buffer.concat([Buffer.from([1]), crypto.randomBytes(64), crypto.randomBytes(150)]);
    const signature = bs58.encode(wire.subarray(1, 65));
    if (i % (SUBMISSIONS / LOOKUPS) === 0) signatures.push(signature);
    pending.push(
      journal.record({
        kind: 'transaction',
        keyId: 'bench',
        antiMev: false,
        bundleId: null,
        routes: ['sink'],
        transactions: [{ signature, wire, state: 'forwarded' }],
      }),
    );
    if (pending.length === 256) await Promise.all(pending.splice(0));
  }
  await Promise.all(pending);
  await journal.lastSeq(); // waits until the applier has put every submission into SQLite
  const appliedPerS = SUBMISSIONS / ((performance.now() - started) / 1000);
  started = performance.now();
  for (const signature of signatures) if ((await journal.find(signature)).length !== 1) throw new Error(`${signature} not found`);
  const lookupUs = ((performance.now() - started) * 1000) / signatures.length;
  await journal.close();
  return { openMs, appliedPerS, lookupUs };
}

async function main(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'slipway-sqlite-'));
  try {
    const rounds: Round[] = [];
    for (let i = 0; i < ROUNDS; i++) rounds.push(await round(dir));
    const median = (pick: (r: Round) => number) => rounds.map(pick).sort((a, b) => a - b)[Math.floor(ROUNDS / 2)]!;
    process.stdout.write(
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- the driver's own version, found at run time
      `Node.js ${process.versions.node} (${sqliteDriverPackage} ${require(`${sqliteDriverPackage}/package.json`).version}), median of ${ROUNDS}: ` +
        `journal open ${median((r) => r.openMs).toFixed(1)} ms, ` +
        `${Math.round(median((r) => r.appliedPerS)).toLocaleString('en')} submissions/s journaled and applied to SQLite, ` +
        `look-up by signature ${median((r) => r.lookupUs).toFixed(1)} µs\n`,
    );
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

void main();
