/**
 * API keys in PostgreSQL: the store itself, the CLI against it, and two gateways sharing it,
 * each seeing a change made with the CLI within a second.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { createPostgresKeyStore } from '../../src/stores/key-store-postgres';
import { hashApiKey, type KeyStore } from '../../src/stores/key-store';
import { startCluster, type Cluster } from '../helpers/cluster';
import { startTestGateway, type TestGateway } from '../helpers/gateway';
import { POSTGRES_URL, testSchema } from '../helpers/postgres';
import { runCli } from '../helpers/process';
import { rpc } from '../helpers/rpc';
import { until } from '../helpers/until';

describe('API keys in PostgreSQL', () => {
  const { schema, drop } = testSchema();
  let store: KeyStore;
  before(async () => {
    store = await createPostgresKeyStore(POSTGRES_URL, schema);
  });
  after(async () => {
    await store.close();
    await drop();
  });

  it('creates, lists, updates, revokes; only active keys are loaded, by hash', async () => {
    const { record, key } = await store.create({ name: 'trader', bundle: false, tps: 20 });
    assert.deepEqual(
      [record.name, record.bundle, record.tps, record.bundlesPerSecond, record.revokedAt],
      ['trader', false, 20, null, null],
    );
    assert.ok((await store.list()).some((k) => k.id === record.id));
    assert.equal(await store.update(record.id, { bundle: true, bundlesPerSecond: 2, tps: null }), true);
    const updated = (await store.list()).find((k) => k.id === record.id)!;
    assert.deepEqual([updated.bundle, updated.tps, updated.bundlesPerSecond], [true, null, 2]);
    const active = await store.loadActive();
    assert.ok(active.find((k) => k.record.id === record.id)!.hash.equals(hashApiKey(key)));
    assert.equal(await store.revoke(record.id), true);
    assert.equal(await store.revoke(record.id), true, 'revoking twice: still a known key');
    assert.equal(await store.revoke('key_nope'), false);
    assert.equal(await store.update('key_nope', { bundle: true }), false);
    assert.equal(
      (await store.loadActive()).some((k) => k.record.id === record.id),
      false,
    );
  });

  it('opening again (or by several instances at once) migrates once', async () => {
    const again = await Promise.all([createPostgresKeyStore(POSTGRES_URL, schema), createPostgresKeyStore(POSTGRES_URL, schema)]);
    for (const s of again) await s.close();
  });

  it('a change made elsewhere (the CLI) is announced to a watching store within a second', async () => {
    let changes = 0;
    const unwatch = store.watch(() => changes++);
    try {
      await until(
        () => changes,
        (n) => n >= 1,
      ); // the first notice, on listening
      const before = changes;
      const created = await runCli(['keys', 'create', '--name', 'from-cli', '--tps', '5', '--json'], {
        SLIPWAY_POSTGRES_URL: POSTGRES_URL,
        SLIPWAY_POSTGRES_SCHEMA: schema,
      });
      assert.equal(created.code, 0, created.stderr);
      const exited = Date.now();
      await until(
        () => changes,
        (n) => n > before,
        1_000,
      );
      assert.ok(Date.now() - exited < 1_000);
      const record = JSON.parse(created.stdout);
      assert.equal(record.tps, 5);
      assert.ok((await store.list()).some((k) => k.id === record.id));
    } finally {
      unwatch();
    }
  });
});

/** One statement on a connection of its own (not the gateways'). */
async function sql(text: string, values: unknown[] = []): Promise<void> {
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  await client.connect();
  try {
    await client.query(text, values);
  } finally {
    await client.end();
  }
}

