/**
 * The gateway and its SQLite driver on the Node.js that runs the suite (npm test runs on 20,
 * 22, 24 and 26 in CI): start/stop cycles, and a write-heavy run at full load, each ending
 * in a clean exit with every acknowledged submission in the journal.
 *
 * On Node 24 with better-sqlite3 12 both aborted the process (SIGABRT in
 * RemoveEnvironmentCleanupHook, when the garbage collector freed a statement); the load run
 * within seconds. docs/RELIABILITY.md, "Node.js 24".
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { lostAcknowledgements, newTally, sendAcknowledged } from '../../bench/acknowledged-load';
import { newSigner, transferFactory } from '../../bench/signed-transactions';
import { makeDataDir } from '../helpers/gateway';
import { startServer, type ServerProcess } from '../helpers/process';

const SINK = ['--upstream', 'sink', '--log-level', 'warn'];
const CYCLES = 8;
const LOAD_MS = 8_000;
const CONNECTIONS = 16;

const transfers = () => transferFactory(newSigner(), newSigner().publicKey, Buffer.alloc(32, 7));

async function stop(server: ServerProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    server.child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  server.child.kill('SIGTERM');
  return exit;
}

test(
  `${CYCLES} start/stop cycles with writes: each start serves, each stop exits 0, nothing acknowledged is lost`,
  { timeout: 120_000 },
  async () => {
    const dir = makeDataDir();
    const next = transfers();
    const tally = newTally();
    let key: string | undefined; // printed on the first start only
    try {
      for (let cycle = 0; cycle < CYCLES; cycle++) {
        const server = await startServer(dir, {}, SINK);
        key ??= server.initialKey!;
        let sent = 0;
        await sendAcknowledged({ url: server.url, key, connections: 4, nextTransaction: next, done: () => sent++ >= 200 }, tally);
        const exit = await stop(server);
        assert.deepEqual(exit, { code: 0, signal: null }, `cycle ${cycle + 1}: ${server.stderr.join('').slice(-2000)}`);
      }
      assert.equal(tally.failed, 0, JSON.stringify([...tally.reasons]));
      assert.equal(await lostAcknowledgements(path.join(dir, 'journal.sqlite'), tally), 0);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  },
);

test(
  'a write-heavy run at full load: no abort, every answer a success, a clean exit, nothing acknowledged lost',
  { timeout: 120_000 },
  async () => {
    const dir = makeDataDir();
    const server = await startServer(dir, {}, SINK);
    let exitedEarly: number | null | undefined;
    void server.exited.then((code) => (exitedEarly = code));
    try {
      const tally = newTally();
      const until = Date.now() + LOAD_MS;
      await sendAcknowledged(
        {
          url: server.url,
          key: server.initialKey!,
          connections: CONNECTIONS,
          nextTransaction: transfers(),
          done: () => Date.now() > until || exitedEarly !== undefined,
        },
        tally,
      );
      assert.equal(
        exitedEarly,
        undefined,
        `the gateway exited under load after ${tally.requests} requests: ${server.stderr.join('').slice(-2000)}`,
      );
      assert.equal(tally.failed, 0, JSON.stringify([...tally.reasons]));
      assert.ok(tally.count > 1_000, `only ${tally.count} acknowledged in ${LOAD_MS} ms`);
      assert.deepEqual(await stop(server), { code: 0, signal: null }, server.stderr.join('').slice(-2000));
      assert.equal(await lostAcknowledgements(path.join(dir, 'journal.sqlite'), tally), 0);
    } finally {
      server.child.kill('SIGKILL');
      fs.rmSync(dir, { recursive: true, force: true });
    }
  },
);
