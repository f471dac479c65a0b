/**
 * One key's receiver that hangs must not hold up the others' webhooks: the delivery loop
 * sends at most 64 events at once, and a key whose many submissions each wait on a receiver
 * that never answers (until the time-out) should not take every one of those places while a
 * healthy receiver's events wait behind it.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { WebhookDelivery } from '../../src/events/webhook-delivery';
import type { WebhookSender, WebhookTarget } from '../../src/events/webhook-sender';
import { createSqliteEventOutbox } from '../../src/stores/event-outbox-sqlite';
import type { EventOutbox } from '../../src/stores/event-outbox';

const TIMEOUT_MS = 500;
/** Submissions of the key whose receiver hangs, each with an event waiting. */
const STUCK_SUBMISSIONS = 2_000;

describe('webhook delivery between keys', () => {
  let dir: string;
  let outbox: EventOutbox;
  let delivery: WebhookDelivery;
  let healthyDeliveredAt: number | null = null;

  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'slipway-fairness-'));
    outbox = createSqliteEventOutbox(path.join(dir, 'events.sqlite'));
  });
  after(async () => {
    await delivery?.stop();
    // stop() does not wait for the deliveries under way: let them write their outcomes first.
    await new Promise((resolve) => setTimeout(resolve, TIMEOUT_MS + 200));
    await outbox?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('delivers a healthy receiver’s event promptly while another key’s receiver hangs', async () => {
    const now = Date.now();
    await outbox.add(
      Array.from({ length: STUCK_SUBMISSIONS }, (_, i) => ({
        id: `evt_hang_${i}`,
        keyId: 'key_hangs',
        seq: i + 1,
        type: 'transaction.forwarded',
        payload: '{}',
        deliver: true,
      })),
      now,
    );
    const hooks = new Map<string, WebhookTarget>([
      ['key_hangs', { url: 'https://hangs.example/hook', secret: 'whsec_a' }],
      ['key_healthy', { url: 'https://healthy.example/hook', secret: 'whsec_b' }],
    ]);
    const sender: WebhookSender = {
      async send(target) {
        if (target.url.includes('hangs')) {
          await new Promise((resolve) => setTimeout(resolve, TIMEOUT_MS));
          return { error: `no answer within ${TIMEOUT_MS} ms` };
        }
        healthyDeliveredAt ??= Date.now();
        return { error: null };
      },
      async close() {},
    };
    delivery = new WebhookDelivery({
      outbox,
      sender,
      webhooks: () => hooks,
      pauseAfterMs: 24 * 3600_000,
      timeoutMs: TIMEOUT_MS,
      retentionMs: 3600_000,
      onError: (error) => assert.fail(String(error)),
    });
    delivery.start();
    // The hanging receiver's events are under way when the healthy key's event comes.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const addedAt = Date.now();
    await outbox.add(
      [{ id: 'evt_healthy', keyId: 'key_healthy', seq: STUCK_SUBMISSIONS + 1, type: 'transaction.landed', payload: '{}', deliver: true }],
      addedAt,
    );
    delivery.wake();
    const deadline = addedAt + 5 * TIMEOUT_MS;
    while (healthyDeliveredAt === null && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    assert.ok(
      healthyDeliveredAt !== null,
      `the healthy receiver's event waited more than ${5 * TIMEOUT_MS} ms behind a hanging receiver's ${STUCK_SUBMISSIONS} submissions`,
    );
  });
});
