/**
 * The webhook sender against hostile receivers on real sockets: one that answers an error
 * with a body that never ends must not make the gateway read (and hold) it until the
 * time-out; the reason shown to the operator is the start of the body, read promptly.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { createWebhookSender, type WebhookSender } from '../../src/events/webhook-sender';

const TIMEOUT_MS = 3_000;
/** What the hostile receiver pours into an error answer before it stops writing (and never ends it). */
const POURED_BYTES = 8 * 1024 * 1024;

describe('webhook sender against hostile receivers', () => {
  let server: http.Server;
  let url: string;
  let sender: WebhookSender;
  let closedAfterBytes: number | null = null;

  before(async () => {
    server = http.createServer((request, response) => {
      request.resume();
      response.writeHead(500, { 'content-type': 'text/plain' });
      response.write('receiver broke: ');
      const chunk = Buffer.alloc(64 * 1024, 'x');
      let written = 0;
      const pour = (): void => {
        while (written < POURED_BYTES) {
          written += chunk.length;
          if (!response.write(chunk)) return void response.once('drain', pour);
        }
        // Then nothing more, and no end: the body stays open.
      };
      response.socket!.once('close', () => (closedAfterBytes = written));
      pour();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
    sender = createWebhookSender({ allowPrivate: true, timeoutMs: TIMEOUT_MS });
  });
  after(async () => {
    await sender?.close();
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
  });

  it('reads no more of an error answer than the reason it keeps, and does not wait for its end', async () => {
    const started = Date.now();
    const { error } = await sender.send({ url, secret: `whsec_${Buffer.alloc(32, 1).toString('base64')}` }, 'evt_0', '{}', new Date());
    const took = Date.now() - started;
    assert.match(error ?? '', /^the receiver answered 500: receiver broke: x+$/);
    assert.ok(took < TIMEOUT_MS / 2, `the failure took ${took} ms: the sender read the error body until the ${TIMEOUT_MS} ms time-out`);
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.ok(
      closedAfterBytes !== null && closedAfterBytes < POURED_BYTES,
      `the receiver wrote ${closedAfterBytes} bytes before its connection closed`,
    );
  });
});
