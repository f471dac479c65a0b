/**
 * What every QUIC fuzz target shares: identities, TLS sessions and connection IDs made from
 * the case's generator (so that a seed replays a case byte for byte), the failure a target
 * reports, and the checks every state machine's output must pass.
 */
import { createPrivateKey } from 'node:crypto';
import type { ClientOptions } from '../../../src/quic/client-connection';
import type { ConnectionEvent } from '../../../src/quic/connection';
import { rawEd25519Key } from '../../../src/quic/tls/certificate';
import { TlsClientHandshake, TlsServerHandshake, type TlsIdentity } from '../../../src/quic/tls';
import { TPU_ALPN } from '../../../src/quic/tpu-handshakes';
import type { TlsSession } from '../../../src/quic/tls-session';
import { TRANSPORT_ERROR } from '../../../src/quic/wire';
import type { FuzzRandom } from './fuzz-random';

/** An invariant broken, or an exception out of a state machine: what, and the input that did it. */
export class FuzzFailure extends Error {
  constructor(
    readonly problem: string,
    readonly input: Buffer | undefined,
  ) {
    super(problem);
  }
}

const ED25519_PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');
/** CRYPTO_ERROR for TLS's internal_error: the handshake met a bug, not a peer's mistake. */
const TLS_INTERNAL_ERROR = TRANSPORT_ERROR.CRYPTO_ERROR + 80;

export function identityFrom(random: FuzzRandom): TlsIdentity {
  const privateKey = createPrivateKey({ key: Buffer.concat([ED25519_PKCS8_PREFIX, random.bytes(32)]), format: 'der', type: 'pkcs8' });
  return { privateKey, publicKey: rawEd25519Key(privateKey)! };
}

export function serverTlsFrom(random: FuzzRandom, identity: TlsIdentity): (transportParameters: Buffer) => TlsSession {
  return (transportParameters) =>
    new TlsServerHandshake({
      identity,
      alpn: [TPU_ALPN],
      transportParameters,
      requireClientCertificate: true,
      random: (length) => random.bytes(length),
    });
}

export function clientOptionsFrom(random: FuzzRandom, identity: TlsIdentity): Omit<ClientOptions, 'now'> {
  return {
    random: (length) => random.bytes(length),
    tls: (transportParameters) => {
      const session = new TlsClientHandshake({ identity, alpn: TPU_ALPN, transportParameters, random: (length) => random.bytes(length) });
      return { session, start: session.start() };
    },
  };
}

/** A close must be a peer's fault or ours on purpose: INTERNAL_ERROR, or TLS's internal_error, is a bug caught on the way out. */
export function checkClose(
  side: string,
  by: string | undefined,
  code: number | undefined,
  application: boolean,
  reason: string | undefined,
): void {
  if (by !== 'local' || application || code === undefined) return;
  if (code === TRANSPORT_ERROR.INTERNAL_ERROR || code === TLS_INTERNAL_ERROR)
    throw new FuzzFailure(`the ${side} closed with an internal error (a bug met on a peer's bytes): ${reason}`, undefined);
}

export function checkEvents(side: string, events: readonly ConnectionEvent<unknown>[]): void {
  for (const event of events) if (event.type === 'closed') checkClose(side, event.by, event.code, event.application, event.reason);
}

/** Runs `call` on a state machine; anything it throws is a failure carrying `input`. */
export function guarded<R>(what: string, input: Buffer | undefined, call: () => R): R {
  try {
    return call();
  } catch (error) {
    if (error instanceof FuzzFailure) throw new FuzzFailure(error.problem, error.input ?? input);
    throw new FuzzFailure(`${what} threw: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`, input);
  }
}

/** A deadline must be a number of milliseconds (Infinity: none), never NaN. */
export function checkDeadline(what: string, deadline: number): number {
  if (Number.isNaN(deadline)) throw new FuzzFailure(`${what}.nextTimeout() is NaN`, undefined);
  return deadline;
}
