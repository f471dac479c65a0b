/**
 * One datagram out: a packet per packet number space that has something to send (Initial,
 * Handshake, then 1-RTT, coalesced as RFC 9000 §12.2 allows), each filled in order of
 * need — ACK, control frames, CRYPTO, stream data (lost ranges before new), a PING when a
 * probe or keep-alive is owed — within the congestion window, then sealed. A datagram that
 * carries an Initial packet is padded to 1,200 bytes (RFC 9000 §14.1).
 */
import { ackLength, cryptoOverhead, writeAck, writeConnectionClose, writeCrypto, writeStream } from './frames';
import { packetNumberLength, TAG_LENGTH } from './packet-protection';
import { longHeader, shortHeader } from './packets';
import type { PacketSpace } from './packet-space';
import { SPACES, type NewReno, type SentItem, type SentPacket, type SpaceName } from './recovery';
import type { UniStreams } from './send-streams';
import { varintLength } from './wire';

export interface AssemblyContext {
  readonly now: number;
  readonly spaces: Record<SpaceName, PacketSpace>;
  readonly dcid: Buffer;
  readonly scid: Buffer;
  readonly token: Buffer;
  readonly keyPhase: 0 | 1;
  readonly maxDatagram: number;
  /** The size a datagram with an Initial packet is padded to (RFC 9000 §14.1). */
  readonly padInitial: number;
  /** A server pads only datagrams whose Initial packet is ack-eliciting (padding an ACK would spend its amplification allowance). */
  readonly padOnlyAckEliciting?: boolean;
  readonly congestion: NewReno;
  readonly streams: UniStreams<unknown> | undefined;
  /** Encoded control frames owed in the application space; taken from the front as they fit. */
  readonly controls: Buffer[];
  readonly ackDelayExponent: number;
  /** A keep-alive PING is owed. */
  readonly ping: boolean;
  /** Set while closing: the CONNECTION_CLOSE to send in every space with keys, and nothing else. */
  readonly close: { application: boolean; code: number; frameType: number; reason: string } | undefined;
}

export interface Assembled {
  readonly datagram: Buffer;
  readonly packets: { readonly space: SpaceName; readonly sent: SentPacket }[];
}

interface Draft {
  readonly space: PacketSpace;
  payload: Buffer;
  readonly items: SentItem[];
  readonly ackEliciting: boolean;
  readonly pnLength: 1 | 2 | 3 | 4;
  headerLength: number;
}

/** Bytes a STREAM frame's header may take: type, a stream ID below 2^30, an offset and a length below 2^14. */
const STREAM_HEADER_MAX = 1 + 4 + 2 + 2;

export function assemble(context: AssemblyContext): Assembled | null {
  const drafts: Draft[] = [];
  let budget = context.maxDatagram;
  for (const name of SPACES) {
    const space = context.spaces[name];
    if (space.discarded || space.sendKeys === null) continue;
    const pnLength = packetNumberLength(space.nextPacketNumber, space.sent.largestAcked);
    const headerLength = headerSize(context, name, pnLength);
    const room = budget - headerLength - TAG_LENGTH;
    if (room < MIN_ROOM) break;
    const draft = collect(context, space, room, pnLength, headerLength);
    if (draft === null) continue;
    drafts.push(draft);
    budget -= headerLength + draft.payload.length + TAG_LENGTH;
  }
  if (drafts.length === 0) return null;
  const padded = drafts.some((draft) => draft.space.name === 'initial' && (context.padOnlyAckEliciting !== true || draft.ackEliciting));
  if (padded && budget > context.maxDatagram - context.padInitial) {
    // The padding goes into the last packet (PADDING frames are zero bytes); its length field grows with it.
    const last = drafts[drafts.length - 1]!;
    const missing = budget - (context.maxDatagram - context.padInitial);
    last.payload = Buffer.concat([last.payload, Buffer.alloc(missing)]);
    const grown = headerSize(context, last.space.name, last.pnLength, last.payload.length + last.pnLength + TAG_LENGTH);
    if (grown > last.headerLength) last.payload = last.payload.subarray(0, last.payload.length - (grown - last.headerLength));
  }
  const packets: { space: SpaceName; sent: SentPacket }[] = [];
  const sealed: Buffer[] = [];
  for (const draft of drafts) {
    const space = draft.space;
    // Header protection samples 16 bytes from 4 after the packet number: short payloads are padded to allow it.
    if (draft.payload.length + draft.pnLength < 4)
      draft.payload = Buffer.concat([draft.payload, Buffer.alloc(4 - draft.pnLength - draft.payload.length)]);
    const packetNumber = space.nextPacketNumber++;
    const { header, pnOffset } =
      space.name === 'application'
        ? shortHeader(context.dcid, packetNumber, draft.pnLength, context.keyPhase)
        : longHeader({
            type: space.name,
            dcid: context.dcid,
            scid: context.scid,
            token: context.token,
            packetNumber,
            pnLength: draft.pnLength,
            payloadLength: draft.payload.length + TAG_LENGTH,
          });
    const packet = space.sendKeys!.seal(header, pnOffset, draft.pnLength, packetNumber, draft.payload);
    sealed.push(packet);
    packets.push({
      space: space.name,
      sent: {
        packetNumber,
        timeSent: context.now,
        size: packet.length,
        ackEliciting: draft.ackEliciting,
        inFlight: draft.ackEliciting || padded,
        items: draft.items,
      },
    });
  }
  return { datagram: sealed.length === 1 ? sealed[0]! : Buffer.concat(sealed), packets };
}

