/**
 * `node dist/bench/one-send-files.js`: which files of src/ one sendTransaction runs, on the
 * shape `bin/slipway serve` starts (the embedded ledger, lean HTTP, the SQLite journal), as
 * V8 sees it rather than as a reader guesses: precise coverage is on from before Slipway is
 * loaded; after a few warm-up sends, each of five windows takes one transfer from the client's
 * write to its answer, and a file counts when a function of it ran in every window (what
 * timers do on their own, such as the slot clock or the tracker's rounds, is not in all five).
 * Verification on a worker thread is outside the main thread's coverage; the run keeps it
 * inline (`verifyThreads: 0`), as a request thread that is not busy does.
 */
import fs from 'node:fs';
import inspector from 'node:inspector/promises';
import os from 'node:os';
import path from 'node:path';
import { request } from 'node:http';
import type { RunningApp } from '../src/app';
import { newSigner, transferFactory } from './signed-transactions';

const SRC = path.resolve(__dirname, '../src');
const WINDOWS = 5;

interface ScriptCoverage {
  url: string;
  functions: { functionName: string; ranges: { startOffset: number; count: number }[] }[];
}

function post(url: string, key: string, body: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': key } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve(text));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** The src/ files (relative, as .ts) with a function that ran since the last take. */
async function filesRun(session: inspector.Session): Promise<Set<string>> {
  const { result } = (await session.post('Profiler.takePreciseCoverage')) as { result: ScriptCoverage[] };
  const files = new Set<string>();
  for (const script of result) {
    if (!script.url.startsWith(`file://${SRC}/`)) continue;
    // The range from offset 0 is the module itself, run once at load (and not listed again once taken).
    if (script.functions.some((fn) => fn.ranges[0]!.startOffset > 0 && fn.ranges[0]!.count > 0))
      files.add(path.relative(SRC, script.url.slice('file://'.length)).replace(/\.js$/, '.ts'));
  }
  return files;
}

async function main(): Promise<void> {
  const session = new inspector.Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.startPreciseCoverage', { callCount: true, detailed: true });
  // Loaded after coverage starts: V8 counts only what it compiled while coverage was on.
  const { startApp } = await import('../src/app');
  const { resolveConfig } = await import('../src/config/config');
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'slipway-one-send-'));
  let app: RunningApp | undefined;
  try {
    app = await startApp(resolveConfig({ port: 0, dataDir, logLevel: 'silent', verifyThreads: 0 }, {}));
    const key = app.initialKey!.key;
    const payer = newSigner();
    app.ledger!.airdrop(payer.publicKey, 10_000_000_000n);
    const blockhash = Buffer.from((await import('bs58')).default.decode(app.ledger!.latestBlockhash().blockhash));
    const next = transferFactory(payer, newSigner().publicKey, blockhash);
    const send = async () => {
      const answer = await post(
        app!.url,
        key,
        JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'sendTransaction', params: [next(), { encoding: 'base64' }] }),
      );
      if (!answer.includes('"result"')) throw new Error(`the transfer was not taken: ${answer}`);
    };
    for (let i = 0; i < 20; i += 1) await send();
    let inEvery: Set<string> | undefined;
    for (let i = 0; i < WINDOWS; i += 1) {
      await filesRun(session);
      await send();
      const run = await filesRun(session);
      inEvery = inEvery === undefined ? run : new Set([...inEvery].filter((file) => run.has(file)));
    }
    const files = [...inEvery!].sort();
    const folders = new Map<string, string[]>();
    for (const file of files) {
      const folder = file.includes('/') ? file.slice(0, file.lastIndexOf('/')) : '(root)';
      folders.set(folder, [...(folders.get(folder) ?? []), path.basename(file)]);
    }
    process.stdout.write(`One sendTransaction ran functions of ${files.length} files of src/, in ${folders.size} folders:\n`);
    for (const [folder, names] of folders) process.stdout.write(`  ${folder}/ (${names.length}): ${names.join(', ')}\n`);
  } finally {
    await app?.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
    session.disconnect();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`one-send-files failed: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exitCode = 1;
});
