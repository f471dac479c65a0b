/**
 * The seam between QUIC and TLS 1.3 (RFC 9001 §4): QUIC hands TLS the CRYPTO bytes it
 * received at each encryption level and gets back bytes to send, secrets as they become
 * available, and the end of the handshake. The client and server handshakes in `tls/`
 * implement it; the connection knows nothing else of TLS.
 */
export type EncryptionLevel = 'initial' | 'handshake' | 'application';

/** Secrets for one level (TLS_AES_128_GCM_SHA256); packet keys derive from them (RFC 9001 §5.1). */
export interface TlsSecrets {
  readonly level: 'handshake' | 'application';
  readonly client: Buffer;
  readonly server: Buffer;
}

export interface TlsOutput {
  readonly secrets: TlsSecrets[];
  readonly send: { readonly level: EncryptionLevel; readonly data: Buffer }[];
  readonly complete?: { readonly alpn: string; readonly peerTransportParameters: Buffer; readonly peerIdentity?: Buffer };
}

export interface TlsSession {
  /** CRYPTO bytes received at `level`, in order. Throws a TLS alert (an error with `alert`) on a protocol error. */
  receive(level: EncryptionLevel, data: Buffer): TlsOutput;
}

/** The TLS alert number carried by a handshake error, if it has one. */
export function alertOf(error: unknown): number | undefined {
  const alert = (error as { alert?: unknown } | null)?.alert;
  return typeof alert === 'number' ? alert : undefined;
}
