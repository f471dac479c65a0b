/**
 * Revocation that cannot be missed, on the authenticator over a real SQLite key store whose
 * reads and notices the test controls: a notice that arrives while keys are being read, a
 * notice that never arrives, and a store that cannot be read.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { createAuthenticator } from '../../src/auth/authenticator';
import type { KeyStore, StoredKey } from '../../src/stores/key-store';
import { createSqliteKeyStore } from '../../src/stores/key-store-sqlite';
import { makeDataDir } from '../helpers/gateway';
import { until } from '../helpers/until';

const dirs: string[] = [];
after(() => {
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

/** The real store, with its change notices in the test's hands and each read's answer held until released. */
function controlled(): {
  store: KeyStore;
  notify: () => void;
  hold: () => () => void;
  unhold: () => void;
  failing: (on: boolean) => void;
  reads: () => number;
} {
  const dir = makeDataDir();
  dirs.push(dir);
  const real = createSqliteKeyStore(path.join(dir, 'keys.db'));
  let listener: (() => void) | undefined;
  let gate: Promise<void> | undefined;
  let fail = false;
  let reads = 0;
  const store: KeyStore = {
    ...real,
    async loadActive(): Promise<StoredKey[]> {
      reads++;
      if (fail) throw new Error('connection refused');
      const keys = await real.loadActive(); // read now, answered when the gate opens
      const held = gate;
      await held;
      return keys;
    },
    watch(onChange) {
      listener = onChange;
      return () => {};
    },
  };
  return {
    store,
    notify: () => listener!(),
    hold: () => {
      let release!: () => void;
      gate = new Promise((resolve) => (release = resolve));
      return () => {
        gate = undefined;
        release();
      };
    },
    unhold: () => (gate = undefined),
    failing: (on) => (fail = on),
    reads: () => reads,
  };
}

describe('revocation', () => {
  it('a notice that arrives while keys are being read starts another read: the revocation it announces is not lost', async () => {
    const c = controlled();
    const { record, key } = await c.store.create({ name: 'soon revoked', bundle: false });
    const auth = await createAuthenticator(c.store, { rereadMs: 60_000, maxStaleMs: 0 });
    try {
      const release = c.hold();
      c.notify(); // a read starts, and sees the key active
      await new Promise((resolve) => setTimeout(resolve, 20));
      await c.store.revoke(record.id);
      c.notify(); // the revocation's notice, during that read
      release();
      await until(
        () => auth.authenticate(key),
        (r) => r === null,
        1_000,
      );
    } finally {
      auth.close();
    }
  });

  it('without any notice, keys are read again every rereadMs', async () => {
    const c = controlled();
    const { record, key } = await c.store.create({ name: 'unannounced', bundle: false });
    const auth = await createAuthenticator(c.store, { rereadMs: 300, maxStaleMs: 0 });
    try {
      assert.equal(auth.authenticate(key)?.id, record.id);
      await c.store.revoke(record.id);
      const started = Date.now();
      await until(
        () => auth.authenticate(key),
        (r) => r === null,
        1_000,
      );
      assert.ok(Date.now() - started <= 700, `${Date.now() - started} ms`);
    } finally {
      auth.close();
    }
  });

  it('a read that never answers is given up after five reread intervals: it does not stop every later read', async () => {
    const c = controlled();
    const { record, key } = await c.store.create({ name: 'revoked during a hang', bundle: false });
    const auth = await createAuthenticator(c.store, { rereadMs: 100, maxStaleMs: 0 });
    try {
      c.hold(); // never released: this read hangs for good
      c.notify();
      await new Promise((resolve) => setTimeout(resolve, 20));
      c.unhold(); // later reads answer at once
      await c.store.revoke(record.id);
      await until(
        () => auth.authenticate(key),
        (r) => r === null,
        1_500,
      );
    } finally {
      auth.close();
    }
  });

  it('a store that cannot be read: keys are used for maxStaleMs, then refused, with the reason; they work again once it can be read', async () => {
    const c = controlled();
    const { record, key } = await c.store.create({ name: 'kept', bundle: false });
    const auth = await createAuthenticator(c.store, { rereadMs: 100, maxStaleMs: 500 });
    try {
      c.failing(true);
      await new Promise((resolve) => setTimeout(resolve, 250));
      assert.equal(auth.authenticate(key)?.id, record.id, 'still within maxStaleMs');
      assert.equal(auth.unavailable(), null);
      await until(
        () => auth.authenticate(key),
        (r) => r === null,
        1_000,
      );
      assert.match(
        auth.unavailable()!,
        /^the key store cannot be read \(connection refused\) for \d+ s, longer than maxKeyStaleMs \(500 ms\): no API key is accepted until it can be read again$/,
      );
      c.failing(false);
      await until(
        () => auth.authenticate(key)?.id,
        (id) => id === record.id,
        1_000,
      );
      assert.equal(auth.unavailable(), null);
      assert.ok(c.reads() > 5);
    } finally {
      auth.close();
    }
  });
});
