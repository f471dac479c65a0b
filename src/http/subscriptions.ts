/**
 * Solana's PubSub over WebSocket, for what confirming a submission needs:
 * `signatureSubscribe` / `signatureUnsubscribe` and `slotSubscribe` / `slotUnsubscribe`,
 * in Solana's message shapes, so that `@solana/web3.js`'s `confirmTransaction` /
 * `sendAndConfirmTransaction` and `@solana/kit`'s send-and-confirm work unchanged.
 *
 * Served on the gateway's port and on port + 1 (where Solana clients look by default;
 * subscription-listener.ts), with the same admission on both: connections per client
 * address, shedding and shutdown (admission.ts), and on port + 1 the main port's header and
 * request time-outs. Authenticated like HTTP: `x-api-key` header, or `api-key` in the URL's
 * query (WebSocket clients cannot set headers; subscription-upgrade.ts); a socket whose key
 * is revoked is closed within a second.
 *
 * Every door handles its own failures: a bad upgrade request is answered and its socket
 * closed, a bad frame answered or its connection closed, and nothing a client sends can
 * reach the process's uncaught-exception path. Limits: subscriptions per connection, per key
 * and in total (subscription-table.ts); a socket that does not answer pings, or holds no
 * subscription for the idle time, or reads its notifications too slowly, is closed.
 *
 * The same upgrades reach Jito's tip stream (`/api/v1/bundles/tip_stream`, tip-stream.ts) by
 * its path; every other path is PubSub.
 *
 * One timer polls statuses for every open subscription (subscription-poller.ts). Subscriptions
 * are reads, and cost the operator's upstream as reads do: a subscribe counts one against the
 * key's reads per second (refused past it, as HTTP reads are), and so does polling.
 */
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type RawData, type WebSocket } from 'ws';
import type { Authenticator } from '../auth/authenticator';
import type { EventStreams } from '../events/event-streams';
import { toJsonRpcError } from '../errors/error-catalogue';
import type { KeyLimits } from '../limits/key-limits';
import type { Router } from '../pipeline/router';
import type { Admission } from './admission';
import { isWebSocketUpgrade, replayWithoutUpgrade } from './foreign-upgrade';
import { httpAgain } from './node-listener';
import { listenForUpgrades } from './subscription-listener';
import { SubscriptionPoller } from './subscription-poller';
import { isSubscriptionRefusal, parseSubscriptionRequest, type SubmissionFilter } from './subscription-requests';
import { SubmissionStream } from './submission-stream';
import { CLOSE, sendMessage } from './subscription-socket';
import { SubscriptionTable } from './subscription-table';
import { checkUpgrade, rejectUpgrade } from './subscription-upgrade';
import { TIP_STREAM_PATH } from './tip-floor-paths';
import type { JsonRpcId } from '../web/json-rpc-envelope';
import type { TipStream } from './tip-stream';

const MAX_MESSAGE_BYTES = 64 * 1024;
/** Housekeeping (revoked keys, idle sockets, pings) runs this often: a revoked key's sockets close within it. */
const HOUSEKEEPING_MS = 500;
/** A socket with more than this waiting to be sent is not reading its notifications: it is closed. */
const MAX_BUFFERED_BYTES = 1024 * 1024;

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
  /** Jito's tip stream, served on its path (absent: that path is PubSub's like any other). */
  readonly tipStream?: TipStream;
  /** Submission events, for `submissionSubscribe` (absent: it is refused as not served). */
  readonly events?: EventStreams;
  readonly logError: (error: unknown, what: string) => void;
}

/** What is done with an upgrade request that does not ask for a WebSocket. */
type ForeignUpgrade = (request: IncomingMessage, socket: Duplex, head: Buffer) => void;

export class SubscriptionServer {
  private readonly wss = new WebSocketServer({ noServer: true, maxPayload: MAX_MESSAGE_BYTES });
  private readonly table: SubscriptionTable;
  private readonly poller: SubscriptionPoller;
  private readonly stream: SubmissionStream | undefined;
  private readonly housekeeper: NodeJS.Timeout;
  /** The listener on port + 1, when it could be opened. */
  private beside: Server | undefined;

  constructor(private readonly options: SubscriptionServerOptions) {
    this.table = new SubscriptionTable(options.limits);
    this.poller = new SubscriptionPoller(this.table, options);
    this.stream = options.events && new SubmissionStream(this.table, options.events, options.logError);
    this.housekeeper = setInterval(() => this.housekeeping(), HOUSEKEEPING_MS);
    this.housekeeper.unref();
  }