describe('a key store that cannot be read', () => {
  const { schema, drop } = testSchema();
  let cluster: Cluster;
  let gw: TestGateway;
  before(async () => {
    cluster = await startCluster(1, 50);
    gw = await startTestGateway(
      { postgresUrl: POSTGRES_URL, postgresSchema: schema, maxKeyStaleMs: 1_500 },
      { upstreams: { rpc: { type: 'rpc', urls: [cluster.nodes[0]!.url] } } },
    );
  });
  after(async () => {
    await gw.close();
    await cluster.close();
    await drop();
  });

  it('past maxKeyStaleMs every key is refused (503 -32094) and /health says why; once it can be read, keys work again', async () => {
    assert.equal((await rpc(gw.url, gw.key, 'getSlot')).status, 200);
    await sql(`ALTER TABLE ${schema}.api_keys RENAME TO api_keys_away`);
    try {
      const refused = await until(
        async () => rpc(gw.url, gw.key, 'getSlot'),
        (a) => a.status === 503,
        6_000,
      );
      assert.equal(refused.body.error.code, -32094);
      assert.match(
        refused.body.error.message,
        /^the key store cannot be read \((relation .*api_keys.* does not exist|no answer)\) for \d+ s, longer than maxKeyStaleMs \(1500 ms\): no API key is accepted until it can be read again$/,
      );
      const health = await fetch(`${gw.url}/health`);
      assert.equal(health.status, 503);
      assert.match(((await health.json()) as { message: string }).message, /^the key store cannot be read/);
    } finally {
      await sql(`ALTER TABLE ${schema}.api_keys_away RENAME TO api_keys`);
    }
    await until(
      async () => (await rpc(gw.url, gw.key, 'getSlot')).status,
      (s) => s === 200,
      5_000,
    );
    assert.equal((await fetch(`${gw.url}/health`)).status, 200);
  });
});

describe('two gateways sharing the keys in PostgreSQL', () => {
  const { schema, drop } = testSchema();
  const gateways: TestGateway[] = [];
  const env = { SLIPWAY_POSTGRES_URL: POSTGRES_URL, SLIPWAY_POSTGRES_SCHEMA: schema };
  let cluster: Cluster;
  before(async () => {
    cluster = await startCluster(1, 50);
    const network = { upstreams: { rpc: { type: 'rpc', urls: [cluster.nodes[0]!.url] } } };
    for (let i = 0; i < 2; i++) gateways.push(await startTestGateway({ postgresUrl: POSTGRES_URL, postgresSchema: schema }, network));
  });
  after(async () => {
    for (const gw of gateways) await gw.close();
    await cluster.close();
    await drop();
  });

  it('refuses the embedded ledger with a shared journal, saying why', async () => {
    await assert.rejects(
      startTestGateway({ postgresUrl: POSTGRES_URL, postgresSchema: schema }),
      /the embedded ledger is one gateway's own chain/,
    );
  });

  it('a key created, limited and revoked with the CLI works, then is refused, on both within a second', async () => {
    const created = await runCli(['keys', 'create', '--name', 'shared', '--bundle'], env);
    assert.equal(created.code, 0, created.stderr);
    const key = created.stdout.trim();
    const id = /created (key_[0-9a-f]+)/.exec(created.stderr)![1]!;
    for (const gw of gateways)
      await until(
        async () => (await rpc(gw.url, key, 'getSlot')).status,
        (s) => s === 200,
        1_000,
      );

    const revoked = await runCli(['keys', 'revoke', id], env);
    assert.equal(revoked.code, 0, revoked.stderr);
    for (const gw of gateways) {
      const answer = await until(
        async () => rpc(gw.url, key, 'getSlot'),
        (a) => a.status === 401,
        1_000,
      );
      assert.equal(answer.body.error.code, -32098);
    }
  });

  it('a revocation whose notice is lost (a pooler in between, a broken listener) still takes effect within 5 s', async () => {
    const created = await runCli(['keys', 'create', '--name', 'unannounced'], env);
    const key = created.stdout.trim();
    const id = /created (key_[0-9a-f]+)/.exec(created.stderr)![1]!;
    for (const gw of gateways)
      await until(
        async () => (await rpc(gw.url, key, 'getSlot')).status,
        (s) => s === 200,
        1_000,
      );
    // Revoked in the table directly: no NOTIFY reaches the gateways.
    await sql(`UPDATE ${schema}.api_keys SET revoked_at = now() WHERE id = $1`, [id]);
    const revokedAt = Date.now();
    for (const gw of gateways)
      await until(
        async () => (await rpc(gw.url, key, 'getSlot')).status,
        (s) => s === 401,
        5_000,
      );
    assert.ok(Date.now() - revokedAt < 5_000);
  });

  it('the first start creates one initial key, not one per instance', async () => {
    const listed = await runCli(['keys', 'list', '--json'], env);
    const initial = JSON.parse(listed.stdout).filter((k: { name: string }) => k.name === 'initial');
    assert.equal(initial.length, 1);
  });
});
