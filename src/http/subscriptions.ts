/**
 * Solana's PubSub over WebSocket, for what confirming a submission needs:
 * `signatureSubscribe` / `signatureUnsubscribe` and `slotSubscribe` / `slotUnsubscribe`,
 * in Solana's message shapes, so that `@solana/web3.js`'s `confirmTransaction` /
 * `sendAndConfirmTransaction` and `@solana/kit`'s send-and-confirm work unchanged.
 *
 * Served on the gateway's port and on port + 1 (where Solana clients look by default).
 * Authenticated like HTTP: `x-api-key` header, or `api-key` in the URL's query (WebSocket
 * clients cannot set headers). One timer polls statuses for every open subscription, up to
 * 256 signatures per request; no timer per subscription.
 */
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import type { Authenticator } from '../auth/authenticator';
import type { Router } from '../pipeline/router';
import type { SignatureStatusView } from '../upstreams/upstream';

const STATUS_BATCH = 256;
/** Subscriptions one connection may hold; more is refused (a bound on what one client costs). */
const MAX_SUBSCRIPTIONS_PER_CONNECTION = 1_000;
const MAX_MESSAGE_BYTES = 64 * 1024;
const COMMITMENT_RANK = { processed: 0, confirmed: 1, finalized: 2 } as const;
type Commitment = keyof typeof COMMITMENT_RANK;

interface SignatureSubscription {
  readonly socket: WebSocket;
  readonly id: number;
  readonly signature: string;
  readonly commitment: Commitment;
}

export interface SubscriptionServerOptions {
  readonly authenticator: Authenticator;
  readonly router: Router;
  readonly pollIntervalMs: number;
  readonly logError: (error: unknown, what: string) => void;
}

export class SubscriptionServer {
  private readonly wss = new WebSocketServer({ noServer: true, maxPayload: MAX_MESSAGE_BYTES });
  private readonly signatures = new Map<number, SignatureSubscription>();
  private readonly slots = new Map<number, WebSocket>();
  private readonly owned = new Map<WebSocket, Set<number>>();
  private nextId = 0;
  private lastSlot = -1;
  private timer: NodeJS.Timeout | undefined;
  private polling = false;

  constructor(private readonly options: SubscriptionServerOptions) {
    this.wss.on('connection', (socket: WebSocket) => this.accept(socket));
  }

