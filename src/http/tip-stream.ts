/**
 * `/api/v1/bundles/tip_stream`, Jito's tip stream: a WebSocket that pushes the tip floor
 * (tip-floor-route.ts's answer, the same one-entry JSON array) as it changes. Upgrades reach it
 * through the subscription server (subscriptions.ts), after the same checks as every WebSocket
 * (subscription-upgrade.ts: admission, a key); opening one counts a read against the key.
 *
 * - On opening, the current entry is sent at once (nothing while none is known); then, once
 *   per PUSH_MS while any stream is open, the entry is read again and pushed to each stream
 *   whose last message differs (a landing changes it; so does a new minute).
 * - Bounded: MAX_STREAMS_PER_KEY per key and MAX_STREAMS in all (refused at the handshake
 *   with 429 or 503, saying so); a client's message of any kind closes its stream (1008: the
 *   stream takes none), a message over MAX_MESSAGE_BYTES is closed by the ws library (1009);
 *   a stream that does not read what it is sent, or answer pings, is cut; a revoked key's
 *   streams are closed within a push.
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import type { TipFloorReader } from '../advice/tip-floor-reader';
import type { Authenticator } from '../auth/authenticator';
import type { KeyLimits } from '../limits/key-limits';
import { CLOSE } from './subscription-socket';
import { rejectUpgrade, type UpgradeKey } from './subscription-upgrade';

/** Streams one key may hold open at once (on this gateway). */
export const MAX_STREAMS_PER_KEY = 4;
/** Streams the gateway holds open at once. */
export const MAX_STREAMS = 10_000;
/** Any message closes the stream; this bounds what the ws library reads first. */
const MAX_MESSAGE_BYTES = 1024;
/** At most one push a second (and one read of the tip floor). */
const PUSH_MS = 1_000;
/** A stream with more than this waiting to be sent does not read: it is cut. */
const MAX_BUFFERED_BYTES = 64 * 1024;

export interface TipStreamOptions {
  readonly tipFloor: TipFloorReader;
  readonly authenticator: Authenticator;
  readonly keyLimits: Pick<KeyLimits, 'reads'>;
  /** Pings go out this often; a stream that has not answered the previous one is cut. */
  readonly pingMs: number;
  readonly logError: (error: unknown, what: string) => void;
}

interface Peer {
  readonly presentedKey: string;
  readonly keyId: string;
  awaitingPong: boolean;
  lastPingAt: number;
  /** The last message it was sent (JSON), so that an unchanged entry is not sent again. */
  last: string | undefined;
}

export class TipStream {
  private readonly wss = new WebSocketServer({ noServer: true, maxPayload: MAX_MESSAGE_BYTES });
  private readonly peers = new Map<WebSocket, Peer>();
  /** Streams open, and being opened (their read being counted), per key id. */
  private readonly perKey = new Map<string, number>();
  private readonly opening = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;
  private pushing = false;

  constructor(private readonly options: TipStreamOptions) {}

  /** Open streams, for tests. */
  get size(): number {
    return this.peers.size;
  }

  /** A checked upgrade (subscription-upgrade.ts) asking for the stream. */
  upgrade(request: IncomingMessage, socket: Duplex, head: Buffer, key: UpgradeKey): void {
    const held = count(this.perKey, key.keyId) + count(this.opening, key.keyId);
    if (held >= MAX_STREAMS_PER_KEY)
      return void rejectUpgrade(socket, 429, `API key ${key.keyId} has ${held} tip streams open, the most one key may: close one first`);
    let opening = 0;
    for (const n of this.opening.values()) opening += n;
    if (this.peers.size + opening >= MAX_STREAMS)
      return void rejectUpgrade(socket, 503, 'the gateway holds as many tip streams as it serves: try again later');
    add(this.opening, key.keyId, 1);
    void this.open(request, socket, head, key).finally(() => add(this.opening, key.keyId, -1));
  }

