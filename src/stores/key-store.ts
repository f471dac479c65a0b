/**
 * API keys: the store interface, and the format and hashing of keys.
 *
 * A key is 24 random bytes in base58 behind the prefix `slw_` (the prefix lets secret
 * scanners spot a leaked key). Only its SHA-256 is stored: a key has 192 bits of entropy,
 * so a fast hash cannot be brute-forced, and a slow one (bcrypt, argon2) would cost
 * milliseconds on every request for no gain.
 */
import crypto from 'node:crypto';
import sodium from 'sodium-native';
import bs58 from 'bs58';

export const KEY_PREFIX = 'slw_';

export interface ApiKeyRecord {
  readonly id: string;
  readonly name: string;
  /** Whether the key may call `sendBundle` (off by default, as the spec says). */
  readonly bundle: boolean;
  /** Transactions per second it may submit (a batch or bundle counts each member); null: no limit. */
  readonly tps: number | null;
  /** Bundles per second it may submit; null: no limit. */
  readonly bundlesPerSecond: number | null;
  /** Reads per second it may make (each JSON-RPC entry that is not a submission counts one); null: no limit. */
  readonly readsPerSecond: number | null;
  /** Where the key's submission events are sent (events/webhook-delivery.ts), or null. */
  readonly webhookUrl: string | null;
  readonly createdAt: string;
  readonly revokedAt: string | null;
}

export interface StoredKey {
  readonly record: ApiKeyRecord;
  readonly hash: Buffer;
  /** The webhook's signing secret (Standard Webhooks' `whsec_…`), kept in clear: the gateway signs with it. Null without a webhook. */
  readonly webhookSecret: string | null;
}

/** What `keys set` changes: each field given is set (a limit of null removes it). */
export interface KeyChanges {
  readonly bundle?: boolean;
  readonly tps?: number | null;
  readonly bundlesPerSecond?: number | null;
  readonly readsPerSecond?: number | null;
  /** A webhook with its new secret, or null to remove it. */
  readonly webhook?: { readonly url: string; readonly secret: string } | null;
}

export interface KeyStore {
  /** Creates a key; the clear key is returned once and never stored. */
  create(input: { name: string; bundle: boolean } & KeyChanges): Promise<{ record: ApiKeyRecord; key: string }>;
  /** Creates a key only if the store holds none (the first start), atomically among instances starting together; null otherwise. */
  createFirst(input: { name: string; bundle: boolean }): Promise<{ record: ApiKeyRecord; key: string } | null>;
  list(): Promise<ApiKeyRecord[]>;
  /** False when no such key exists. */
  revoke(id: string): Promise<boolean>;
  /** False when no such key exists. */
  update(id: string, changes: KeyChanges): Promise<boolean>;
  /** Every key that is not revoked, with its hash, for the authenticator. */
  loadActive(): Promise<StoredKey[]>;
  /** Calls `onChange` soon after any change, including one made by another process. */
  watch(onChange: () => void): () => void;
  close(): Promise<void>;
}

export function generateApiKey(): string {
  return KEY_PREFIX + bs58.encode(crypto.randomBytes(24));
}

/** A webhook signing secret in Standard Webhooks' form: `whsec_` and 32 random bytes in base64. */
export function generateWebhookSecret(): string {
  return `whsec_${crypto.randomBytes(32).toString('base64')}`;
}

export function generateKeyId(): string {
  return `key_${crypto.randomBytes(6).toString('hex')}`;
}

/**
 * SHA-256 of the key, with libsodium into a pooled buffer: node:crypto's createHash makes a
 * native object and a buffer of its own for each call, which the garbage collector then
 * has to sweep on every request (a test cross-checks the two).
 */
export function hashApiKey(key: string): Buffer {
  const out = Buffer.allocUnsafe(sodium.crypto_hash_sha256_BYTES);
  sodium.crypto_hash_sha256(out, Buffer.from(key, 'utf8'));
  return out;
}