/** Below this, a space's packet is not started: a frame or two would not fit. */
const MIN_ROOM = 16;

/**
 * Bytes of CRYPTO data one Initial can carry when its header holds `token` (the packet number
 * at its longest); 0 when the token leaves no room, and no Initial could carry the ClientHello.
 */
export function initialCryptoRoom(dcid: Buffer, scid: Buffer, token: Buffer, maxDatagram: number): number {
  const room = maxDatagram - headerSize({ dcid, scid, token }, 'initial', 4) - TAG_LENGTH;
  if (room < MIN_ROOM) return 0;
  return Math.max(0, room - cryptoOverhead(2 ** 20, room));
}

function headerSize(
  context: Pick<AssemblyContext, 'dcid' | 'scid' | 'token'>,
  name: SpaceName,
  pnLength: number,
  lengthField = 1200,
): number {
  if (name === 'application') return 1 + context.dcid.length + pnLength;
  const token = name === 'initial' ? varintLength(context.token.length) + context.token.length : 0;
  return 1 + 4 + 1 + context.dcid.length + 1 + context.scid.length + token + Math.max(2, varintLength(lengthField)) + pnLength;
}

function collect(context: AssemblyContext, space: PacketSpace, room: number, pnLength: 1 | 2 | 3 | 4, headerLength: number): Draft | null {
  const buffer = Buffer.allocUnsafe(room);
  let at = 0;
  const items: SentItem[] = [];
  let eliciting = false;
  const application = space.name === 'application';
  if (context.close !== undefined) {
    const close = application
      ? context.close
      : { ...context.close, application: false, code: context.close.application ? 0x0c : context.close.code };
    at = writeConnectionClose(buffer, at, close.application, close.code, close.frameType, close.reason);
    return { space, payload: buffer.subarray(0, at), items, ackEliciting: false, pnLength, headerLength };
  }
  const probing = space.probes > 0;
  const congested = !probing && !context.congestion.canSend(context.maxDatagram);
  const streams = application ? context.streams : undefined;
  const wantsData =
    !congested &&
    (space.cryptoOut.hasData() ||
      probing ||
      (application && (context.controls.length > 0 || context.ping || (streams?.hasData() ?? false))));
  const ackDue = space.acks.deadline() <= context.now;
  if (space.acks.wantsAck() && (ackDue || wantsData)) {
    const taken = space.acks.take(context.now);
    if (taken !== null) {
      const delay = Math.floor((taken.delayMs * 1000) / 2 ** context.ackDelayExponent);
      // An ACK too large for the room keeps only its newest ranges.
      let ranges = taken.ranges;
      while (ranges.length > 1 && ackLength(ranges, delay) > room) ranges = ranges.slice(0, ranges.length - 1);
      if (ackLength(ranges, delay) <= room) {
        at = writeAck(buffer, at, ranges, delay);
        items.push({ kind: 'ack', largest: ranges[0]!.largest });
      }
    }
  }
  if (wantsData) {
    if (application) {
      while (context.controls.length > 0 && context.controls[0]!.length <= room - at) {
        const frame = context.controls.shift()!;
        at += frame.copy(buffer, at);
        items.push({ kind: 'control', frame });
        eliciting = true;
      }
    }
    for (;;) {
      const piece = space.cryptoOut.next(room - at - cryptoOverhead(2 ** 20, room));
      if (piece === null) break;
      at = writeCrypto(buffer, at, piece.offset, piece.data);
      items.push({ kind: 'crypto', offset: piece.offset, length: piece.data.length });
      eliciting = true;
    }
    if (streams !== undefined) {
      for (;;) {
        const piece = streams.next(room - at - STREAM_HEADER_MAX);
        if (piece === null) break;
        at = writeStream(buffer, at, piece.streamId, piece.offset, piece.data, piece.fin);
        items.push({ kind: 'stream', streamId: piece.streamId, offset: piece.offset, length: piece.data.length, fin: piece.fin });
        eliciting = true;
      }
    }
    if (!eliciting && (probing || (application && context.ping)) && at < room) {
      buffer[at++] = 0x01;
      items.push({ kind: 'ping' });
      eliciting = true;
    }
  }
  if (probing && eliciting) space.probes--;
  if (at === 0) return null;
  return { space, payload: buffer.subarray(0, at), items, ackEliciting: eliciting, pnLength, headerLength };
}
