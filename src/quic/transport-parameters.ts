/**
 * QUIC transport parameters (RFC 9000 §18), carried in TLS's quic_transport_parameters
 * extension: encoded for our side, decoded and checked for the peer's (defaults filled in,
 * limits enforced, connection IDs to be compared with what the packets said, §7.3).
 */
import { QuicError, Reader, TRANSPORT_ERROR, encodeVarint } from './wire';

export interface TransportParameters {
  readonly originalDestinationConnectionId?: Buffer;
  /** Milliseconds; 0 means none. */
  readonly maxIdleTimeout: number;
  readonly statelessResetToken?: Buffer;
  readonly maxUdpPayloadSize: number;
  readonly initialMaxData: number;
  readonly initialMaxStreamDataBidiLocal: number;
  readonly initialMaxStreamDataBidiRemote: number;
  readonly initialMaxStreamDataUni: number;
  readonly initialMaxStreamsBidi: number;
  readonly initialMaxStreamsUni: number;
  readonly ackDelayExponent: number;
  /** Milliseconds. */
  readonly maxAckDelay: number;
  readonly disableActiveMigration: boolean;
  readonly activeConnectionIdLimit: number;
  readonly initialSourceConnectionId?: Buffer;
  readonly retrySourceConnectionId?: Buffer;
}

export const DEFAULT_TRANSPORT_PARAMETERS: TransportParameters = {
  maxIdleTimeout: 0,
  maxUdpPayloadSize: 65_527,
  initialMaxData: 0,
  initialMaxStreamDataBidiLocal: 0,
  initialMaxStreamDataBidiRemote: 0,
  initialMaxStreamDataUni: 0,
  initialMaxStreamsBidi: 0,
  initialMaxStreamsUni: 0,
  ackDelayExponent: 3,
  maxAckDelay: 25,
  disableActiveMigration: false,
  activeConnectionIdLimit: 2,
};

const ID = {
  originalDestinationConnectionId: 0x00,
  maxIdleTimeout: 0x01,
  statelessResetToken: 0x02,
  maxUdpPayloadSize: 0x03,
  initialMaxData: 0x04,
  initialMaxStreamDataBidiLocal: 0x05,
  initialMaxStreamDataBidiRemote: 0x06,
  initialMaxStreamDataUni: 0x07,
  initialMaxStreamsBidi: 0x08,
  initialMaxStreamsUni: 0x09,
  ackDelayExponent: 0x0a,
  maxAckDelay: 0x0b,
  disableActiveMigration: 0x0c,
  preferredAddress: 0x0d,
  activeConnectionIdLimit: 0x0e,
  initialSourceConnectionId: 0x0f,
  retrySourceConnectionId: 0x10,
} as const;

const NUMERIC = [
  'maxIdleTimeout',
  'maxUdpPayloadSize',
  'initialMaxData',
  'initialMaxStreamDataBidiLocal',
  'initialMaxStreamDataBidiRemote',
  'initialMaxStreamDataUni',
  'initialMaxStreamsBidi',
  'initialMaxStreamsUni',
  'ackDelayExponent',
  'maxAckDelay',
  'activeConnectionIdLimit',
] as const;
const BYTES = ['originalDestinationConnectionId', 'statelessResetToken', 'initialSourceConnectionId', 'retrySourceConnectionId'] as const;

export function encodeTransportParameters(parameters: Partial<TransportParameters>): Buffer {
  const parts: Buffer[] = [];
  const put = (id: number, value: Buffer) => parts.push(encodeVarint(id), encodeVarint(value.length), value);
  for (const name of NUMERIC) {
    const value = parameters[name];
    if (value !== undefined && value !== DEFAULT_TRANSPORT_PARAMETERS[name]) put(ID[name], encodeVarint(value));
  }
  for (const name of BYTES) {
    const value = parameters[name];
    if (value !== undefined) put(ID[name], value);
  }
  if (parameters.disableActiveMigration === true) put(ID.disableActiveMigration, Buffer.alloc(0));
  return Buffer.concat(parts);
}

/** The peer's parameters; `fromServer` says which side sent them (a client may not send the server's). */
export function decodeTransportParameters(encoded: Buffer, fromServer: boolean): TransportParameters {
  const fail = (message: string) => new QuicError(TRANSPORT_ERROR.TRANSPORT_PARAMETER_ERROR, message);
  const reader = new Reader(encoded, 0, encoded.length, TRANSPORT_ERROR.TRANSPORT_PARAMETER_ERROR);
  const result: Record<string, unknown> = { ...DEFAULT_TRANSPORT_PARAMETERS };
  const seen = new Set<number>();
  while (reader.remaining > 0) {
    const id = reader.varint('transport parameter id');
    const value = reader.bytes(reader.varint('transport parameter length'), 'transport parameter value');
    if (seen.has(id)) throw fail(`transport parameter 0x${id.toString(16)} appears twice`);
    seen.add(id);
    const name = (Object.keys(ID) as (keyof typeof ID)[]).find((key) => ID[key] === id);
    if (name === undefined) continue; // Unknown parameters are ignored (§18.1), greased ones included.
    if (
      !fromServer &&
      (name === 'originalDestinationConnectionId' ||
        name === 'statelessResetToken' ||
        name === 'preferredAddress' ||
        name === 'retrySourceConnectionId')
    )
      throw fail(`a client may not send ${name}`);
    if ((NUMERIC as readonly string[]).includes(name)) {
      const inner = new Reader(value, 0, value.length, TRANSPORT_ERROR.TRANSPORT_PARAMETER_ERROR);
      result[name] = inner.varint(name);
      if (inner.remaining !== 0) throw fail(`${name} has bytes after its value`);
    } else if (name === 'disableActiveMigration') {
      if (value.length !== 0) throw fail('disable_active_migration has a value');
      result[name] = true;
    } else if (name === 'preferredAddress') {
      continue; // Migration is not used: a preferred address is not taken.
    } else {
      if (value.length > 20 && name !== 'statelessResetToken') throw fail(`${name} is longer than 20 bytes`);
      if (name === 'statelessResetToken' && value.length !== 16) throw fail('stateless_reset_token is not 16 bytes');
      result[name] = Buffer.from(value);
    }
  }
  const parameters = result as unknown as TransportParameters;
  if (parameters.maxUdpPayloadSize < 1200) throw fail('max_udp_payload_size below 1200');
  if (parameters.ackDelayExponent > 20) throw fail('ack_delay_exponent above 20');
  if (parameters.maxAckDelay >= 2 ** 14) throw fail('max_ack_delay of 2^14 ms or more');
  if (parameters.activeConnectionIdLimit < 2) throw fail('active_connection_id_limit below 2');
  if (parameters.initialMaxStreamsBidi > 2 ** 60 || parameters.initialMaxStreamsUni > 2 ** 60) throw fail('initial_max_streams above 2^60');
  return parameters;
}
