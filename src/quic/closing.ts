/**
 * Closing a connection (RFC 9000 §10.2): the CONNECTION_CLOSE we owe the peer, in its
 * transport form while there are no 1-RTT keys, sent again when the peer keeps sending, and
 * when the closing or draining state ends; and a protocol error as the CONNECTION_CLOSE that
 * reports it. Its own file so that the connection's receive and send paths only ask it.
 */
import { alertOf } from './tls-session';
import { QuicError, TRANSPORT_ERROR } from './wire';

export interface CloseFrame {
  readonly application: boolean;
  readonly code: number;
  readonly frameType: number;
  readonly reason: string;
}

/** A protocol error as the transport close that reports it: its own code, a TLS alert as CRYPTO_ERROR, else INTERNAL_ERROR. */
export function closeFrameOf(error: unknown): CloseFrame {
  if (error instanceof QuicError) return { application: false, code: error.code, frameType: error.frameType, reason: error.message };
  const alert = alertOf(error);
  const reason = error instanceof Error ? error.message : String(error);
  const code = alert === undefined ? TRANSPORT_ERROR.INTERNAL_ERROR : TRANSPORT_ERROR.CRYPTO_ERROR + alert;
  return { application: false, code, frameType: 0, reason };
}

export class Closing {
  /** When the closing or draining state ends (Infinity: not closing). */
  until = Infinity;
  private frame: CloseFrame | undefined;
  private due = false;

  /** We close with `frame`; `oneRttKeys`: whether we have 1-RTT keys to send it under. */
  start(frame: CloseFrame, oneRttKeys: boolean): void {
    // Before 1-RTT keys the close goes in Initial/Handshake packets, where only the transport form exists (RFC 9000 §10.2.3).
    this.frame = !oneRttKeys && frame.application ? { application: false, code: 0x0c, frameType: 0, reason: frame.reason } : frame;
    this.due = true;
  }

  /** A datagram arrived while closing: the CONNECTION_CLOSE goes out again. */
  received(): void {
    this.due = true;
  }

  /** The CONNECTION_CLOSE to send now, if one is due. */
  take(): CloseFrame | undefined {
    if (!this.due) return undefined;
    this.due = false;
    return this.frame;
  }
}