  /** Open sockets and subscriptions, for tests and metrics. */
  get counts(): { sockets: number; subscriptions: number } {
    return { sockets: this.table.sockets, subscriptions: this.table.size };
  }

  /**
   * Serves WebSocket upgrades arriving at `server`; other upgrades (foreign-upgrade.ts) go to
   * `foreign`.
   */
  attach(server: Server, foreign: ForeignUpgrade): void {
    server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) =>
      isWebSocketUpgrade(request) ? this.upgrade(request, socket, head) : foreign(request, socket, head),
    );
  }

  /**
   * The listener on port + 1: WebSocket upgrades only (other requests get 426), with the
   * main port's admission and time-outs. Resolves undefined (with a warning) if the port is taken.
   */
  listenBeside(host: string, port: number, warn: (message: string) => void): Promise<Server | undefined> {
    return listenForUpgrades({
      host,
      port,
      admission: this.options.admission,
      headersTimeoutMs: this.options.headersTimeoutMs,
      requestTimeoutMs: this.options.requestTimeoutMs,
      connectionsCheckingIntervalMs: HOUSEKEEPING_MS,
      attach: (server) =>
        this.attach(server, (_request, socket) => {
          socket.on('error', () => socket.destroy());
          rejectUpgrade(socket, 426, 'this port serves WebSocket subscriptions only (Solana PubSub); send HTTP requests to the main port');
        }),
      logError: (error, what) => this.options.logError(error, what),
      warn,
    });
  }

  /**
   * Serves upgrades on the main server, and on port + 1 where that port is free (where
   * Solana clients look by default). Resolves whether port + 1 is served.
   */
  async start(main: Server, host: string, besidePort: number, warn: (message: string) => void): Promise<boolean> {
    const again = httpAgain(main);
    // The main port answers an upgrade it does not do as the plain HTTP request it also is.
    this.attach(main, (request, socket, head) =>
      again === undefined || request.headers['transfer-encoding'] !== undefined
        ? rejectUpgrade(socket, 400, 'Upgrade is served for WebSocket handshakes only: send this request without it')
        : replayWithoutUpgrade(request, socket, head, again),
    );
    this.beside = await this.listenBeside(host, besidePort, warn);
    return this.beside !== undefined;
  }

  async close(): Promise<void> {
    this.poller.stop();
    this.stream?.stop();
    clearInterval(this.housekeeper);
    for (const [socket] of this.table.peers()) socket.close(CLOSE.goingAway, 'Slipway is shutting down');
    for (const socket of this.wss.clients) socket.terminate();
    await new Promise<void>((resolve) => this.wss.close(() => resolve()));
    await this.options.tipStream?.close();
    // Its sockets are closed above: the listener's close does not wait on them.
    const beside = this.beside;
    if (beside !== undefined) await new Promise((resolve) => beside.close(resolve));
  }

  private upgrade(request: IncomingMessage, socket: Duplex, head: Buffer): void {
    const key = checkUpgrade(request, socket, this.options.admission, this.options.authenticator);
    if (key === null) return;
    const { tipStream } = this.options;
    // checkUpgrade has parsed the target.
    if (tipStream !== undefined && new URL(request.url ?? '/', 'http://slipway').pathname === TIP_STREAM_PATH)
      return tipStream.upgrade(request, socket, head, key);
    this.wss.handleUpgrade(request, socket, head, (ws) => this.accept(ws, key.presentedKey, key.keyId));
  }

  private accept(socket: WebSocket, presentedKey: string, keyId: string): void {
    this.table.connect(socket, presentedKey, keyId);
    // ws reports bad frames (too large, bad UTF-8, protocol errors) here and closes the socket itself.
    socket.on('error', () => socket.terminate());
    socket.on('pong', () => {
      const peer = this.table.peer(socket);
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
    socket.on('close', () => this.table.forget(socket));
  }

  private onMessage(socket: WebSocket, data: RawData, isBinary: boolean): void {
    const peer = this.table.peer(socket);
    if (peer === undefined) return;
    peer.lastMessageAt = Date.now();
    if (isBinary) {
      sendMessage(socket, {
        jsonrpc: '2.0',
        error: { code: -32600, message: 'Invalid Request: send JSON-RPC requests as text frames' },
        id: null,
      });
      return;
    }
    const request = parseSubscriptionRequest(data.toString());
    if (isSubscriptionRefusal(request)) {
      sendMessage(socket, { jsonrpc: '2.0', error: { code: request.code, message: request.message }, id: request.id });
      return;
    }
    const { id } = request;
    const reply = (result: unknown) => sendMessage(socket, { jsonrpc: '2.0', result, id });
    const refuse = (message: string) => sendMessage(socket, { jsonrpc: '2.0', error: { code: -32602, message }, id });
    switch (request.method) {
      case 'signatureSubscribe':
      case 'slotSubscribe':
        return this.admit(socket, request.id, () => {
          const subscription = this.table.add(socket, peer, request);
          this.poller.start();
          reply(subscription);
        });
      case 'submissionSubscribe':
        return this.admit(socket, request.id, () => this.subscribeSubmissions(socket, request.id, request.filter));
      case 'signatureUnsubscribe':
      case 'slotUnsubscribe':
      case 'submissionUnsubscribe': {
        const kind =
          request.method === 'slotUnsubscribe' ? 'slot' : request.method === 'submissionUnsubscribe' ? 'submission' : 'signature';
        if (!this.table.unsubscribe(peer, kind, request.subscription)) return refuse('Invalid subscription id.');
        return reply(true);
      }
    }
  }

  /**
   * Adds a subscription once it is within the limits and counted as one read against its key
   * (refused past the key's reads per second, as HTTP reads are).
   */
  private admit(socket: WebSocket, id: JsonRpcId, add: () => void): void {
    const peer = this.table.peer(socket)!;
    const refuse = (message: string) => sendMessage(socket, { jsonrpc: '2.0', error: { code: -32602, message }, id });
    const over = this.table.overLimit(peer);
    if (over !== null) return refuse(over);
    const key = this.options.authenticator.authenticate(peer.presentedKey);
    if (key === null) return; // revoked: housekeeping closes the socket within a second
    if (key.readsPerSecond === null) return add();
    this.options.keyLimits.reads(key, 1).then(
      (charged) => {
        if (!this.table.has(socket)) return; // closed meanwhile
        if (!charged.ok) return sendMessage(socket, { jsonrpc: '2.0', error: toJsonRpcError(charged.error), id });
        const overNow = this.table.overLimit(peer); // others may have subscribed meanwhile
        return overNow === null ? add() : refuse(overNow);
      },
      (error: unknown) => {
        this.options.logError(error, 'counting a subscription against its key');
        sendMessage(socket, {
          jsonrpc: '2.0',
          error: { code: -32603, message: 'Internal error: the subscription could not be counted against the key; try again' },
          id,
        });
      },
    );
  }

  /** Opens a stream of the key's submission events (from now, or after `lastEventId`), then answers its subscription id. */
  private subscribeSubmissions(socket: WebSocket, id: JsonRpcId, filter: SubmissionFilter): void {
    const peer = this.table.peer(socket)!;
    const { events } = this.options;
    if (events === undefined || this.stream === undefined)
      return sendMessage(socket, {
        jsonrpc: '2.0',
        error: { code: -32601, message: 'Method not found: submissionSubscribe is not served here' },
        id,
      });
    events.open(peer.keyId, filter.lastEventId, Date.now()).then(
      (start) => {
        if (!this.table.has(socket)) return;
        if (!start.ok) return sendMessage(socket, { jsonrpc: '2.0', error: { code: -32602, message: start.message }, id });
        const overNow = this.table.overLimit(peer);
        if (overNow !== null) return sendMessage(socket, { jsonrpc: '2.0', error: { code: -32602, message: overNow }, id });
        const subscription = this.table.addSubmission(socket, peer, filter, start.afterOrd);
        this.stream!.start();
        sendMessage(socket, { jsonrpc: '2.0', result: subscription, id });
      },
      (error: unknown) => {
        this.options.logError(error, 'opening a submission stream');
        sendMessage(socket, {
          jsonrpc: '2.0',
          error: { code: -32603, message: 'Internal error: the submission stream could not be opened; try again' },
          id,
        });
      },
    );
  }

  /** Closes sockets whose key was revoked, idle ones, ones that do not answer pings, and slow readers; pings the rest when due. */
  private housekeeping(): void {
    const now = Date.now();
    const { idleMs, pingMs } = this.options.limits;
    for (const [socket, peer] of this.table.peers()) {
      if (this.options.authenticator.authenticate(peer.presentedKey) === null) {
        // A close reason is at most 123 bytes.
        socket.close(
          CLOSE.policy,
          this.options.authenticator.unavailable() === null
            ? 'the API key has been revoked'
            : 'the key store cannot be read: no key is accepted',
        );
        this.table.forget(socket);
      } else if (peer.subscriptions.size === 0 && now - peer.lastMessageAt >= idleMs) {
        socket.close(CLOSE.normal, `idle: no subscription for ${Math.round(idleMs / 1000)} s`);
        this.table.forget(socket);
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
}
