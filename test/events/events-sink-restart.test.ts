/**
 * The events sink across a restart, on a real SQLite outbox: an event dropped for a full
 * queue, then derived again by the reconcile at start-up, must not reach the receiver after
 * the same submission's later event (events go out in order per submission).
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { EventsSink } from '../../src/events/events-sink';
import { createSqliteEventOutbox } from '../../src/stores/event-outbox-sqlite';
import type { EventOutbox } from '../../src/stores/event-outbox';
import type { JournalEntry, NewSubmission } from '../../src/stores/journal';

const KEY = 'key_full';
const submission = (signature: string): NewSubmission => ({
  kind: 'transaction',
  keyId: KEY,
  antiMev: false,
  bundleId: null,
  routes: ['rpc'],
  transactions: [{ signature, wire: Buffer.alloc(0), state: 'forwarded' }],
});

describe('events sink: a dropped event derived again at restart', () => {
  let dir: string;
  let outbox: EventOutbox;

  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'slipway-sink-'));
    outbox = createSqliteEventOutbox(path.join(dir, 'events.sqlite'));
  });
  after(async () => {
    await outbox?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const sinkOn = () =>
    new EventsSink(outbox, { wants: () => true, delivers: () => true, queueLimit: 1, onError: (error) => assert.fail(String(error)) });

  it('is not delivered after the landing it came before', async () => {
    const now = Date.now();
    let sink = sinkOn();
    sink.recorded(1, submission('sigA'), now);
    await sink.flush();
    // The queue (of one) is full: the second submission's forwarded is dropped.
    sink.recorded(2, submission('sigB'), now);
    await sink.flush();
    // The first is delivered; the queue has room again when the second lands.
    const [first] = await outbox.claim([KEY], Date.now(), 10, 'gw', 10_000);
    await outbox.delivered(first!.ord, Date.now());
    sink.counted(await outbox.pending());
    sink.changed([{ seq: 2, position: 0, state: 'landed', slot: 10, landedAt: now + 500, slotsToLand: 2 }], now + 500);
    await sink.flush();
    const landed = await outbox.claim([KEY], Date.now(), 10, 'gw', 10_000);
    assert.deepEqual(
      landed.map((e) => e.type),
      ['transaction.landed'],
    );
    await outbox.delivered(landed[0]!.ord, Date.now());

    // A restart: the journal's view of the second submission is reconciled.
    sink = sinkOn();
    sink.counted(await outbox.pending());
    const entry: JournalEntry = {
      seq: 2,
      kind: 'transaction',
      keyId: KEY,
      antiMev: false,
      bundleId: null,
      routes: ['rpc'],
      createdAt: now,
      updatedAt: now + 500,
      transactions: [
        {
          position: 0,
          signature: 'sigB',
          wire: Buffer.alloc(0),
          state: 'landed',
          slot: 10,
          reason: null,
          reasonCode: null,
          error: null,
          attempts: 0,
          landedAt: now + 500,
          slotsToLand: 2,
          sends: [],
        },
      ],
    };
    sink.reconcile([entry], Date.now());
    await sink.flush();

    const delivered: string[] = [];
    for (let round = 0; round < 3; round++) {
      for (const event of await outbox.claim([KEY], Date.now(), 10, 'gw', 10_000)) {
        delivered.push(event.type);
        await outbox.delivered(event.ord, Date.now());
      }
    }
    // The landing was delivered before the restart's round; the forwarded that came before it must not follow it.
    assert.deepEqual(delivered, [], `delivered after the landing, in this order: ${delivered.join(', ')}`);
  });
});
