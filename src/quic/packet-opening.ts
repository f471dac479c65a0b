/**
 * One protected packet opened (RFC 9001 §5): header protection removed, the full packet
 * number recovered from the largest received in its space, the payload decrypted with the
 * space's keys (for 1-RTT, with those its key phase bit names), and the reserved bits
 * checked once it authenticated. Its own file so that the connection's receive path reads as
 * its steps: which packets are ours, open, process the frames.
 */
import type { KeyPhases } from './key-phases';
import { decodePacketNumber, unprotectHeader } from './packet-protection';
import type { PacketSpace } from './packet-space';
import { QuicError, TRANSPORT_ERROR } from './wire';

export interface OpenedPacket {
  readonly packetNumber: number;
  readonly payload: Buffer;
}

/**
 * Opens `parsed`, a packet of `space`; null when it cannot be (no keys, or it does not
 * authenticate), to be dropped. Throws a PROTOCOL_VIOLATION for reserved bits set.
 */
export function openPacket(
  space: PacketSpace,
  parsed: { readonly packet: Buffer; readonly pnOffset: number },
  keyPhases: KeyPhases,
  handshakeConfirmed: boolean,
): OpenedPacket | null {
  if (space.discarded || space.recvKeys === null) return null;
  const unprotected = unprotectHeader(space.recvKeys, parsed.packet, parsed.pnOffset);
  if (unprotected === null) return null;
  const packetNumber = decodePacketNumber(space.acks.largest, unprotected.truncated, unprotected.pnLength);
  const sealed = parsed.packet.subarray(unprotected.header.length);
  const oneRtt = space.name === 'application';
  const payload = oneRtt
    ? keyPhases.open(unprotected.header, sealed, packetNumber, handshakeConfirmed)
    : space.recvKeys.open(unprotected.header, sealed, packetNumber);
  if (payload === null) return null;
  // Reserved bits must be zero once the packet authenticated (RFC 9000 §17.2, §17.3.1).
  if ((unprotected.header[0]! & (oneRtt ? 0x18 : 0x0c)) !== 0)
    throw new QuicError(TRANSPORT_ERROR.PROTOCOL_VIOLATION, 'reserved header bits set');
  return { packetNumber, payload };
}