  async close(): Promise<void> {
    this.stopPushing();
    for (const socket of this.peers.keys()) socket.close(CLOSE.goingAway, 'Slipway is shutting down');
    for (const socket of this.wss.clients) socket.terminate();
    await new Promise<void>((resolve) => this.wss.close(() => resolve()));
  }

  /** Counts the read, then completes the handshake; a refusal is answered and the socket closed. */
  private async open(request: IncomingMessage, socket: Duplex, head: Buffer, key: UpgradeKey): Promise<void> {
    try {
      const record = this.options.authenticator.authenticate(key.presentedKey);
      if (record === null) return void rejectUpgrade(socket, 401, 'invalid API key: it is unknown or has been revoked');
      const charged = await this.options.keyLimits.reads(record, 1);
      if (!charged.ok) return void rejectUpgrade(socket, charged.error.kind === 'RATE_LIMITED' ? 429 : 503, charged.error);
      this.wss.handleUpgrade(request, socket, head, (ws) => this.accept(ws, key));
    } catch (error) {
      this.options.logError(error, 'opening a tip stream');
      rejectUpgrade(socket, 500, 'Internal error: the stream could not be opened');
    }
  }

  private accept(socket: WebSocket, key: UpgradeKey): void {
    const peer: Peer = { presentedKey: key.presentedKey, keyId: key.keyId, awaitingPong: false, lastPingAt: Date.now(), last: undefined };
    this.peers.set(socket, peer);
    add(this.perKey, key.keyId, 1);
    socket.on('error', () => socket.terminate());
    socket.on('pong', () => {
      peer.awaitingPong = false;
    });
    socket.on('message', () => socket.close(CLOSE.policy, 'the tip stream takes no messages: it only sends'));
    socket.on('close', () => {
      if (this.peers.delete(socket)) add(this.perKey, key.keyId, -1);
      if (this.peers.size === 0) this.stopPushing();
    });
    this.options.tipFloor.current(Date.now()).then(
      (entry) => {
        if (entry !== null && peer.last === undefined) send(socket, peer, JSON.stringify([entry]));
      },
      (error: unknown) => this.options.logError(error, 'reading the tip floor'),
    );
    this.timer ??= setInterval(() => void this.push(), PUSH_MS).unref();
  }

  private stopPushing(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** One round: streams whose key went, or that do not read or answer, are closed; a changed entry goes to the rest. */
  private async push(): Promise<void> {
    if (this.pushing) return;
    this.pushing = true;
    try {
      this.keepHouse(Date.now());
      const entry = await this.options.tipFloor.current(Date.now());
      if (entry === null) return;
      const message = JSON.stringify([entry]);
      for (const [socket, peer] of this.peers) if (peer.last !== message) send(socket, peer, message);
    } catch (error) {
      this.options.logError(error, 'pushing the tip floor');
    } finally {
      this.pushing = false;
    }
  }

  private keepHouse(now: number): void {
    const { authenticator, pingMs } = this.options;
    for (const [socket, peer] of this.peers) {
      if (authenticator.authenticate(peer.presentedKey) === null) {
        socket.close(
          CLOSE.policy,
          authenticator.unavailable() === null ? 'the API key has been revoked' : 'the key store cannot be read: no key is accepted',
        );
      } else if (socket.bufferedAmount > MAX_BUFFERED_BYTES) {
        socket.terminate();
      } else if (now - peer.lastPingAt >= pingMs) {
        if (peer.awaitingPong) socket.terminate();
        else {
          peer.awaitingPong = true;
          peer.lastPingAt = now;
          socket.ping();
        }
      }
    }
  }
}

function send(socket: WebSocket, peer: Peer, message: string): void {
  if (socket.readyState !== socket.OPEN) return;
  peer.last = message;
  socket.send(message);
}

const count = (counts: ReadonlyMap<string, number>, keyId: string): number => counts.get(keyId) ?? 0;

function add(counts: Map<string, number>, keyId: string, n: number): void {
  const next = count(counts, keyId) + n;
  if (next <= 0) counts.delete(keyId);
  else counts.set(keyId, next);
}
