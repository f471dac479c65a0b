/**
 * `npm run bench:websocket [-- --connections N]`: what WebSocket subscribers cost a real
 * gateway (`bin/slipway serve`, a process of its own, default limits), and how fast a
 * revocation reaches them.
 *
 * 1. N connections of one key, each with `maxSubscriptionsPerConnection` (1,000) signature
 *    subscriptions (as far as `maxSubscriptionsPerKey`, 10,000, allows): the gateway's RSS
 *    before and after, per connection and per subscription.
 * 2. The key revoked with `bin/slipway keys revoke`: the time from the command's exit until
 *    every one of those sockets has been closed by the gateway.
 */
import fs from 'node:fs';
import { parseArgs } from 'node:util';
import bs58 from 'bs58';
import WebSocket from 'ws';
import { makeDataDir } from '../test/helpers/gateway';
import { runCli, startServer } from '../test/helpers/process';

const PER_CONNECTION = 1_000;
const PER_KEY = 10_000;

const rssMiB = (pid: number) => Number(/VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function open(url: string): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url);
    socket.once('open', () => resolve(socket));
    socket.once('error', reject);
  });
}

/** Subscribes `count` random signatures on `socket`, waiting for every answer. */
function subscribeMany(socket: WebSocket, count: number): Promise<number> {
  return new Promise((resolve) => {
    let answered = 0;
    let accepted = 0;
    socket.on('message', (data) => {
      const message = JSON.parse(data.toString()) as { id?: number; result?: unknown };
      if (message.id === undefined) return;
      answered++;
      if (typeof message.result === 'number') accepted++;
      if (answered === count) resolve(accepted);
    });
    for (let i = 0; i < count; i++) {
      const signature = bs58.encode(Buffer.from(Array.from({ length: 64 }, () => Math.floor(Math.random() * 256))));
      socket.send(
        JSON.stringify({ jsonrpc: '2.0', id: i, method: 'signatureSubscribe', params: [signature, { commitment: 'confirmed' }] }),
      );
    }
  });
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { connections: { type: 'string', default: '10' } } });
  const connections = Number(values.connections);
  const dir = makeDataDir();
  const server = await startServer(dir, { SLIPWAY_LOG_LEVEL: 'warn', SLIPWAY_MAX_CONNECTIONS_PER_CLIENT: '0' });
  try {
    const created = JSON.parse((await runCli(['keys', 'create', '--name', 'subscriber', '--json', '--data-dir', dir])).stdout) as {
      id: string;
      key: string;
    };
    await pause(1_200);
    const pid = server.child.pid!;
    const url = `${server.url.replace('http', 'ws')}/?api-key=${created.key}`;
    await pause(2_000);
    const before = rssMiB(pid);
    const sockets = await Promise.all(Array.from({ length: connections }, () => open(url)));
    let subscriptions = 0;
    for (const socket of sockets) subscriptions += await subscribeMany(socket, Math.min(PER_CONNECTION, PER_KEY - subscriptions));
    await pause(3_000);
    const after = rssMiB(pid);
    const grown = after - before;
    process.stdout.write(
      `websocket: ${connections} connections, ${subscriptions} signature subscriptions; gateway RSS ${before.toFixed(0)} → ${after.toFixed(0)} MiB: ` +
        `${((grown * 1024) / connections).toFixed(0)} KiB per connection at ${PER_CONNECTION} subscriptions, ${((grown * 1024 * 1024) / Math.max(subscriptions, 1)).toFixed(0)} bytes per subscription\n`,
    );
    const closed = Promise.all(sockets.map((socket) => new Promise<number>((resolve) => socket.once('close', () => resolve(Date.now())))));
    const revoked = await runCli(['keys', 'revoke', created.id, '--data-dir', dir]);
    if (revoked.code !== 0) throw new Error(revoked.stderr);
    const revokedAt = Date.now();
    const closes = await closed;
    const last = Math.max(...closes) - revokedAt;
    const first = Math.min(...closes) - revokedAt;
    process.stdout.write(
      `revocation: ${connections} sockets closed ${first}–${last} ms after \`keys revoke\` exited; the gateway is ${server.child.exitCode === null ? 'still running' : 'gone'}\n`,
    );
  } finally {
    server.child.kill('SIGTERM');
    await server.exited;
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`bench:websocket: ${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(1);
  },
);
