/**
 * A "malicious peer" toolkit for the QUIC attack tests: a client and a server connection
 * driven in memory (no sockets) through a real handshake, so that a test may then play
 * either side with the other's keys and send it whatever packets it likes; and builders for
 * the frames and packets such a peer sends. Nothing here is clever: it uses the packet and
 * frame writers of src/quic, as any implementation's peer would.
 */
import { randomBytes } from 'node:crypto';
import { QuicClientConnection } from '../../src/quic/client-connection';
import type { ConnectionEvent } from '../../src/quic/connection';
import { initialSecrets, PacketKeys } from '../../src/quic/packet-protection';
import { longHeader, shortHeader, splitDatagram } from '../../src/quic/packets';
import { QuicServerConnection } from '../../src/quic/server-connection';
import { clientTls, generateIdentity, serverTls, type TlsIdentity } from '../../src/quic/tpu-handshakes';
import { encodeVarint } from '../../src/quic/wire';

// ---- frames ----

export const frames = {
  padding: (length: number) => Buffer.alloc(length),
  ping: () => Buffer.of(0x01),
  /** An ACK of `ranges` (largest first, descending, disjoint), delay 0. */
  ack(ranges: readonly { smallest: number; largest: number }[], delay = 0): Buffer {
    const parts = [encodeVarint(0x02), encodeVarint(ranges[0]!.largest), encodeVarint(delay), encodeVarint(ranges.length - 1)];
    parts.push(encodeVarint(ranges[0]!.largest - ranges[0]!.smallest));
    let smallest = ranges[0]!.smallest;
    for (const range of ranges.slice(1)) {
      parts.push(encodeVarint(smallest - range.largest - 2), encodeVarint(range.largest - range.smallest));
      smallest = range.smallest;
    }
    return Buffer.concat(parts);
  },
  crypto: (offset: number, data: Buffer) => Buffer.concat([encodeVarint(0x06), encodeVarint(offset), encodeVarint(data.length), data]),
  stream: (streamId: number, offset: number, data: Buffer, fin: boolean) =>
    Buffer.concat([encodeVarint(0x0e | (fin ? 1 : 0)), encodeVarint(streamId), encodeVarint(offset), encodeVarint(data.length), data]),
  resetStream: (streamId: number, code: number, finalSize: number) =>
    Buffer.concat([encodeVarint(0x04), encodeVarint(streamId), encodeVarint(code), encodeVarint(finalSize)]),
  stopSending: (streamId: number, code: number) => Buffer.concat([encodeVarint(0x05), encodeVarint(streamId), encodeVarint(code)]),
  maxData: (maximum: number) => Buffer.concat([encodeVarint(0x10), encodeVarint(maximum)]),
  maxStreamsUni: (maximum: number) => Buffer.concat([encodeVarint(0x13), encodeVarint(maximum)]),
  newConnectionId: (sequence: number, retirePriorTo: number, cid: Buffer, token: Buffer) =>
    Buffer.concat([encodeVarint(0x18), encodeVarint(sequence), encodeVarint(retirePriorTo), Buffer.of(cid.length), cid, token]),
  retireConnectionId: (sequence: number) => Buffer.concat([encodeVarint(0x19), encodeVarint(sequence)]),
  pathChallenge: (data: Buffer) => Buffer.concat([Buffer.of(0x1a), data]),
  newToken: (token: Buffer) => Buffer.concat([encodeVarint(0x07), encodeVarint(token.length), token]),
  handshakeDone: () => Buffer.of(0x1e),
  connectionClose: (code: number, reason = '') =>
    Buffer.concat([encodeVarint(0x1c), encodeVarint(code), encodeVarint(0), encodeVarint(Buffer.byteLength(reason)), Buffer.from(reason)]),
};

// ---- packets ----

