/**
 * A webhook receiver for tests: a real HTTP server on loopback that verifies each delivery
 * with the npm package `standardwebhooks`, as a receiver would: one it cannot verify is
 * answered 401 and counted (`unverified`), one it can is kept. `failing` makes it answer 503
 * (a receiver that is down but reachable).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

export interface Received {
  readonly id: string;
  readonly type: string;
  readonly data: Record<string, unknown>;
  readonly body: string;
  /** Whether `standardwebhooks` verified its signature with the key's secret. */
  readonly verified: boolean;
}

export interface WebhookReceiver {
  readonly url: string;
  readonly received: Received[];
  /** Deliveries answered 503 while failing. */
  refused: number;
  /** Deliveries answered 401: their signature did not verify with `secret`. */
  unverified: number;
  failing: boolean;
  secret: string;
  /** Waits until `done(received)` holds. */
  until(done: (received: readonly Received[]) => boolean, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const receiver: WebhookReceiver = {
    url: '',
    received: [],
    refused: 0,
    unverified: 0,
    failing: false,
    secret: '',
    async until(done, timeoutMs = 15_000) {
      const started = Date.now();
      while (!done(receiver.received)) {
        if (Date.now() - started > timeoutMs)
          throw new Error(`webhook receiver: not done after ${timeoutMs} ms; got ${receiver.received.map((r) => r.type).join(', ')}`);
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      if (receiver.failing) {
        receiver.refused += 1;
        response.writeHead(503).end('down for maintenance');
        return;
      }
      const body = Buffer.concat(chunks).toString('utf8');
      let verified = true;
      try {
        new Webhook(receiver.secret).verify(body, request.headers as Record<string, string>);
      } catch {
        verified = false;
      }
      if (!verified) {
        receiver.unverified += 1;
        response.writeHead(401).end('the signature does not verify');
        return;
      }
      const parsed = JSON.parse(body) as { id: string; type: string; data: Record<string, unknown> };
      receiver.received.push({ id: String(request.headers['webhook-id']), type: parsed.type, data: parsed.data, body, verified });
      response.writeHead(204).end();
    });
  });
  server.keepAliveTimeout = 100;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  (receiver as { url: string }).url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/slipway`;
  return receiver;
}
