/**
 * Checks API keys against an in-memory copy of the active keys, refreshed whenever the key
 * store reports a change. A presented key is hashed, looked up by hash, and the stored hash
 * compared with `timingSafeEqual`: the clear key is never kept, and the comparison takes the
 * same time wherever two hashes differ.
 */
import crypto from 'node:crypto';
import type { ApiKeyRecord, KeyStore, StoredKey } from '../stores/key-store';
import { hashApiKey } from '../stores/key-store';

/** Longer than any key Slipway issues; anything longer is refused without hashing. */
const MAX_KEY_LENGTH = 256;

export interface Authenticator {
  /** The key's record, or null for a missing, unknown or revoked key. */
  authenticate(key: string | undefined): ApiKeyRecord | null;
  close(): void;
}

export async function createAuthenticator(store: KeyStore): Promise<Authenticator> {
  let byHash = index(await store.loadActive());
  let reloading: Promise<void> | undefined;
  const reload = () => {
    reloading ??= store
      .loadActive()
      .then((keys) => {
        byHash = index(keys);
      })
      // The store unreachable: keep the keys known; the store reports again once it is back.
      .catch(() => {})
      .finally(() => {
        reloading = undefined;
      });
  };
  const unwatch = store.watch(reload);
  return {
    authenticate(key) {
      if (key === undefined || key.length === 0 || key.length > MAX_KEY_LENGTH) return null;
      const hash = hashApiKey(key);
      const found = byHash.get(hash.toString('hex'));
      if (found === undefined || !crypto.timingSafeEqual(found.hash, hash)) return null;
      return found.record;
    },
    close: unwatch,
  };
}

function index(keys: StoredKey[]): Map<string, StoredKey> {
  return new Map(keys.map((key) => [key.hash.toString('hex'), key]));
}
