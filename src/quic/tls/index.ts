/** The TLS 1.3 handshake QUIC carries in CRYPTO frames (RFC 9001 §4): what the QUIC layer uses. */
export { ALERT, TlsAlert } from './alert';
export { ed25519KeyOfCertificate, selfSignedCertificate, type TlsIdentity } from './certificate';
export { TlsClientHandshake, type TlsClientOptions } from './client-handshake';
export type { EncryptionLevel, TlsCompletion, TlsOutput, TlsSecrets } from './handshake-machine';
export { TlsServerHandshake, type TlsServerOptions } from './server-handshake';
