/**
 * Signature subscriptions are polled in batches; a batch the upstream refuses (as a Solana
 * node refuses a whole getSignatureStatuses for one entry it cannot parse) is asked again in
 * halves, so that every other subscriber in it is still notified.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import { test } from 'node:test';
import bs58 from 'bs58';
import WebSocket from 'ws';
import type { Authenticator } from '../../src/auth/authenticator';
import { Admission } from '../../src/http/admission';
import { SubscriptionServer } from '../../src/http/subscriptions';
import type { Router } from '../../src/pipeline/router';
import type { SignatureStatusView } from '../../src/upstreams/upstream';

const randomSignature = () =>
  bs58.encode(Buffer.from(Array.from({ length: 64 }, (_, i) => (i * 7 + Math.floor(Math.random() * 256)) % 256)));

test('one signature the upstream refuses does not hold up the notifications of the others in its batch', async () => {
  const poison = randomSignature();
  const asked: number[] = [];
  const router = {
    getSlot: async () => 100,
    reads: {
      async getSignatureStatuses(signatures: string[]): Promise<(SignatureStatusView | null)[]> {
        asked.push(signatures.length);
        if (signatures.includes(poison)) throw new Error('Invalid param: WrongSize');
        return signatures.map(() => ({ slot: 99, confirmations: 1, err: null, confirmationStatus: 'confirmed' }) as SignatureStatusView);
      },
    },
  } as unknown as Router;
  const authenticator: Authenticator = {
    authenticate: (key) => (key === 'k' ? ({ id: 'key_k' } as never) : null),
    unavailable: () => null,
    webhooks: () => new Map(),
    close: () => {},
  };
  const admission = new Admission({ maxConnectionsPerClient: 0, maxInFlight: 0, maxInFlightPerKey: 0, maxEventLoopDelayMs: 0 });
  const subscriptions = new SubscriptionServer({
    authenticator,
    router,
    admission,
    keyLimits: { reads: async () => ({ ok: true, value: undefined }) },
    pollIntervalMs: 50,
    limits: { perConnection: 1_000, perKey: 10_000, total: 100_000, idleMs: 60_000, pingMs: 60_000 },
    headersTimeoutMs: 10_000,
    requestTimeoutMs: 30_000,
    logError: () => {},
  });
  const server = http.createServer();
  subscriptions.attach(server, (_request, socket) => socket.destroy());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  const socket = new WebSocket(`ws://127.0.0.1:${port}/?api-key=k`);
  await new Promise((resolve) => socket.once('open', resolve));
  try {
    const notified = new Set<number>();
    const ids: number[] = [];
    socket.on('message', (data) => {
      const message = JSON.parse(data.toString());
      if (message.method === 'signatureNotification') notified.add(message.params.subscription);
      else if (typeof message.result === 'number') ids.push(message.result);
    });
    const signatures = Array.from({ length: 300 }, (_, i) => (i === 17 ? poison : randomSignature()));
    for (const [i, signature] of signatures.entries())
      socket.send(
        JSON.stringify({ jsonrpc: '2.0', id: i, method: 'signatureSubscribe', params: [signature, { commitment: 'confirmed' }] }),
      );
    const deadline = Date.now() + 5_000;
    while (notified.size < 299 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(ids.length, 300);
    assert.equal(notified.size, 299, `${notified.size} of 299 notified; batch sizes asked: ${asked.slice(0, 30).join(',')}`);
    assert.equal(notified.has(ids[17]!), false);
  } finally {
    socket.close();
    await subscriptions.close();
    await admission.close();
    server.close();
  }
});
