/**
 * The identity the TPU route presents to leaders: the operator's Solana CLI keypair file
 * (`identityKeypair`), or a fresh one. The file is a JSON array of 64 numbers (the 32-byte
 * seed, then the public key); a file others may read is refused, as ssh refuses a private
 * key others may read, and the key itself is never logged — only its public half.
 */
import { createPrivateKey, createPublicKey } from 'node:crypto';
import fs from 'node:fs';
import bs58 from 'bs58';
import { generateIdentity, type TlsIdentity } from '../quic/tpu-handshakes';

/** PKCS#8 of an Ed25519 private key, before its 32-byte seed (RFC 8410 §7). */
const PKCS8_ED25519_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

export interface TpuIdentity extends TlsIdentity {
  /** The public key, base58: what a cluster knows the sender as. */
  readonly address: string;
  /** Where it came from, for the start-up line. */
  readonly source: 'file' | 'generated';
}

/** Loads `file`, or makes a fresh identity when `file` is empty. Throws with a message naming what is wrong. */
export function loadTpuIdentity(file: string): TpuIdentity {
  if (file === '') {
    const fresh = generateIdentity();
    return { ...fresh, address: bs58.encode(fresh.publicKey), source: 'generated' };
  }
  let stat: fs.Stats;
  try {
    stat = fs.statSync(file);
  } catch (error) {
    throw new Error(`identityKeypair ${file}: cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)})`, {
      cause: error,
    });
  }
  if ((stat.mode & 0o077) !== 0)
    throw new Error(`identityKeypair ${file}: others may read it (mode ${(stat.mode & 0o777).toString(8)}); run chmod 600 ${file}`);
  let bytes: unknown;
  try {
    bytes = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (error) {
    throw new Error(`identityKeypair ${file}: not a Solana CLI keypair file (a JSON array of 64 numbers)`, { cause: error });
  }
  if (!Array.isArray(bytes) || bytes.length !== 64 || !bytes.every((b) => Number.isInteger(b) && b >= 0 && b <= 255))
    throw new Error(`identityKeypair ${file}: not a Solana CLI keypair file (a JSON array of 64 numbers from 0 to 255)`);
  const secret = Buffer.from(bytes as number[]);
  const privateKey = createPrivateKey({ key: Buffer.concat([PKCS8_ED25519_PREFIX, secret.subarray(0, 32)]), format: 'der', type: 'pkcs8' });
  const publicKey = createPublicKey(privateKey).export({ format: 'der', type: 'spki' }).subarray(-32);
  if (!publicKey.equals(secret.subarray(32)))
    throw new Error(`identityKeypair ${file}: its public key does not match its secret key (the file is damaged)`);
  return { privateKey, publicKey: Buffer.from(publicKey), address: bs58.encode(publicKey), source: 'file' };
}