/** A 1-RTT packet sealed with `keys` (4-byte packet number), addressed to `dcid`. */
export function sealShort(keys: PacketKeys, dcid: Buffer, packetNumber: number, payload: Buffer, keyPhase: 0 | 1 = 0): Buffer {
  const body = payload.length < 4 ? Buffer.concat([payload, Buffer.alloc(4 - payload.length)]) : payload;
  const { header, pnOffset } = shortHeader(dcid, packetNumber, 4, keyPhase);
  return keys.seal(header, pnOffset, 4, packetNumber, body);
}

/** An Initial or Handshake packet sealed with `keys`; an Initial is padded (in its payload) so that the packet is `padTo` bytes. */
export function sealLong(options: {
  readonly type: 'initial' | 'handshake';
  readonly keys: PacketKeys;
  readonly dcid: Buffer;
  readonly scid: Buffer;
  readonly token?: Buffer;
  readonly packetNumber: number;
  readonly payload: Buffer;
  readonly padTo?: number;
}): Buffer {
  let payload = options.payload.length < 4 ? Buffer.concat([options.payload, Buffer.alloc(4 - options.payload.length)]) : options.payload;
  const build = () =>
    longHeader({
      type: options.type,
      dcid: options.dcid,
      scid: options.scid,
      token: options.token,
      packetNumber: options.packetNumber,
      pnLength: 4,
      payloadLength: payload.length + 16,
    });
  let { header } = build();
  if (options.padTo !== undefined && header.length + payload.length + 16 < options.padTo) {
    payload = Buffer.concat([payload, Buffer.alloc(options.padTo - header.length - payload.length - 16)]);
    header = build().header;
  }
  const { pnOffset } = build();
  return options.keys.seal(header, pnOffset, 4, options.packetNumber, payload);
}

/** The keys a client's first Initial is sealed with (both directions), from the destination ID it chose. */
export function initialKeys(clientDcid: Buffer): { client: PacketKeys; server: PacketKeys } {
  const secrets = initialSecrets(clientDcid);
  return { client: new PacketKeys(secrets.client), server: new PacketKeys(secrets.server) };
}

// ---- a client and a server in memory ----

export interface Pair {
  readonly client: QuicClientConnection<number>;
  readonly server: QuicServerConnection;
  readonly clientEvents: ConnectionEvent<number>[];
  readonly serverEvents: ConnectionEvent<never>[];
  readonly clock: { now: number };
  /** Datagrams both ways until neither has anything to send (`toServer`/`toClient: false` drops that direction). */
  pump(options?: { toServer?: boolean; toClient?: boolean; rounds?: number }): void;
  /** Collects both sides' events into the arrays above. */
  collect(): void;
  /** What the client's 1-RTT packets to the server are sealed with, and what the server's are. */
  clientKeys(): PacketKeys;
  serverKeys(): PacketKeys;
  /**
   * A 1-RTT packet of `payload` as the server (or client) would send it: its keys, key phase
   * and next packet number (taken from it, so that its own packets still decode after).
   */
  sealFromServer(payload: Buffer): Buffer;
  sealFromClient(payload: Buffer): Buffer;
  /** The same, delivered to the other side at once (and events collected). */
  fromServer(payload: Buffer): void;
  fromClient(payload: Buffer): void;
}

