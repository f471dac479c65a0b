/**
 * Solana's PubSub over WebSocket, for what confirming a submission needs:
 * `signatureSubscribe` / `signatureUnsubscribe` and `slotSubscribe` / `slotUnsubscribe`,
 * in Solana's message shapes, so that `@solana/web3.js`'s `confirmTransaction` /
 * `sendAndConfirmTransaction` and `@solana/kit`'s send-and-confirm work unchanged.
 *
 * Served on the gateway's port and on port + 1 (where Solana clients look by default), with
 * the same admission on both: connections per client address, shedding and shutdown
 * (admission.ts), and on port + 1 the main port's header and request time-outs.
 * Authenticated like HTTP: `x-api-key` header, or `api-key` in the URL's query (WebSocket
 * clients cannot set headers); a socket whose key is revoked is closed within a second.
 *
 * Every door handles its own failures: a bad upgrade request is answered and its socket
 * closed, a bad frame answered or its connection closed, and nothing a client sends can
 * reach the process's uncaught-exception path. Limits: subscriptions per connection, per key
 * and in total; a socket that does not answer pings, or holds no subscription for the idle
 * time, or reads its notifications too slowly, is closed.
 *
 * One timer polls statuses for every open subscription, up to 256 signatures per request;
 * a batch the upstream refuses is split so that one entry never holds up the others.
 *
 * Subscriptions are reads, and cost the operator's upstream as reads do: a subscribe counts
 * one against the key's reads per second (refused past it, as HTTP reads are), and each
 * round's status requests for a key's signatures count one per 256 signatures (a fraction for
 * fewer: they share a request with others'). A key past its rate has
 * its signatures polled less often (in turn, so none starves), not dropped.
 */
import http, { type IncomingMessage, type Server } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type RawData, type WebSocket } from 'ws';
import type { Authenticator } from '../auth/authenticator';
import { toJsonRpcError, type SlipwayError } from '../errors/error-catalogue';
import type { KeyLimits } from '../limits/key-limits';
import type { Router } from '../pipeline/router';
import type { SignatureStatusView } from '../upstreams/upstream';
import type { Admission } from './admission';
import { COMMITMENT_RANK, isSubscriptionRefusal, parseSubscriptionRequest, type Commitment } from './subscription-requests';

const STATUS_BATCH = 256;
const MAX_MESSAGE_BYTES = 64 * 1024;
/** Housekeeping (revoked keys, idle sockets, pings) runs this often: a revoked key's sockets close within it. */
const HOUSEKEEPING_MS = 500;
/** A socket with more than this waiting to be sent is not reading its notifications: it is closed. */
const MAX_BUFFERED_BYTES = 1024 * 1024;
/** How long a refused upgrade's socket may stay open for its answer to be read. */
const REJECTED_LINGER_MS = 1_000;
/** WebSocket close codes (RFC 6455 §7.4.1). */
const CLOSE = { normal: 1000, goingAway: 1001, unsupportedData: 1003, policy: 1008, internal: 1011 } as const;

export interface SubscriptionLimits {
  readonly perConnection: number;
  readonly perKey: number;
  readonly total: number;
  /** A socket holding no subscription is closed after this long without a message. */
  readonly idleMs: number;
  /** Pings go out this often; a socket that has not answered the previous one is closed. */
  readonly pingMs: number;
}

export interface SubscriptionServerOptions {
  readonly authenticator: Authenticator;
  readonly router: Router;
  readonly admission: Admission;
  /** The keys' reads per second, which subscribing and polling count against. */
  readonly keyLimits: Pick<KeyLimits, 'reads'>;
  readonly pollIntervalMs: number;
  readonly limits: SubscriptionLimits;
  /** The main port's time-outs, for the listener on port + 1. */
  readonly headersTimeoutMs: number;
  readonly requestTimeoutMs: number;
  readonly logError: (error: unknown, what: string) => void;
}

interface SignatureSubscription {
  readonly socket: WebSocket;
  readonly id: number;
  readonly signature: string;
  readonly commitment: Commitment;
}

/** What the server knows of each open socket. */
interface Peer {
  readonly presentedKey: string;
  readonly keyId: string;
  readonly subscriptions: Set<number>;
  lastMessageAt: number;
  awaitingPong: boolean;
  lastPingAt: number;
}

