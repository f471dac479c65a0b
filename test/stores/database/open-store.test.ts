/**
 * Every store is opened where the configuration puts it by one function (openStore): SQLite
 * in an owner-only data directory, or PostgreSQL in the configured schema, with a refusal
 * that names the store, the server (its password hidden) and the schema when PostgreSQL
 * cannot be used.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import pg from 'pg';
import { resolveConfig } from '../../../src/config/config';
import { openStore, type StoreAdapters } from '../../../src/stores/database/open-store';
import { IDEMPOTENCY_STORE, KEY_STORE, REFUSAL_COUNTS } from '../../../src/stores/store-adapters';
import { POSTGRES_URL, testSchema } from '../../helpers/postgres';

describe('opening a store', () => {
  const { schema, drop } = testSchema();
  after(drop);

  it('without PostgreSQL, in SQLite in the data directory, which is made owner-only, and found again by the next opening', async () => {
    const dataDir = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'slipway-open-store-')), 'data');
    try {
      fs.mkdirSync(dataDir, { mode: 0o755 }); // as made by hand
      fs.chmodSync(dataDir, 0o755);
      const config = resolveConfig({ dataDir }, {});
      const first = await openStore(config, KEY_STORE);
      const { record } = await first.create({ name: 'opened twice', bundle: false });
      await first.close();
      assert.equal(fs.statSync(dataDir).mode & 0o777, 0o700);
      assert.ok(fs.existsSync(path.join(dataDir, 'keys.sqlite')));
      const second = await openStore(config, KEY_STORE);
      assert.deepEqual(
        (await second.list()).map((key) => key.name),
        [record.name],
      );
      await second.close();
    } finally {
      fs.rmSync(path.dirname(dataDir), { recursive: true, force: true });
    }
  });

  it('in PostgreSQL, each store in the configured schema, its tables made there', async () => {
    const config = resolveConfig({ postgresUrl: POSTGRES_URL, postgresSchema: schema }, {});
    const stores: StoreAdapters<{ close(): Promise<void> }>[] = [KEY_STORE, IDEMPOTENCY_STORE, REFUSAL_COUNTS];
    for (const store of stores) await (await openStore(config, store)).close();
    const client = new pg.Client({ connectionString: POSTGRES_URL });
    await client.connect();
    try {
      const { rows } = await client.query<{ component: string }>(`SELECT component FROM ${schema}.schema_versions ORDER BY component`);
      assert.deepEqual(
        rows.map((row) => row.component),
        ['idempotency', 'keys', 'refusal_counts'],
      );
    } finally {
      await client.end();
    }
  });

  it('refuses a PostgreSQL it cannot reach, naming the store, the server without its password, and the schema', async () => {
    const config = resolveConfig({ postgresUrl: 'postgres://slipway:secret@127.0.0.1:1/slipway', postgresSchema: 'gateways' }, {});
    await assert.rejects(openStore(config, REFUSAL_COUNTS), (error: Error) => {
      assert.match(
        error.message,
        /^cannot open the refusal counts in PostgreSQL at postgres:\/\/slipway:\*\*\*@127\.0\.0\.1:1\/slipway \(schema gateways\): /,
      );
      assert.doesNotMatch(error.message, /secret/);
      return true;
    });
  });

  it('refuses tables newer than this Slipway knows, and says to upgrade', async () => {
    const client = new pg.Client({ connectionString: POSTGRES_URL });
    await client.connect();
    try {
      await client.query(`UPDATE ${schema}.schema_versions SET version = 99 WHERE component = 'keys'`);
    } finally {
      await client.end();
    }
    const config = resolveConfig({ postgresUrl: POSTGRES_URL, postgresSchema: schema }, {});
    await assert.rejects(
      openStore(config, KEY_STORE),
      /^Error: cannot open the key store in PostgreSQL .*the keys tables in schema \S+ are at version 99, newer than this Slipway knows \(\d+\); upgrade Slipway$/,
    );
  });
});