  /** Serves WebSocket upgrades arriving at `server`. */
  attach(server: Server): void {
    server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => this.upgrade(request, socket, head));
  }

  start(): void {
    this.timer ??= setInterval(() => void this.poll(), this.options.pollIntervalMs);
    this.timer.unref();
  }

  async close(): Promise<void> {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
    for (const socket of this.wss.clients) socket.terminate();
    await new Promise<void>((resolve) => this.wss.close(() => resolve()));
  }

  private upgrade(request: IncomingMessage, socket: Duplex, head: Buffer): void {
    const url = new URL(request.url ?? '/', 'http://localhost');
    const header = request.headers['x-api-key'];
    const key = (Array.isArray(header) ? header[0] : header) ?? url.searchParams.get('api-key') ?? undefined;
    if (this.options.authenticator.authenticate(key) === null) {
      const message = key === undefined ? 'missing API key: send it in the x-api-key header or as ?api-key=' : 'invalid API key: it is unknown or has been revoked';
      socket.end(`HTTP/1.1 401 Unauthorized\r\ncontent-type: text/plain\r\nconnection: close\r\n\r\n${message}\n`);
      return;
    }
    this.wss.handleUpgrade(request, socket, head, (ws) => this.wss.emit('connection', ws, request));
  }

  private accept(socket: WebSocket): void {
    this.owned.set(socket, new Set());
    socket.on('message', (data) => this.onMessage(socket, data.toString()));
    socket.on('close', () => {
      for (const id of this.owned.get(socket) ?? []) {
        this.signatures.delete(id);
        this.slots.delete(id);
      }
      this.owned.delete(socket);
    });
  }

  private onMessage(socket: WebSocket, text: string): void {
    let request: { id?: unknown; method?: unknown; params?: unknown };
    try {
      request = JSON.parse(text);
    } catch {
      return send(socket, { jsonrpc: '2.0', error: { code: -32700, message: 'Parse error' }, id: null });
    }
    const id = request.id ?? null;
    const reply = (result: unknown) => send(socket, { jsonrpc: '2.0', result, id });
    const refuse = (code: number, message: string) => send(socket, { jsonrpc: '2.0', error: { code, message }, id });
    const params = Array.isArray(request.params) ? request.params : [];
    const mine = this.owned.get(socket)!;
    switch (request.method) {
      case 'signatureSubscribe': {
        const [signature, config] = params as [unknown, { commitment?: unknown } | undefined];
        if (typeof signature !== 'string') return refuse(-32602, 'params[0] must be a base58 signature string');
        const commitment = (config?.commitment ?? 'finalized') as Commitment;
        if (!(commitment in COMMITMENT_RANK)) return refuse(-32602, 'params[1].commitment must be "processed", "confirmed" or "finalized"');
        if (mine.size >= MAX_SUBSCRIPTIONS_PER_CONNECTION) return refuse(-32602, `at most ${MAX_SUBSCRIPTIONS_PER_CONNECTION} subscriptions per connection`);
        const subscription = ++this.nextId;
        this.signatures.set(subscription, { socket, id: subscription, signature, commitment });
        mine.add(subscription);
        this.start();
        return reply(subscription);
      }
      case 'slotSubscribe': {
        if (mine.size >= MAX_SUBSCRIPTIONS_PER_CONNECTION) return refuse(-32602, `at most ${MAX_SUBSCRIPTIONS_PER_CONNECTION} subscriptions per connection`);
        const subscription = ++this.nextId;
        this.slots.set(subscription, socket);
        mine.add(subscription);
        this.start();
        return reply(subscription);
      }
      case 'signatureUnsubscribe':
      case 'slotUnsubscribe': {
        const subscription = params[0];
        const table = request.method === 'slotUnsubscribe' ? this.slots : this.signatures;
        if (typeof subscription !== 'number' || !mine.has(subscription) || !table.has(subscription)) return refuse(-32602, 'Invalid subscription id.');
        table.delete(subscription);
        mine.delete(subscription);
        return reply(true);
      }
      default:
        return refuse(-32601, `Method not found: ${String(request.method).slice(0, 64)}`);
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
          send(socket, { jsonrpc: '2.0', method: 'slotNotification', params: { result: { parent: slot - 1, root: Math.max(0, slot - 32), slot }, subscription } });
        }
        this.lastSlot = slot;
      }
      const pending = [...this.signatures.values()];
      for (let i = 0; i < pending.length; i += STATUS_BATCH) {
        const chunk = pending.slice(i, i + STATUS_BATCH);
        let statuses: (SignatureStatusView | null)[];
        try {
          statuses = await this.options.router.reads.getSignatureStatuses(chunk.map((s) => s.signature));
        } catch (error) {
          this.options.logError(error, 'getSignatureStatuses for subscriptions');
          continue;
        }
        chunk.forEach((subscription, j) => {
          const status = statuses[j];
          if (!status?.confirmationStatus || COMMITMENT_RANK[status.confirmationStatus] < COMMITMENT_RANK[subscription.commitment]) return;
          send(subscription.socket, {
            jsonrpc: '2.0',
            method: 'signatureNotification',
            params: { result: { context: { slot: status.slot }, value: { err: status.err } }, subscription: subscription.id },
          });
          // Solana ends a signature subscription after its notification.
          this.signatures.delete(subscription.id);
          this.owned.get(subscription.socket)?.delete(subscription.id);
        });
      }
    } finally {
      this.polling = false;
    }
  }
}

function send(socket: WebSocket, message: unknown): void {
  if (socket.readyState === socket.OPEN) socket.send(JSON.stringify(message));
}
