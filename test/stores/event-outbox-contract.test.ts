/**
 * The event outbox's contract, on SQLite and on PostgreSQL alike: an event derived twice is
 * kept once; delivery takes, of each submission, only its earliest undelivered event; a
 * claim is a lease no other gateway shares until it runs out; a failure makes the event due
 * later; receivers are paused, resumed and counted; delivered events are pruned.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import type { EventOutbox, NewOutboxEvent } from '../../src/stores/event-outbox';
import { createPostgresEventOutbox } from '../../src/stores/event-outbox-postgres';
import { createSqliteEventOutbox } from '../../src/stores/event-outbox-sqlite';
import { POSTGRES_URL, testSchema } from '../helpers/postgres';

const event = (id: string, seq: number, keyId = 'key_a'): NewOutboxEvent => ({
  id,
  keyId,
  seq,
  type: 'transaction.forwarded',
  payload: JSON.stringify({ id }),
  deliver: true,
});

const ids = (events: readonly { id: string }[]) => events.map((e) => e.id);

const adapters: [string, () => Promise<{ outbox: EventOutbox; other: () => Promise<EventOutbox>; done(): Promise<void> }>][] = [
  [
    'SQLite',
    async () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'slipway-outbox-'));
      const file = path.join(dir, 'events.sqlite');
      const opened: EventOutbox[] = [];
      const open = async () => {
        const outbox = createSqliteEventOutbox(file);
        opened.push(outbox);
        return outbox;
      };
      return {
        outbox: await open(),
        other: open,
        async done() {
          for (const outbox of opened) await outbox.close();
          fs.rmSync(dir, { recursive: true, force: true });
        },
      };
    },
  ],
  [
    'PostgreSQL',
    async () => {
      const schema = testSchema();
      const opened: EventOutbox[] = [];
      const open = async () => {
        const outbox = await createPostgresEventOutbox(POSTGRES_URL, schema.schema);
        opened.push(outbox);
        return outbox;
      };
      return {
        outbox: await open(),
        other: open,
        async done() {
          for (const outbox of opened) await outbox.close();
          await schema.drop();
        },
      };
    },
  ],
];

for (const [name, make] of adapters) {
  describe(`the event outbox on ${name}`, () => {
    const cleanups: (() => Promise<void>)[] = [];
    after(async () => {
      for (const cleanup of cleanups) await cleanup();
    });
    const fresh = async () => {
      const made = await make();
      cleanups.push(() => made.done());
      return made;
    };

    it('keeps an event derived twice once, and counts what waits per key', async () => {
      const { outbox } = await fresh();
      assert.equal(await outbox.add([event('e1', 1), event('e2', 1)], 1_000), 2);
      assert.equal(await outbox.add([event('e1', 1), event('e3', 2, 'key_b')], 1_000), 1);
      assert.deepEqual([...(await outbox.pending())].sort(), [
        ['key_a', 2],
        ['key_b', 1],
      ]);
    });

    it("hands out only each submission's earliest undelivered event, in the order added", async () => {
      const { outbox } = await fresh();
      await outbox.add([event('a1', 1), event('b1', 2), event('a2', 1), event('b2', 2), event('c1', 3, 'key_other')], 1_000);
      const first = await outbox.claim(['key_a'], 1_000, 10, 'gw1', 5_000);
      assert.deepEqual(ids(first), ['a1', 'b1']);
      // Claimed: not handed out again, and what follows them waits.
      assert.deepEqual(ids(await outbox.claim(['key_a'], 1_000, 10, 'gw1', 5_000)), []);
      await outbox.delivered(first[0]!.ord, 1_001);
      assert.deepEqual(ids(await outbox.claim(['key_a'], 1_001, 10, 'gw1', 5_000)), ['a2']);
      assert.deepEqual(ids(await outbox.claim(['key_other'], 1_001, 10, 'gw1', 5_000)), ['c1']);
    });

    it('a claim is a lease: another gateway gets the event only once it has run out', async () => {
      const { outbox, other } = await fresh();
      const second = await other();
      await outbox.add([event('x1', 1), event('y1', 2)], 1_000);
      const [mine, theirs] = await Promise.all([
        outbox.claim(['key_a'], 1_000, 10, 'gw1', 5_000),
        second.claim(['key_a'], 1_000, 10, 'gw2', 5_000),
      ]);
      assert.deepEqual([...ids(mine), ...ids(theirs)].sort(), ['x1', 'y1'], 'each event to one gateway');
      assert.deepEqual(ids(await second.claim(['key_a'], 5_999, 10, 'gw2', 5_000)), []);
      assert.deepEqual(ids(await second.claim(['key_a'], 6_000, 10, 'gw2', 5_000)).sort(), ['x1', 'y1']);
    });

    it('a failed delivery is due again from the time given, with its attempts counted', async () => {
      const { outbox } = await fresh();
      await outbox.add([event('f1', 1)], 1_000);
      const [claimed] = await outbox.claim(['key_a'], 1_000, 10, 'gw1', 5_000);
      await outbox.failed(claimed!.ord, 3_000);
      assert.deepEqual(ids(await outbox.claim(['key_a'], 2_999, 10, 'gw1', 5_000)), []);
      const [again] = await outbox.claim(['key_a'], 3_000, 10, 'gw1', 5_000);
      assert.equal(again!.attempts, 1);
    });

    it("a submission's later events wait while its first backs off, and are due the moment it is delivered", async () => {
      const { outbox } = await fresh();
      await outbox.add([event('s1', 1), event('s2', 1)], 1_000);
      const [first] = await outbox.claim(['key_a'], 1_000, 10, 'gw1', 5_000);
      await outbox.failed(first!.ord, 60_000);
      // Added while the first backs off: it waits with the others.
      await outbox.add([event('s3', 1), event('t1', 2)], 2_000);
      assert.deepEqual(ids(await outbox.claim(['key_a'], 59_999, 10, 'gw1', 5_000)), ['t1'], "another submission's event is not held back");
      const [again] = await outbox.claim(['key_a'], 60_000, 10, 'gw1', 5_000);
      assert.equal(again!.id, 's1');
      await outbox.delivered(again!.ord, 60_000);
      assert.deepEqual(ids(await outbox.claim(['key_a'], 60_000, 10, 'gw1', 5_000)), ['s2']);
    });

    it('hands out what fell due first first', async () => {
      const { outbox } = await fresh();
      await outbox.add([event('late', 1), event('early', 2)], 1_000);
      const claimed = await outbox.claim(['key_a'], 1_000, 10, 'gw1', 5_000);
      await outbox.failed(claimed.find((e) => e.id === 'late')!.ord, 9_000);
      await outbox.failed(claimed.find((e) => e.id === 'early')!.ord, 5_000);
      assert.deepEqual(ids(await outbox.claim(['key_a'], 10_000, 1, 'gw1', 5_000)), ['early']);
    });

    it("records a receiver's failures, pause and resume (which makes its events due at once), and drops", async () => {
      const { outbox } = await fresh();
      assert.equal(await outbox.receiver('key_a'), null);
      await outbox.attempted('key_a', 1_000, 'the receiver answered 500');
      await outbox.attempted('key_a', 2_000, 'the receiver answered 502');
      let status = await outbox.receiver('key_a');
      assert.deepEqual([status!.failingSince, status!.lastError, status!.pausedAt], [1_000, 'the receiver answered 502', null]);
      await outbox.pause('key_a', 3_000, 999); // failing since 1,000, not since 999: not paused
      assert.equal((await outbox.receiver('key_a'))!.pausedAt, null);
      await outbox.pause('key_a', 3_000, 1_000);
      await outbox.dropped('key_a', 4);
      status = await outbox.receiver('key_a');
      assert.deepEqual([status!.pausedAt, status!.dropped], [3_000, 4]);
      await outbox.add([event('p1', 1)], 3_000);
      const [claimed] = await outbox.claim(['key_a'], 3_000, 10, 'gw1', 100);
      await outbox.failed(claimed!.ord, 1_000_000);
      await outbox.resume('key_a', 4_000);
      status = await outbox.receiver('key_a');
      assert.deepEqual([status!.pausedAt, status!.failingSince], [null, null]);
      assert.deepEqual(ids(await outbox.claim(['key_a'], 4_000, 10, 'gw1', 100)), [], 'not before every gateway has the new secret');
      const [resumed] = await outbox.claim(['key_a'], 5_500, 10, 'gw1', 100);
      assert.deepEqual([resumed!.id, resumed!.attempts], ['p1', 0]);
      await outbox.attempted('key_a', 5_000, null);
      assert.equal((await outbox.receiver('key_a'))!.lastDeliveredAt, 5_000);
    });

    it("streams a key's events in order, delivered or not, from where a stream starts; events for streams only wait for no delivery", async () => {
      const { outbox } = await fresh();
      assert.equal(await outbox.lastOrd('key_a'), 0);
      await outbox.add([event('s1', 1), { ...event('s2', 2), deliver: false }, event('o1', 3, 'key_b'), event('s3', 1)], 1_000);
      assert.deepEqual(ids(await outbox.after('key_a', 0, 10)), ['s1', 's2', 's3']);
      const s1 = await outbox.find('s1');
      assert.equal(s1!.keyId, 'key_a');
      assert.deepEqual(ids(await outbox.after('key_a', s1!.ord, 10)), ['s2', 's3']);
      assert.deepEqual(ids(await outbox.after('key_a', s1!.ord, 1)), ['s2']);
      assert.equal(await outbox.lastOrd('key_a'), (await outbox.find('s3'))!.ord);
      assert.equal(await outbox.find('nope'), null);
      // s2 is kept for streams: nobody claims it, and it is not waiting.
      assert.deepEqual(ids(await outbox.claim(['key_a'], 1_000, 10, 'gw1', 100)), ['s1']);
      assert.deepEqual([...(await outbox.pending())].sort(), [
        ['key_a', 2],
        ['key_b', 1],
      ]);
    });

    it('keeps a key streamed until the latest time asked', async () => {
      const { outbox } = await fresh();
      await outbox.stream('key_a', 5_000);
      await outbox.stream('key_a', 3_000);
      await outbox.stream('key_b', 2_000);
      assert.deepEqual((await outbox.streaming(1_000)).sort(), ['key_a', 'key_b']);
      assert.deepEqual(await outbox.streaming(2_000), ['key_a']);
      assert.deepEqual(await outbox.streaming(5_000), []);
    });

    it("claims at most perKey events of one key, so another key's events are not held back by it", async () => {
      const { outbox } = await fresh();
      await outbox.add([...Array.from({ length: 20 }, (_, i) => event(`busy${i}`, 100 + i)), event('quiet', 1, 'key_b')], 1_000);
      const claimed = await outbox.claim(['key_a', 'key_b'], 1_000, 10, 'gw1', 100, 4);
      assert.equal(claimed.filter((e) => e.keyId === 'key_a').length, 4);
      assert.deepEqual(ids(claimed.filter((e) => e.keyId === 'key_b')), ['quiet']);
    });

    it('does not add an event once a later step of the same member is held, and discards what waits for a removed webhook', async () => {
      const { outbox } = await fresh();
      await outbox.add(
        [
          { ...event('landed', 7), member: 0, step: 4 },
          { ...event('other-member', 7), member: 1, step: 2 },
        ],
        1_000,
      );
      assert.equal(await outbox.add([{ ...event('forwarded-again', 7), member: 0, step: 2 }], 2_000), 0);
      assert.equal(await outbox.add([{ ...event('forwarded-of-1', 7), member: 1, step: 2 }], 2_000), 1);
      await outbox.discard('key_a', 3_000);
      assert.deepEqual([...(await outbox.pending())], []);
      assert.deepEqual(ids(await outbox.after('key_a', 0, 10)), ['landed', 'other-member', 'forwarded-of-1']);
    });

    it('prunes delivered events older than asked, never undelivered ones', async () => {
      const { outbox } = await fresh();
      await outbox.add([event('d1', 1), event('d2', 2), event('u1', 3)], 1_000);
      const claimed = await outbox.claim(['key_a'], 1_000, 2, 'gw1', 100);
      await outbox.delivered(claimed[0]!.ord, 1_000);
      await outbox.delivered(claimed[1]!.ord, 5_000);
      assert.equal(await outbox.prune(2_000), 1);
      assert.equal(await outbox.prune(10_000), 1);
      assert.deepEqual([...(await outbox.pending())], [['key_a', 1]]);
    });
  });
}
