/**
 * The keypair each validator of the local cluster presents in its TPU's certificate: its
 * own identity's, when the ledger can know it (the default identities are derived from
 * public seeds, so their private keys can be derived too), and a fresh one otherwise
 * (`--leaders` gives public keys only). A client that checks the certificate against the
 * schedule's identity can then tell the default validators apart, as on a real cluster.
 */
import { createPrivateKey, createPublicKey } from 'node:crypto';
import bs58 from 'bs58';
import { defaultValidatorIdentities, defaultValidatorSeed } from '../core/validator-identities';
import { generateIdentity, type TlsIdentity } from '../quic/tpu-handshakes';

/** PKCS #8 of an Ed25519 private key, before its 32-byte seed (RFC 8410 §7). */
const PKCS8_ED25519_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');
/** Default validators looked for among a schedule's identities: more than any schedule here uses. */
const DEFAULT_SEEDS_KNOWN = 64;

/** The ed25519 keypair of a 32-byte seed, as the TLS stack takes it. */
export function identityFromSeed(seed: Buffer): TlsIdentity {
  const privateKey = createPrivateKey({ key: Buffer.concat([PKCS8_ED25519_PREFIX, seed]), format: 'der', type: 'pkcs8' });
  const spki = createPublicKey(privateKey).export({ format: 'der', type: 'spki' });
  return { privateKey, publicKey: Buffer.from(spki.subarray(spki.length - 32)) };
}

/** The TLS identity of validator `identity` (base58): its own keypair when it is a default identity, else a fresh one. */
export function validatorTlsIdentity(identity: string): { tls: TlsIdentity; own: boolean } {
  const index = defaultValidatorIdentities(DEFAULT_SEEDS_KNOWN).indexOf(identity);
  if (index < 0) return { tls: generateIdentity(), own: false };
  const tls = identityFromSeed(defaultValidatorSeed(index));
  if (bs58.encode(tls.publicKey) !== identity) throw new Error(`the seed of default validator ${index + 1} does not give ${identity}`);
  return { tls, own: true };
}
