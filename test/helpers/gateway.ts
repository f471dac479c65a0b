/**
 * Starts a real Slipway (HTTP on a real socket, real stores in a temporary data dir, the
 * embedded ledger with fast slots) for one test file, and gives it a key of each kind.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startApp, type RunningApp } from '../../src/app';
import { resolveConfig, type Settings } from '../../src/config/config';
import { openStore } from '../../src/stores/database/open-store';
import { KEY_STORE } from '../../src/stores/store-adapters';

export interface TestGateway {
  readonly app: RunningApp;
  readonly url: string;
  readonly dataDir: string;
  /** A key with every permission (sendBundle on). */
  readonly key: string;
  /** A key without sendBundle. */
  readonly plainKey: string;
  close(): Promise<void>;
}

export function makeDataDir(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'slipway-test-'));
}

/** `configFile` is written to the data dir and used as the configuration file. */
export async function startTestGateway(settings: Settings = {}, configFile?: object): Promise<TestGateway> {
  const dataDir = (settings.dataDir as string | undefined) ?? makeDataDir();
  let config: string | undefined;
  if (configFile !== undefined) {
    config = path.join(dataDir, 'slipway.config.json');
    fs.writeFileSync(config, JSON.stringify(configFile));
  }
  let app: RunningApp;
  try {
    app = await startApp(resolveConfig({ port: 0, slotMs: 50, logLevel: 'silent', ...settings, dataDir, config }, {}));
  } catch (error) {
    fs.rmSync(dataDir, { recursive: true, force: true });
    throw error;
  }
  const stores = { dataDir, postgresUrl: settings.postgresUrl, postgresSchema: settings.postgresSchema };
  const plainKey = await createKey(dataDir, 'plain', false, stores);
  // Another instance sharing the key store made the initial key: this one gets a key of its own.
  const key = app.initialKey?.key ?? (await createKey(dataDir, 'all', true, stores));
  await waitForKey(app.url, plainKey);
  await waitForKey(app.url, key);
  return {
    app,
    url: app.url,
    dataDir,
    key,
    plainKey,
    async close() {
      await app.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Creates a key the way the CLI does: through a second connection to the key store (the data dir's, or PostgreSQL given in `stores`). */
export async function createKey(dataDir: string, name: string, bundle: boolean, stores: Settings = {}): Promise<string> {
  const store = await openStore(resolveConfig({ ...stores, dataDir }, {}), KEY_STORE);
  try {
    return (await store.create({ name, bundle })).key;
  } finally {
    await store.close();
  }
}

/** Waits until the running server accepts `key` (it reloads keys within a second). */
export async function waitForKey(url: string, key: string, timeoutMs = 2000): Promise<number> {
  const started = Date.now();
  for (;;) {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'x-api-key': key },
      body: '{"jsonrpc":"2.0","id":1,"method":"getSlot"}',
    });
    if (response.status === 200) return Date.now() - started;
    if (Date.now() - started > timeoutMs) throw new Error(`key not accepted after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
