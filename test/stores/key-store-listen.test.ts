import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { describe, it } from 'node:test';
import type pg from 'pg';
import { listenForChanges } from '../../src/stores/key-store-postgres-listen';

/** A pool client that counts its releases and fails its LISTEN when told to. */
class FakeClient extends EventEmitter {
  releases: boolean[] = [];
  failQuery = false;
  release(destroy?: boolean): void {
    this.releases.push(destroy === true);
  }
  async query(): Promise<void> {
    if (this.failQuery) {
      this.emit('error', new Error('connection terminated'));
      throw new Error('connection terminated');
    }
  }
}

/** A pool whose connections are handed out when the test says. */
function fakePool() {
  const waiting: ((client: FakeClient) => void)[] = [];
  let connects = 0;
  const pool = {
    connect: () =>
      new Promise<FakeClient>((resolve) => {
        connects += 1;
        waiting.push(resolve);
      }),
  };
  return {
    pool: pool as unknown as pg.Pool,
    give: (client: FakeClient) => waiting.shift()!(client),
    get connects() {
      return connects;
    },
  };
}

const settle = (ms = 0) => new Promise((resolve) => setTimeout(resolve, ms));

describe("the key store's LISTEN connection", () => {
  it('a connection that arrives after the store closed is let go at once, never kept listening', async () => {
    const { pool, give } = fakePool();
    const listeners = new Set<pg.PoolClient>();
    let closed = false;
    listenForChanges(
      pool,
      'keys',
      listeners,
      () => closed,
      () => {},
    );
    closed = true; // the store closes while the connection is on its way
    const client = new FakeClient();
    give(client);
    await settle();
    assert.deepEqual(client.releases, [true], 'released (destroyed) once');
    assert.equal(listeners.size, 0, 'not held by the store');
  });

  it('a failure reported twice (the error event and the failed LISTEN) is retried once, the connection released once', async () => {
    const fake = fakePool();
    const { pool, give } = fake;
    const listeners = new Set<pg.PoolClient>();
    let changes = 0;
    const stop = listenForChanges(
      pool,
      'keys',
      listeners,
      () => false,
      () => (changes += 1),
    );
    const broken = new FakeClient();
    broken.failQuery = true;
    give(broken);
    await settle(700); // one retry after 500 ms
    assert.deepEqual(broken.releases, [true]);
    assert.equal(fake.connects, 2, 'one retry, not two');
    const good = new FakeClient();
    give(good);
    await settle();
    assert.equal(changes, 1, 'reloaded once listening again');
    assert.equal(listeners.size, 1);
    stop();
    assert.deepEqual(good.releases, [true]);
    assert.equal(listeners.size, 0);
    await settle(700);
    assert.equal(fake.connects, 2, 'no retry once stopped');
  });
});
