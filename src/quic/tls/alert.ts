/**
 * TLS alerts (RFC 8446 §6): the one error the handshake throws. A peer's bytes that break
 * the protocol end the connection with one of these numbers; the QUIC layer sends it as the
 * CRYPTO_ERROR 0x0100 + alert (RFC 9001 §4.8), so every failure must carry its number.
 */

/** The alert descriptions this handshake raises (RFC 8446 §6.2), by name. */
export const ALERT = {
  unexpectedMessage: 10,
  handshakeFailure: 40,
  badCertificate: 42,
  illegalParameter: 47,
  decodeError: 50,
  decryptError: 51,
  protocolVersion: 70,
  internalError: 80,
  missingExtension: 109,
  unsupportedExtension: 110,
  certificateRequired: 116,
  noApplicationProtocol: 120,
} as const;

export type AlertDescription = (typeof ALERT)[keyof typeof ALERT];

const NAMES = new Map<number, string>(Object.entries(ALERT).map(([name, value]) => [value, name]));

/** A fatal TLS alert: `alert` is the number sent to the peer; the message says why, for logs. */
export class TlsAlert extends Error {
  override readonly name = 'TlsAlert';

  constructor(
    readonly alert: AlertDescription,
    reason: string,
    options?: { cause?: unknown },
  ) {
    super(`${NAMES.get(alert) ?? 'alert'} (${alert}): ${reason}`, options);
  }
}

/** Any error as a TlsAlert: a bug met while handling a peer's bytes becomes internal_error, not a crash. */
export function asTlsAlert(error: unknown): TlsAlert {
  if (error instanceof TlsAlert) return error;
  return new TlsAlert(ALERT.internalError, error instanceof Error ? error.message : String(error), { cause: error });
}