export function connectedPair(
  options: {
    clientIdentity?: TlsIdentity;
    streamWindow?: number;
    maxStreamBytes?: number;
    keepAliveMs?: number;
    idleTimeoutMs?: number;
  } = {},
): Pair {
  const clock = { now: 1_000 };
  const client = new QuicClientConnection<number>({
    now: clock.now,
    tls: clientTls(options.clientIdentity ?? generateIdentity()),
    idleTimeoutMs: options.idleTimeoutMs ?? 30_000,
    keepAliveMs: options.keepAliveMs,
  });
  const first = client.poll(clock.now)!;
  const [initial] = splitDatagram(first, 8);
  if (initial === undefined || initial.type !== 'initial') throw new Error('the client sent no Initial');
  const server = new QuicServerConnection({
    now: clock.now,
    clientDcid: Buffer.from(initial.dcid),
    clientScid: Buffer.from(initial.scid),
    originalDcid: Buffer.from(initial.dcid),
    scid: randomBytes(8),
    statelessResetToken: randomBytes(16),
    addressValidated: false,
    tls: serverTls(generateIdentity()),
    maxStreamBytes: options.maxStreamBytes ?? 1232,
    streamWindow: () => options.streamWindow ?? 128,
    idleTimeoutMs: options.idleTimeoutMs ?? 30_000,
  });
  server.receive(first, clock.now);
  const clientEvents: ConnectionEvent<number>[] = [];
  const serverEvents: ConnectionEvent<never>[] = [];
  const collect = () => {
    clientEvents.push(...client.takeEvents());
    serverEvents.push(...server.takeEvents());
  };
  const pump: Pair['pump'] = ({ toServer = true, toClient = true, rounds = 50 } = {}) => {
    let quiet = 0;
    for (let round = 0; round < rounds; round++) {
      let moved = false;
      for (let datagram = server.poll(clock.now); datagram !== null; datagram = server.poll(clock.now)) {
        moved = true;
        if (toClient) client.receive(datagram, clock.now);
      }
      for (let datagram = client.poll(clock.now); datagram !== null; datagram = client.poll(clock.now)) {
        moved = true;
        if (toServer) server.receive(datagram, clock.now);
      }
      collect();
      if (moved) quiet = 0;
      else if (++quiet > 2) return;
      // Lets delayed ACKs fall due.
      else clock.now += 30;
    }
  };
  const pair: Pair = {
    client,
    server,
    clientEvents,
    serverEvents,
    clock,
    pump,
    collect,
    clientKeys: () => client.spaces.application.sendKeys!,
    serverKeys: () => server.spaces.application.sendKeys!,
    sealFromServer: (payload) =>
      sealShort(
        server.spaces.application.sendKeys!,
        client.scid,
        server.spaces.application.nextPacketNumber++,
        payload,
        (server as unknown as { keyPhases: { phase: 0 | 1 } }).keyPhases.phase,
      ),
    sealFromClient: (payload) =>
      sealShort(
        client.spaces.application.sendKeys!,
        server.scid,
        client.spaces.application.nextPacketNumber++,
        payload,
        (client as unknown as { keyPhases: { phase: 0 | 1 } }).keyPhases.phase,
      ),
    fromServer: (payload) => {
      client.receive(pair.sealFromServer(payload), clock.now);
      collect();
    },
    fromClient: (payload) => {
      server.receive(pair.sealFromClient(payload), clock.now);
      collect();
    },
  };
  pump();
  if (client.state !== 'established' || server.state !== 'established') throw new Error(`no handshake: ${client.state}/${server.state}`);
  return pair;
}

/** A packet number far above what either side of a fresh pair has used (so a crafted packet is never a duplicate). */
export function packetNumbers(start = 10_000): () => number {
  let next = start;
  return () => next++;
}

/** A client that has sent its first Initial and heard nothing yet: what a hostile server (or an on-path attacker) sees. */
export function freshClient(options: { keepAliveMs?: number } = {}) {
  const clock = { now: 1_000 };
  const client = new QuicClientConnection<number>({ now: clock.now, tls: clientTls(generateIdentity()), ...options });
  const first = client.poll(clock.now)!;
  const [initial] = splitDatagram(first, 8);
  if (initial === undefined || initial.type !== 'initial') throw new Error('the client sent no Initial');
  const events: ConnectionEvent<number>[] = [];
  return {
    client,
    clock,
    first,
    /** The client's first destination ID (Initial keys derive from it) and its own ID. */
    originalDcid: Buffer.from(initial.dcid),
    clientScid: Buffer.from(initial.scid),
    events,
    collect: () => events.push(...client.takeEvents()),
  };
}

/** The close event among `events`, if any. */
export function closeOf<T>(events: readonly ConnectionEvent<T>[]): Extract<ConnectionEvent<T>, { type: 'closed' }> | undefined {
  return events.find((event) => event.type === 'closed') as Extract<ConnectionEvent<T>, { type: 'closed' }> | undefined;
}
