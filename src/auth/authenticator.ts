/**
 * Checks API keys against an in-memory copy of the active keys. A presented key is hashed,
 * looked up by hash, and the stored hash compared with `timingSafeEqual`: the clear key is
 * never kept, and the comparison takes the same time wherever two hashes differ.
 *
 * The copy must not outlive a revocation:
 * - it is read again whenever the key store reports a change, and a report that arrives
 *   while a read is under way starts another once it ends (the read may predate the change);
 * - it is read again every `rereadMs` whatever the reports say: a notice can be lost (a
 *   connection pooler between the gateway and PostgreSQL drops LISTEN/NOTIFY, a listening
 *   connection breaks at the wrong moment);
 * - when the store cannot be read for longer than `maxStaleMs`, no key is accepted (fail
 *   closed: a revoked key must not keep working because the store is down) until a read
 *   succeeds, and `unavailable()` says why, for the refusals and `/health`.
 */
import crypto from 'node:crypto';
import type { ApiKeyRecord, KeyStore, StoredKey } from '../stores/key-store';
import { hashApiKey } from '../stores/key-store';

/** Longer than any key Slipway issues; anything longer is refused without hashing. */
const MAX_KEY_LENGTH = 256;

export interface Authenticator {
  /** The key's record, or null for a missing, unknown or revoked key, or for every key while failing closed. */
  authenticate(key: string | undefined): ApiKeyRecord | null;
  /** Why no key is accepted (the key store unreadable for too long), or null. */
  unavailable(): string | null;
  /** The active keys that have a webhook, by key id: where their events go and the secret they are signed with. */
  webhooks(): ReadonlyMap<string, Webhook>;
  close(): void;
}

export interface Webhook {
  readonly url: string;
  readonly secret: string;
}

export interface AuthenticatorOptions {
  /** Keys are read again at least this often, notices or not. */
  readonly rereadMs: number;
  /** Past this long without a successful read, every key is refused; 0: never. */
  readonly maxStaleMs: number;
}

export async function createAuthenticator(store: KeyStore, options: AuthenticatorOptions): Promise<Authenticator> {
  let keys = await store.loadActive();
  let byHash = index(keys);
  let hooks = webhooksOf(keys);
  let readAt = Date.now();
  let lastError = '';
  /** The read under way (its number and start), if any; a read that never answers is given up after `rereadMs` × 5. */
  let reading: { n: number; at: number } | undefined;
  let reads = 0;
  let again = false;
  const reload = () => {
    if (reading !== undefined && Date.now() - reading.at < options.rereadMs * 5) {
      again = true;
      return;
    }
    const n = ++reads;
    reading = { n, at: Date.now() };
    again = false;
    const current = () => reading?.n === n; // a read given up on changes nothing when it answers at last
    store
      .loadActive()
      .then(
        (loaded) => {
          if (!current()) return;
          keys = loaded;
          byHash = index(keys);
          hooks = webhooksOf(keys);
          readAt = Date.now();
          lastError = '';
        },
        (error: unknown) => {
          if (current()) lastError = error instanceof Error ? error.message : String(error);
        },
      )
      .finally(() => {
        if (!current()) return;
        reading = undefined;
        if (again) reload();
      });
  };
  const unwatch = store.watch(reload);
  const timer = setInterval(reload, options.rereadMs);
  timer.unref();
  const unavailable = (): string | null => {
    if (options.maxStaleMs === 0) return null;
    const staleMs = Date.now() - readAt;
    if (staleMs <= options.maxStaleMs) return null;
    return `the key store cannot be read (${lastError === '' ? 'no answer' : lastError}) for ${(staleMs / 1000).toFixed(0)} s, longer than maxKeyStaleMs (${options.maxStaleMs} ms): no API key is accepted until it can be read again`;
  };
  return {
    authenticate(key) {
      if (key === undefined || key.length === 0 || key.length > MAX_KEY_LENGTH) return null;
      const hash = hashApiKey(key);
      const found = byHash.get(hash.toString('hex'));
      if (found === undefined || !crypto.timingSafeEqual(found.hash, hash)) return null;
      if (options.maxStaleMs > 0 && Date.now() - readAt > options.maxStaleMs) return null;
      return found.record;
    },
    unavailable,
    webhooks: () => hooks,
    close() {
      clearInterval(timer);
      unwatch();
    },
  };
}

function webhooksOf(keys: StoredKey[]): Map<string, Webhook> {
  const hooks = new Map<string, Webhook>();
  for (const { record, webhookSecret } of keys)
    if (record.webhookUrl !== null && webhookSecret !== null) hooks.set(record.id, { url: record.webhookUrl, secret: webhookSecret });
  return hooks;
}

function index(keys: StoredKey[]): Map<string, StoredKey> {
  return new Map(keys.map((key) => [key.hash.toString('hex'), key]));
}
