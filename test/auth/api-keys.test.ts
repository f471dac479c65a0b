import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import { after, before, describe, it } from 'node:test';
import Database from '../../src/stores/database/sqlite-binding';
import { dataPaths } from '../../src/config/config';
import { createSqliteKeyStore } from '../../src/stores/key-store-sqlite';
import { generateApiKey, hashApiKey } from '../../src/stores/key-store';
import { createKey, startTestGateway, waitForKey, type TestGateway } from '../helpers/gateway';
import { post, rpc, submitBatch } from '../helpers/rpc';

let gw: TestGateway;
before(async () => {
  gw = await startTestGateway();
});
after(() => gw.close());

const getSlot = { jsonrpc: '2.0', id: 9, method: 'getSlot', params: [] };

describe('API keys', () => {
  it('hashes keys with SHA-256 (libsodium, cross-checked against node:crypto)', () => {
    for (const key of [generateApiKey(), generateApiKey(), '', 'ключ', 'x'.repeat(300)]) {
      assert.deepEqual(hashApiKey(key), crypto.createHash('sha256').update(key, 'utf8').digest());
    }
  });

  it('refuses a missing key with 401 in the shape of each path', async () => {
    const root = await post(gw.url, getSlot);
    assert.equal(root.status, 401);
    assert.deepEqual(root.body, {
      jsonrpc: '2.0',
      error: { code: -32098, message: 'missing API key: send it in the x-api-key header' },
      id: null,
    });
    const batch = await submitBatch(gw.url, '', ['AAAA']);
    assert.equal(batch.status, 401);
    assert.deepEqual(batch.body, { code: -32098, message: 'missing API key: send it in the x-api-key header' });
    const jito = await post(`${gw.url}/api/v1/bundles`, getSlot);
    assert.equal(jito.status, 401);
  });

  it('refuses an unknown key with 401', async () => {
    const answer = await rpc(gw.url, 'slw_not-a-key', 'getSlot');
    assert.equal(answer.status, 401);
    assert.equal(answer.body.error.message, 'invalid API key: it is unknown or has been revoked');
    const long = await rpc(gw.url, 'x'.repeat(5000), 'getSlot');
    assert.equal(long.status, 401);
  });

  it('answers /health without a key', async () => {
    const response = await fetch(`${gw.url}/health`);
    assert.equal(response.status, 200);
    const body = (await response.json()) as { status: string; slot: number };
    assert.equal(body.status, 'ok');
    assert.equal(typeof body.slot, 'number');
  });

  it('answers an unknown path with 404 and the list of paths', async () => {
    const answer = await post(`${gw.url}/nope`, getSlot, { 'x-api-key': gw.key });
    assert.equal(answer.status, 404);
    assert.match(answer.body.message, /Slipway serves POST \/, POST \/submit-batch/);
  });

  it('a key created by another process works within a second; revoking it takes effect within a second', async () => {
    const key = await createKey(gw.dataDir, 'late', false);
    const tookMs = await waitForKey(gw.url, key, 1000);
    assert.ok(tookMs < 1000);
    const store = createSqliteKeyStore(dataPaths(gw.dataDir).keys);
    const id = (await store.list()).find((k) => k.name === 'late')!.id;
    await store.revoke(id);
    await store.close();
    const started = Date.now();
    let status = 200;
    while (status === 200 && Date.now() - started < 1000) {
      status = (await rpc(gw.url, key, 'getSlot')).status;
      if (status === 200) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    assert.equal(status, 401, 'revoked within a second');
  });

  it('stores keys hashed (SHA-256), never in clear', async () => {
    const file = dataPaths(gw.dataDir).keys;
    for (const suffix of ['', '-wal']) {
      if (!fs.existsSync(file + suffix)) continue;
      const raw = fs.readFileSync(file + suffix);
      assert.equal(raw.includes(Buffer.from(gw.key)), false, `clear key found in ${file + suffix}`);
      assert.equal(raw.includes(Buffer.from(gw.plainKey)), false);
    }
    const db = new Database(file, { readonly: true });
    const hashes = (db.prepare('SELECT key_hash FROM api_keys').all() as { key_hash: Buffer }[]).map((r) => r.key_hash.toString('hex'));
    db.close();
    assert.ok(hashes.includes(crypto.createHash('sha256').update(gw.key).digest('hex')));
  });
});
