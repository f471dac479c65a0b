/**
 * What the client and server handshakes share: the interface the QUIC layer drives (bytes in
 * at an encryption level, secrets and bytes out), one message buffer per level, and the rule
 * that handshake data only ever arrives at the level the handshake is waiting on. No I/O and
 * no timers: the QUIC layer owns both.
 */
import { ALERT, asTlsAlert, TlsAlert } from './alert';
import { HandshakeMessageBuffer, MAX_INITIAL_MESSAGE, type HandshakeMessage } from './message-buffer';

export type EncryptionLevel = 'initial' | 'handshake' | 'application';

/** Secrets for one level, SHA-256 / TLS_AES_128_GCM_SHA256; the QUIC layer derives its packet keys from them (RFC 9001 §5.1). */
export interface TlsSecrets {
  readonly level: 'handshake' | 'application';
  readonly client: Buffer;
  readonly server: Buffer;
}

export interface TlsCompletion {
  /** The application protocol both sides agreed on. */
  readonly alpn: string;
  /** The peer's quic_transport_parameters, opaque; empty when not required and not sent. */
  readonly peerTransportParameters: Buffer;
  /**
   * The peer's raw ed25519 key, proven by its CertificateVerify: on the server, the client's
   * Solana identity (absent if it sent no certificate and none was required); on the client,
   * the server's, when its certificate holds an ed25519 key.
   */
  readonly peerIdentity?: Buffer;
}

export interface TlsOutput {
  /** Secrets that became available, in order (handshake first). */
  readonly secrets: TlsSecrets[];
  /** Handshake bytes to send, each at its encryption level (the QUIC layer puts them in CRYPTO frames). */
  readonly send: { readonly level: EncryptionLevel; readonly data: Buffer }[];
  /** Set once the handshake is complete on this side. */
  readonly complete?: TlsCompletion;
}

/** Collects one call's output; bytes for the same level in a row become one entry. */
export class OutputCollector {
  readonly secrets: TlsSecrets[] = [];
  readonly send: { level: EncryptionLevel; data: Buffer }[] = [];
  complete?: TlsCompletion;

  write(level: EncryptionLevel, ...messages: Buffer[]): void {
    const last = this.send[this.send.length - 1];
    if (last?.level === level) last.data = Buffer.concat([last.data, ...messages]);
    else this.send.push({ level, data: Buffer.concat(messages) });
  }

  result(): TlsOutput {
    return this.complete ? { secrets: this.secrets, send: this.send, complete: this.complete } : { secrets: this.secrets, send: this.send };
  }
}

export abstract class HandshakeMachine {
  private failure?: TlsAlert;
  private readonly buffers: Record<EncryptionLevel, HandshakeMessageBuffer> = {
    initial: new HandshakeMessageBuffer(MAX_INITIAL_MESSAGE),
    handshake: new HandshakeMessageBuffer(),
    application: new HandshakeMessageBuffer(),
  };

  /** The level the next handshake message must arrive at; null once nothing more may come. */
  protected abstract expectedLevel(): EncryptionLevel | null;

  /** Handles one whole message; throws TlsAlert if the peer broke the protocol. */
  protected abstract handle(message: HandshakeMessage, output: OutputCollector): void;

  /**
   * CRYPTO data received at `level`, in order (the QUIC layer reassembles offsets); may hold
   * part of a message, or several. Throws TlsAlert on a protocol error, and the same alert on
   * every call after it.
   */
  receive(level: EncryptionLevel, data: Buffer): TlsOutput {
    if (this.failure) throw this.failure;
    const output = new OutputCollector();
    if (data.length === 0) return output.result();
    try {
      const buffer = this.buffers[level];
      if (level !== this.expectedLevel()) throw this.unexpectedAt(level);
      buffer.push(data);
      for (let message = buffer.next(); message; message = buffer.next()) {
        this.handle(message, output);
        // A message never spans a key change (RFC 8446 §5.1): what follows belongs to another level.
        if (buffer.buffered > 0 && level !== this.expectedLevel()) throw this.unexpectedAt(level);
      }
    } catch (error) {
      this.failure = asTlsAlert(error);
      throw this.failure;
    }
    return output.result();
  }

  private unexpectedAt(level: EncryptionLevel): TlsAlert {
    return new TlsAlert(ALERT.unexpectedMessage, `handshake data at the ${level} level, expected ${this.expectedLevel() ?? 'none'}`);
  }
}

export function unexpectedMessage(type: number, state: string): TlsAlert {
  return new TlsAlert(ALERT.unexpectedMessage, `handshake message ${type} while ${state}`);
}
