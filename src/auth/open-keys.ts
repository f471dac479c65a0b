/**
 * The gateway's keys at start: the key store the configuration names, the first key when
 * the store is empty (shown once, by `serve`), and the authenticator over the store's copy.
 */
import type { SlipwayConfig } from '../config/config';
import type { KeyStore } from '../stores/key-store';
import { openStore } from '../stores/database/open-store';
import { KEY_STORE } from '../stores/store-adapters';
import { createAuthenticator, type Authenticator } from './authenticator';

/** Keys are read again this often, notices or not (a lost NOTIFY must not keep a revoked key working). */
const KEY_REREAD_MS = 2_000;

export interface GatewayKeys {
  readonly store: KeyStore;
  readonly authenticator: Authenticator;
  /** The key created on this start because the store was empty, or null. */
  readonly initialKey: { readonly id: string; readonly key: string } | null;
  close(): Promise<void>;
}

export async function openGatewayKeys(config: SlipwayConfig): Promise<GatewayKeys> {
  const store = await openStore(config, KEY_STORE);
  const created = await store.createFirst({ name: 'initial', bundle: true });
  const authenticator = await createAuthenticator(store, { rereadMs: KEY_REREAD_MS, maxStaleMs: config.maxKeyStaleMs });
  return {
    store,
    authenticator,
    initialKey: created === null ? null : { id: created.record.id, key: created.key },
    async close() {
      authenticator.close();
      await store.close();
    },
  };
}
