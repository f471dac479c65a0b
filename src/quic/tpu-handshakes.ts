/**
 * The TLS side of a TPU connection in one place: ALPN `solana-tpu`, the ed25519 identity
 * in a self-signed certificate, the client's certificate required by the server.
 */
import { generateKeyPairSync } from 'node:crypto';
import { rawEd25519Key } from './tls/certificate';
import { TlsClientHandshake, TlsServerHandshake, type TlsIdentity } from './tls';
import type { TlsOutput, TlsSession } from './tls-session';

export const TPU_ALPN = 'solana-tpu';

export type { TlsIdentity } from './tls';

/** A fresh identity: what a sender without a configured keypair presents (unstaked). */
export function generateIdentity(): TlsIdentity {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  return { privateKey, publicKey: rawEd25519Key(publicKey)! };
}

export function clientTls(
  identity: TlsIdentity,
  alpn = TPU_ALPN,
): (transportParameters: Buffer) => { session: TlsSession; start: TlsOutput } {
  return (transportParameters) => {
    const session = new TlsClientHandshake({ identity, alpn, transportParameters });
    return { session, start: session.start() };
  };
}

export function serverTls(identity: TlsIdentity, alpn: readonly string[] = [TPU_ALPN]): (transportParameters: Buffer) => TlsSession {
  return (transportParameters) => new TlsServerHandshake({ identity, alpn, transportParameters, requireClientCertificate: true });
}
