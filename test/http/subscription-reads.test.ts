/**
 * Subscriptions count against the key's reads per second, as HTTP reads do: a subscribe is
 * one read (refused past the rate with -32097), and the status requests polled for a key's
 * signatures count one per 256. Without this, a key limited to a few reads per second could
 * open thousands of subscriptions and have the gateway ask the operator's upstream for them
 * many times a second. A key past its rate is polled less often, in turn: none starves.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, it } from 'node:test';
import bs58 from 'bs58';
import WebSocket from 'ws';
import type { Authenticator } from '../../src/auth/authenticator';
import { Admission } from '../../src/http/admission';
import { SubscriptionServer } from '../../src/http/subscriptions';
import { createKeyLimits } from '../../src/limits/key-limits';
import { createMemoryRateLimiter } from '../../src/limits/rate-limiter-memory';
import type { Router } from '../../src/pipeline/router';
import type { ApiKeyRecord } from '../../src/stores/key-store';
import type { SignatureStatusView } from '../../src/upstreams/upstream';

const randomSignature = () => bs58.encode(Buffer.from(Array.from({ length: 64 }, () => Math.floor(Math.random() * 256))));
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The key, changed by the tests as `bin/slipway keys set` changes a running gateway's. */
const key = {
  id: 'key_k',
  name: 'k',
  bundle: false,
  tps: null,
  bundlesPerSecond: null,
  readsPerSecond: null as number | null,
  createdAt: '',
  revokedAt: null,
};
/** Every getSignatureStatuses the gateway asked its upstream: the signatures in it. */
const asked: string[][] = [];
let subscriptions: SubscriptionServer;
let admission: Admission;
let server: http.Server;
let port: number;

before(async () => {
  const router = {
    getSlot: async () => 100,
    reads: {
      async getSignatureStatuses(signatures: string[]): Promise<(SignatureStatusView | null)[]> {
        asked.push(signatures);
        return signatures.map(() => null); // never lands: the subscriptions stay open
      },
    },
  } as unknown as Router;
  const authenticator: Authenticator = {
    authenticate: (presented) => (presented === 'k' ? (key as unknown as ApiKeyRecord) : null),
    unavailable: () => null,
    webhooks: () => new Map(),
    close: () => {},
  };
  admission = new Admission({ maxConnectionsPerClient: 0, maxInFlight: 0, maxInFlightPerKey: 0, maxEventLoopDelayMs: 0 });
  subscriptions = new SubscriptionServer({
    authenticator,
    router,
    admission,
    keyLimits: createKeyLimits(createMemoryRateLimiter()),
    pollIntervalMs: 50,
    limits: { perConnection: 10_000, perKey: 10_000, total: 100_000, idleMs: 60_000, pingMs: 60_000 },
    headersTimeoutMs: 10_000,
    requestTimeoutMs: 30_000,
    logError: () => {},
  });
  server = http.createServer();
  subscriptions.attach(server, (_request, socket) => socket.destroy());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as { port: number }).port;
});
after(async () => {
  await subscriptions.close();
  admission.close();
  server.close();
});

async function open(): Promise<{ socket: WebSocket; answers: Map<number, any> }> {
  const socket = new WebSocket(`ws://127.0.0.1:${port}/?api-key=k`);
  await new Promise((resolve) => socket.once('open', resolve));
  const answers = new Map<number, any>();
  socket.on('message', (data) => {
    const message = JSON.parse(data.toString());
    if (typeof message.id === 'number') answers.set(message.id, message);
  });
  return { socket, answers };
}

const subscribe = (socket: WebSocket, id: number, signature = randomSignature()) =>
  socket.send(JSON.stringify({ jsonrpc: '2.0', id, method: 'signatureSubscribe', params: [signature, { commitment: 'confirmed' }] }));

describe("subscriptions and the key's reads per second", () => {
  it('a subscribe past the rate is refused with -32097 naming it, and fits again a second later', async () => {
    key.readsPerSecond = 5;
    const { socket, answers } = await open();
    try {
      await pause(1_100); // a full bucket
      for (let id = 0; id < 20; id++) subscribe(socket, id);
      while (answers.size < 20) await pause(10);
      const accepted = [...answers.values()].filter((m) => typeof m.result === 'number');
      const refused = [...answers.values()].filter((m) => m.error !== undefined);
      assert.ok(accepted.length >= 1 && accepted.length <= 6, `${accepted.length} accepted at 5 reads per second`);
      assert.equal(accepted.length + refused.length, 20);
      assert.equal(refused[0].error.code, -32097);
      assert.match(
        refused[0].error.message,
        /^Rate limit exceeded: API key key_k may send 5 reads per second; nothing was read; this request fits again in \d\.\d{3} s$/,
      );
      await pause(1_100);
      subscribe(socket, 100);
      while (!answers.has(100)) await pause(10);
      assert.equal(typeof answers.get(100).result, 'number');
    } finally {
      socket.close();
      await pause(50);
    }
  });

  it("a key's signatures are polled within its reads per second, every one in turn", async () => {
    key.readsPerSecond = null;
    const { socket, answers } = await open();
    try {
      const signatures = Array.from({ length: 1_000 }, () => randomSignature()); // four batches of 256
      signatures.forEach((signature, id) => subscribe(socket, id, signature));
      while (answers.size < 1_000) await pause(10);
      await pause(200);
      asked.length = 0;
      await pause(1_000);
      const unlimited = asked.length;
      assert.ok(unlimited >= 20, `${unlimited} status requests in a second without a rate (a round every 50 ms, 4 requests each)`);

      key.readsPerSecond = 2;
      await pause(1_100); // what the earlier rounds took from the bucket is given back
      asked.length = 0;
      await pause(3_000);
      const limited = asked.length;
      assert.ok(limited <= 2 * 3 + 2 + 1, `${limited} status requests in 3 s at 2 reads per second`);
      assert.ok(limited >= 3, `${limited}: still polled`);
      const polled = new Set(asked.flat());
      const batches = [0, 1, 2, 3].filter((b) => signatures.slice(b * 256, (b + 1) * 256).some((s) => polled.has(s)));
      assert.ok(batches.length >= Math.min(4, limited), `batches polled: ${batches.join(', ')} of 0–3 in ${limited} requests`);
    } finally {
      socket.close();
    }
  });
});