export class SubscriptionServer {
  private readonly wss = new WebSocketServer({ noServer: true, maxPayload: MAX_MESSAGE_BYTES });
  private readonly signatures = new Map<number, SignatureSubscription>();
  private readonly slots = new Map<number, WebSocket>();
  private readonly peers = new Map<WebSocket, Peer>();
  private readonly perKey = new Map<string, number>();
  private nextId = 0;
  private lastSlot = -1;
  private poller: NodeJS.Timeout | undefined;
  private readonly housekeeper: NodeJS.Timeout;
  private polling = false;
  /** The listener on port + 1, when it could be opened. */
  private beside: Server | undefined;
  /** Per key with a reads rate: the batch its next round starts at, so that none starves. */
  private readonly nextBatch = new Map<string, number>();

  constructor(private readonly options: SubscriptionServerOptions) {
    this.housekeeper = setInterval(() => this.housekeeping(), HOUSEKEEPING_MS);
    this.housekeeper.unref();
  }

  /** Open sockets and subscriptions, for tests and metrics. */
  get counts(): { sockets: number; subscriptions: number } {
    return { sockets: this.peers.size, subscriptions: this.signatures.size + this.slots.size };
  }

  /** Serves WebSocket upgrades arriving at `server`. */
  attach(server: Server): void {
    server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => this.upgrade(request, socket, head));
  }

  /**
   * The listener on port + 1: WebSocket upgrades only (other requests get 426), with the
   * main port's admission and time-outs. Resolves undefined (with a warning) if the port is taken.
   */
  async listenBeside(host: string, port: number, warn: (message: string) => void): Promise<Server | undefined> {
    const server = http.createServer(
      {
        headersTimeout: this.options.headersTimeoutMs,
        requestTimeout: this.options.requestTimeoutMs,
        connectionsCheckingInterval: HOUSEKEEPING_MS,
      },
      (_request, response) => {
        response
          .writeHead(426, { 'content-type': 'text/plain', connection: 'close' })
          .end('this port serves WebSocket subscriptions only (Solana PubSub); send HTTP requests to the main port\n');
      },
    );
    server.on('connection', (socket: Socket) => this.options.admission.connected(socket));
    server.on('clientError', (_error, socket: Duplex) => rejectUpgrade(socket, 400, 'the request is not valid HTTP/1.1'));
    server.on('connect', (_request: IncomingMessage, socket: Duplex) => {
      socket.on('error', () => {});
      rejectUpgrade(socket, 405, 'CONNECT is not served: Slipway is not a proxy');
    });
    this.attach(server);
    try {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, host, () => resolve());
      });
      server.on('error', (error) => this.options.logError(error, `the WebSocket listener on port ${port}`));
      return server;
    } catch (error) {
      warn(`WebSocket subscriptions are served on the main port only: port ${port} is not available (${(error as Error).message})`);
      return undefined;
    }
  }

  /**
   * Serves upgrades on the main server, and on port + 1 where that port is free (where
   * Solana clients look by default). Resolves whether port + 1 is served.
   */
  async start(main: Server, host: string, besidePort: number, warn: (message: string) => void): Promise<boolean> {
    this.attach(main);
    this.beside = await this.listenBeside(host, besidePort, warn);
    return this.beside !== undefined;
  }

  async close(): Promise<void> {
    if (this.poller !== undefined) clearInterval(this.poller);
    this.poller = undefined;
    clearInterval(this.housekeeper);
    for (const socket of this.peers.keys()) socket.close(CLOSE.goingAway, 'Slipway is shutting down');
    for (const socket of this.wss.clients) socket.terminate();
    await new Promise<void>((resolve) => this.wss.close(() => resolve()));
    // Its sockets are closed above: the listener's close does not wait on them.
    const beside = this.beside;
    if (beside !== undefined) await new Promise((resolve) => beside.close(resolve));
  }

  private upgrade(request: IncomingMessage, socket: Duplex, head: Buffer): void {
    // The HTTP server stops watching a socket once it is upgraded: a reset must not become an uncaught 'error'.
    socket.on('error', () => socket.destroy());
    if (request.method !== 'GET') return rejectUpgrade(socket, 405, 'a WebSocket handshake is a GET request');
    if (request.httpVersion !== '1.1') return rejectUpgrade(socket, 400, 'a WebSocket handshake needs HTTP/1.1');
    const refused = this.options.admission.admitUpgrade(request);
    if (refused !== null) return rejectUpgrade(socket, refused.status, refused.error);
    let query: URLSearchParams;
    try {
      query = new URL(request.url ?? '/', 'http://slipway').searchParams;
    } catch {
      return rejectUpgrade(socket, 400, 'the request target is not a valid path');
    }
    const header = request.headers['x-api-key'];
    const presented = (Array.isArray(header) ? header[0] : header) ?? query.get('api-key') ?? undefined;
    const record = this.options.authenticator.authenticate(presented);
    if (record === null) {
      const down = this.options.authenticator.unavailable();
      if (down !== null) return rejectUpgrade(socket, 503, down);
      return rejectUpgrade(
        socket,
        401,
        presented === undefined || presented === ''
          ? 'missing API key: send it in the x-api-key header or as ?api-key='
          : 'invalid API key: it is unknown or has been revoked',
      );
    }
    this.wss.handleUpgrade(request, socket, head, (ws) => this.accept(ws, presented!, record.id));
  }

  private accept(socket: WebSocket, presentedKey: string, keyId: string): void {
    const now = Date.now();
    this.peers.set(socket, { presentedKey, keyId, subscriptions: new Set(), lastMessageAt: now, awaitingPong: false, lastPingAt: now });
    // ws reports bad frames (too large, bad UTF-8, protocol errors) here and closes the socket itself.
    socket.on('error', () => socket.terminate());
    socket.on('pong', () => {
      const peer = this.peers.get(socket);
      if (peer !== undefined) peer.awaitingPong = false;
    });
    socket.on('message', (data: RawData, isBinary: boolean) => {
      try {
        this.onMessage(socket, data, isBinary);
      } catch (error) {
        // A fault of Slipway's own, not the client's: this connection ends, the process goes on.
        this.options.logError(error, 'a WebSocket message');
        socket.close(CLOSE.internal, 'internal error');
      }
    });
    socket.on('close', () => this.forget(socket));
  }

  private forget(socket: WebSocket): void {
    const peer = this.peers.get(socket);
    if (peer === undefined) return;
    for (const id of peer.subscriptions) {
      this.signatures.delete(id);
      this.slots.delete(id);
    }
    this.countForKey(peer.keyId, -peer.subscriptions.size);
    this.peers.delete(socket);
  }

  private countForKey(keyId: string, change: number): void {
    const count = (this.perKey.get(keyId) ?? 0) + change;
    if (count <= 0) this.perKey.delete(keyId);
    else this.perKey.set(keyId, count);
  }

  private onMessage(socket: WebSocket, data: RawData, isBinary: boolean): void {
    const peer = this.peers.get(socket);
    if (peer === undefined) return;
    peer.lastMessageAt = Date.now();
    if (isBinary) {
      send(socket, {
        jsonrpc: '2.0',
        error: { code: -32600, message: 'Invalid Request: send JSON-RPC requests as text frames' },
        id: null,
      });
      return;
    }
    const request = parseSubscriptionRequest(data.toString());
    if (isSubscriptionRefusal(request)) {
      send(socket, { jsonrpc: '2.0', error: { code: request.code, message: request.message }, id: request.id });
      return;
    }
    const { id } = request;
    const reply = (result: unknown) => send(socket, { jsonrpc: '2.0', result, id });
    const refuse = (message: string) => send(socket, { jsonrpc: '2.0', error: { code: -32602, message }, id });
    switch (request.method) {
      case 'signatureSubscribe':
      case 'slotSubscribe': {
        const over = this.overLimit(peer);
        if (over !== null) return refuse(over);
        const key = this.options.authenticator.authenticate(peer.presentedKey);
        if (key === null) return; // revoked: housekeeping closes the socket within a second
        const add = () => {
          const subscription = ++this.nextId;
          if (request.method === 'signatureSubscribe')
            this.signatures.set(subscription, { socket, id: subscription, signature: request.signature, commitment: request.commitment });
          else this.slots.set(subscription, socket);
          peer.subscriptions.add(subscription);
          this.countForKey(peer.keyId, 1);
          this.startPolling();
          reply(subscription);
        };
        if (key.readsPerSecond === null) return add();
        this.options.keyLimits.reads(key, 1).then(
          (charged) => {
            if (!this.peers.has(socket)) return; // closed meanwhile
            if (!charged.ok) return send(socket, { jsonrpc: '2.0', error: toJsonRpcError(charged.error), id });
            const overNow = this.overLimit(peer); // others may have subscribed meanwhile
            return overNow === null ? add() : refuse(overNow);
          },
          (error: unknown) => {
            this.options.logError(error, 'counting a subscription against its key');
            send(socket, {
              jsonrpc: '2.0',
              error: { code: -32603, message: 'Internal error: the subscription could not be counted against the key; try again' },
              id,
            });
          },
        );
        return;
      }
      case 'signatureUnsubscribe':
      case 'slotUnsubscribe': {
        const table: Map<number, unknown> = request.method === 'slotUnsubscribe' ? this.slots : this.signatures;
        if (!peer.subscriptions.has(request.subscription) || !table.has(request.subscription)) return refuse('Invalid subscription id.');
        table.delete(request.subscription);
        peer.subscriptions.delete(request.subscription);
        this.countForKey(peer.keyId, -1);
        return reply(true);
      }
    }
  }

  /** Why one more subscription is refused, or null. */
  private overLimit(peer: Peer): string | null {
    const { perConnection, perKey, total } = this.options.limits;
    if (peer.subscriptions.size >= perConnection)
      return `at most ${perConnection} subscriptions per connection (maxSubscriptionsPerConnection): unsubscribe from some first`;
    if ((this.perKey.get(peer.keyId) ?? 0) >= perKey)
      return `at most ${perKey} subscriptions per API key (maxSubscriptionsPerKey), over all its connections: unsubscribe from some first`;
    if (this.signatures.size + this.slots.size >= total)
      return `the gateway holds its limit of ${total} subscriptions (maxSubscriptions): try again later`;
    return null;
  }

  private startPolling(): void {
    this.poller ??= setInterval(() => void this.poll(), this.options.pollIntervalMs);
    this.poller.unref();
  }

  /** Closes sockets whose key was revoked, idle ones, ones that do not answer pings, and slow readers; pings the rest when due. */
  private housekeeping(): void {
    const now = Date.now();
    const { idleMs, pingMs } = this.options.limits;
    for (const [socket, peer] of this.peers) {
      if (this.options.authenticator.authenticate(peer.presentedKey) === null) {
        // A close reason is at most 123 bytes.
        socket.close(
          CLOSE.policy,
          this.options.authenticator.unavailable() === null
            ? 'the API key has been revoked'
            : 'the key store cannot be read: no key is accepted',
        );
        this.forget(socket);
      } else if (peer.subscriptions.size === 0 && now - peer.lastMessageAt >= idleMs) {
        socket.close(CLOSE.normal, `idle: no subscription for ${Math.round(idleMs / 1000)} s`);
        this.forget(socket);
      } else if (socket.bufferedAmount > MAX_BUFFERED_BYTES) {
        socket.terminate(); // it does not read what it is sent
      } else if (now - peer.lastPingAt >= pingMs) {
        if (peer.awaitingPong) {
          socket.terminate(); // no answer to the last ping: the peer is gone
        } else {
          peer.awaitingPong = true;
          peer.lastPingAt = now;
          socket.ping();
        }
      }
    }
  }

  /** One round for all subscriptions: the slot, then statuses in batches. */
  private async poll(): Promise<void> {
    if (this.polling || (this.signatures.size === 0 && this.slots.size === 0)) return;
    this.polling = true;
    try {
      let slot = this.lastSlot;
      try {
        slot = await this.options.router.getSlot();
      } catch (error) {
        this.options.logError(error, 'getSlot for subscriptions');
      }
      if (slot !== this.lastSlot && slot >= 0) {
        for (const [subscription, socket] of this.slots) {
          send(socket, {
            jsonrpc: '2.0',
            method: 'slotNotification',
            params: { result: { parent: slot - 1, root: Math.max(0, slot - 32), slot }, subscription },
          });
        }
        this.lastSlot = slot;
      }
      const pending = await this.withinReadRates([...this.signatures.values()]);
      for (let i = 0; i < pending.length; i += STATUS_BATCH) await this.notify(pending.slice(i, i + STATUS_BATCH));
    } finally {
      this.polling = false;
    }
  }

  /**
   * The subscriptions polled this round: all of a key without a reads rate; of a key with
   * one, as many batches of 256 as its rate allows, starting where the last round stopped.
   */
  private async withinReadRates(pending: SignatureSubscription[]): Promise<SignatureSubscription[]> {
    const byKey = new Map<string, { presentedKey: string; subscriptions: SignatureSubscription[] }>();
    for (const subscription of pending) {
      const peer = this.peers.get(subscription.socket);
      if (peer === undefined) continue;
      const entry = byKey.get(peer.keyId) ?? { presentedKey: peer.presentedKey, subscriptions: [] };
      entry.subscriptions.push(subscription);
      byKey.set(peer.keyId, entry);
    }
    const polled: SignatureSubscription[] = [];
    for (const [keyId, { presentedKey, subscriptions }] of byKey) {
      const key = this.options.authenticator.authenticate(presentedKey);
      if (key === null) continue;
      if (key.readsPerSecond === null) {
        polled.push(...subscriptions);
        continue;
      }
      const batches = Math.ceil(subscriptions.length / STATUS_BATCH);
      const first = (this.nextBatch.get(keyId) ?? 0) % batches;
      let taken = 0;
      while (taken < batches) {
        const batch = subscriptions.slice(((first + taken) % batches) * STATUS_BATCH, (((first + taken) % batches) + 1) * STATUS_BATCH);
        // A batch costs its share of a status request: a few signatures ride along with others'.
        const charged = await this.options.keyLimits.reads(key, batch.length / STATUS_BATCH).catch(() => undefined);
        if (charged === undefined || !charged.ok) break;
        polled.push(...batch);
        taken += 1;
      }
      this.nextBatch.set(keyId, first + taken);
    }
    for (const keyId of this.nextBatch.keys()) if (!byKey.has(keyId)) this.nextBatch.delete(keyId);
    return polled;
  }

  /**
   * Asks the statuses of `chunk` and notifies the final ones. A batch the upstream refuses is
   * asked again in halves, down to single signatures, so that one entry it will not answer
   * leaves the others unaffected (that one is asked again next round).
   */
  private async notify(chunk: SignatureSubscription[]): Promise<void> {
    let statuses: (SignatureStatusView | null)[];
    try {
      statuses = await this.options.router.reads.getSignatureStatuses(chunk.map((s) => s.signature));
    } catch (error) {
      if (chunk.length === 1) return this.options.logError(error, 'getSignatureStatuses for a subscription');
      const half = Math.ceil(chunk.length / 2);
      await this.notify(chunk.slice(0, half));
      return this.notify(chunk.slice(half));
    }
    chunk.forEach((subscription, j) => {
      const status = statuses[j];
      if (!status?.confirmationStatus || COMMITMENT_RANK[status.confirmationStatus] < COMMITMENT_RANK[subscription.commitment]) return;
      if (!this.signatures.delete(subscription.id)) return; // unsubscribed meanwhile
      send(subscription.socket, {
        jsonrpc: '2.0',
        method: 'signatureNotification',
        params: { result: { context: { slot: status.slot }, value: { err: status.err } }, subscription: subscription.id },
      });
      // Solana ends a signature subscription after its notification.
      const peer = this.peers.get(subscription.socket);
      if (peer?.subscriptions.delete(subscription.id)) this.countForKey(peer.keyId, -1);
    });
  }
}

function send(socket: WebSocket, message: unknown): void {
  if (socket.readyState === socket.OPEN) socket.send(JSON.stringify(message));
}

/** Answers an upgrade request that is not let in, in Slipway's `{code, message}` shape, and closes its socket. */
function rejectUpgrade(socket: Duplex, status: number, reason: string | SlipwayError): void {
  const message = typeof reason === 'string' ? reason : reason.message;
  const body = JSON.stringify({ code: status, message });
  if (socket.writable)
    socket.end(
      `HTTP/1.1 ${status} ${http.STATUS_CODES[status] ?? ''}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
    );
  // A client that does not close its side is not waited for.
  setTimeout(() => socket.destroy(), REJECTED_LINGER_MS).unref();
}
