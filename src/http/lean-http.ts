/**
 * Lean HTTP (setting `leanHttp`): the submission requests of a connection read and
 * answered straight off its socket, without node:http's request and response objects,
 * streams and header bookkeeping, which cost a bare node:http server about 40 % of its CPU
 * time a request (docs/PERFORMANCE.md). Everything outside lean HTTP's narrow form
 * (lean-request.ts), and every refusal on arrival, is node:http's: the connection, with
 * what it has sent so far, is handed to node:http's own connection handler and stays there.
 * Lean HTTP only ever answers what the fast path would have answered, by the same functions
 * (`answerRpc`, `answerBatch`); a test sends the same requests both ways and compares.
 *
 * One request at a time per connection, in order (pipelined requests wait their turn). A
 * request that does not arrive whole within `LEAN_WAIT_MS` goes to node:http, whose
 * time-outs then apply; an idle connection is closed after `idleTimeoutMs`.
 *
 * This file is the driver: it owns the sockets, the timers and the writes. What a
 * connection does next is decided by its state machine (lean-connection.ts), without I/O.
 */
import { maxHeaderSize, STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { Authenticator } from '../auth/authenticator';
import { hotCount, hotSeries, type HotCount, type HotSeries } from '../metrics/hot-series';
import {
  fastPathRequestsTotal,
  leanHandoversTotal,
  leanRequestsTotal,
  REQUEST_DURATION_BUCKETS,
  requestDuration,
} from '../metrics/metrics';
import type { Reply } from '../web/json-rpc-envelope';
import { parseJsonBody } from '../web/json-body';
import type { Admission } from './admission';
import type { Answerer } from './fast-path';
import { LeanConnection, type LeanGate, type LeanLimits, type LeanStep, type Serving } from './lean-connection';
import { requestIdFor } from './request-id';

/** How long lean HTTP waits at most for a request (or the rest of one) before handing the connection to node:http. */
const LEAN_WAIT_MS = 1_000;
/** Lean HTTP's head limit, well inside node:http's (16 KB unless --max-http-header-size says otherwise): near it, node:http decides. */
const MAX_HEAD_BYTES = Math.min(8 * 1024, Math.floor(maxHeaderSize / 2));

export interface LeanHttpOptions {
  readonly authenticator: Authenticator;
  readonly admission: Admission;
  readonly bodyLimit: number;
  readonly idleTimeoutMs: number;
  /** node:http's: lean HTTP waits at most half of it (and a second) for a request to arrive whole. */
  readonly headersTimeoutMs: number;
  readonly routes: { readonly '/': Answerer; readonly '/submit-batch': Answerer };
  readonly failed: (path: '/' | '/submit-batch', error: unknown) => Reply;
}

export interface LeanHttp {
  /** Serves the connection, handing it to `toNode` (node:http's connection handler) when it must. */
  adopt(socket: Socket, toNode: (socket: Socket) => void): void;
  /** The gateway is closing: idle connections are closed now, busy ones after their answer. */
  close(): void;
}

/** Node's Date header, made once a second. */
let dateSecond = 0;
let dateText = '';
function httpDate(): string {
  const now = Date.now();
  const second = Math.floor(now / 1000);
  if (second !== dateSecond) {
    dateSecond = second;
    dateText = new Date(now).toUTCString();
  }
  return dateText;
}

/** What every connection of lean HTTP shares. */
interface Shared {
  readonly options: LeanHttpOptions;
  readonly gate: LeanGate;
  readonly limits: LeanLimits;
  /** How long a request may take to arrive whole before node:http takes the connection. */
  readonly waitMs: number;
  /** The most held unread per connection: one whole request. */
  readonly maxBuffered: number;
  /** Connections in lean HTTP. */
  readonly open: Map<Socket, LeanConnection>;
  closing: boolean;
  readonly keepAlive: string;
  readonly durations: Record<'/' | '/submit-batch', HotSeries>;
  readonly fastPathRequests: HotCount;
  readonly leanRequests: HotCount;
}

export function createLeanHttp(options: LeanHttpOptions): LeanHttp {
  const { authenticator, admission, bodyLimit } = options;
  const shared: Shared = {
    options,
    // The same places node:http's path takes (admission.ts); a refusal is left to node:http, which answers it.
    gate: {
      enter(apiKey, begunBeforeClose) {
        const key = authenticator.authenticate(apiKey);
        if (key === null || admission.enter(begunBeforeClose) !== null) return null;
        if (admission.enterKey(key.id) === null) return key;
        admission.leave();
        return null;
      },
      leave(key) {
        admission.leave();
        admission.leaveKey(key.id);
      },
    },
    limits: { maxHeadBytes: MAX_HEAD_BYTES, bodyLimit },
    waitMs: Math.min(LEAN_WAIT_MS, Math.floor(options.headersTimeoutMs / 2)),
    maxBuffered: MAX_HEAD_BYTES + bodyLimit,
    open: new Map(),
    closing: false,
    keepAlive: `Connection: keep-alive\r\nKeep-Alive: timeout=${Math.floor(options.idleTimeoutMs / 1000)}\r\n\r\n`,
    durations: {
      '/': hotSeries(requestDuration, REQUEST_DURATION_BUCKETS, { path: '/' }),
      '/submit-batch': hotSeries(requestDuration, REQUEST_DURATION_BUCKETS, { path: '/submit-batch' }),
    },
    fastPathRequests: hotCount(fastPathRequestsTotal),
    leanRequests: hotCount(leanRequestsTotal),
  };
  return {
    adopt(socket, toNode) {
      if (shared.closing || admission.isOverLimit(socket)) return toNode(socket);
      new ConnectionDriver(shared, socket, toNode).start();
    },
    close() {
      shared.closing = true;
      for (const [socket, connection] of shared.open) if (connection.closeGateway() === 'destroy') socket.destroy();
    },
  };
}

/** An answer's head, written as node:http writes it. */
function answerHead(shared: Shared, status: number, requestId: string, reply: Reply, length: number, close: boolean): string {
  let text = `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Unknown'}\r\nx-request-id: ${requestId}\r\n`;
  if (reply.headers !== undefined) for (const [name, value] of Object.entries(reply.headers)) text += `${name}: ${value}\r\n`;
  if (reply.body !== undefined) text += `content-type: application/json; charset=utf-8\r\n`;
  // As node:http: a 204 carries no length.
  if (status !== 204) text += `content-length: ${length}\r\n`;
  text += `Date: ${httpDate()}\r\n`;
  return text + (close ? 'Connection: close\r\n\r\n' : shared.keepAlive);
}

/** One connection's I/O: its socket's events fed to its state machine, and each step the machine answers carried out. */
class ConnectionDriver {
  private readonly connection: LeanConnection;
  private waitTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly shared: Shared,
    private readonly socket: Socket,
    private readonly toNode: (socket: Socket) => void,
  ) {
    this.connection = new LeanConnection(shared.limits, shared.gate);
  }

  start(): void {
    const { socket } = this;
    this.shared.open.set(socket, this.connection);
    socket.on('data', this.onData);
    socket.on('end', this.onEnd);
    socket.on('close', this.onClose);
    socket.on('error', this.onError);
    socket.setTimeout(this.shared.options.idleTimeoutMs, this.onIdle);
    // A connection that sends nothing goes to node:http, which answers 408 after headersTimeoutMs.
    this.take('wait');
  }

  private readonly onData = (chunk: Buffer): void => {
    const step = this.connection.received(chunk);
    // A client sending more than a request ahead of its answers waits (nothing grows without bound).
    if (this.connection.buffered > this.shared.maxBuffered) this.socket.pause();
    this.take(step);
  };
  /** The client ended its side (the server allows half-open connections, node-listener.ts): answer what it sent, then end ours. */
  private readonly onEnd = (): void => this.take(this.connection.peerEnd());
  /** Idle between requests (node:http's keep-alive time-out); a request in progress is not cut off. */
  private readonly onIdle = (): void => this.take(this.connection.idleExpired());
  private readonly onClose = (): void => {
    this.connection.closed();
    this.detach();
  };
  // Until node:http takes the connection (and its errors), a failed socket is simply closed.
  private readonly onError = (): void => void this.socket.destroy();
  /** Reads on once what waits fits a request and the client takes its answers. */
  private readonly flow = (): void => {
    const { socket, connection } = this;
    if (connection.open && socket.isPaused() && !socket.writableNeedDrain && connection.buffered <= this.shared.maxBuffered)
      socket.resume();
  };

  /** The driver's part of a step: the machine has already moved. */
  private take(step: LeanStep): void {
    switch (step) {
      case 'serve':
        this.serve(this.connection.phase as Serving);
        break;
      case 'hand-over':
        return this.handOver();
      case 'finish':
        return this.finish();
      case 'destroy':
        return void this.socket.destroy();
      case 'wait':
        break;
    }
    // The wait runs exactly while a request is due and not whole.
    if (!this.connection.awaitingRequest) {
      if (this.waitTimer !== undefined) clearTimeout(this.waitTimer);
      this.waitTimer = undefined;
    } else this.waitTimer ??= setTimeout(() => this.take(this.connection.waitExpired()), this.shared.waitMs);
    this.flow();
  }

  private detach(): void {
    const { socket } = this;
    this.shared.open.delete(socket);
    if (this.waitTimer !== undefined) clearTimeout(this.waitTimer);
    socket.off('data', this.onData);
    socket.off('timeout', this.onIdle);
    socket.off('close', this.onClose);
    socket.off('end', this.onEnd);
  }

  /** node:http takes the connection from here, with whatever it has sent that was not answered. */
  private handOver(): void {
    const { socket, connection, toNode } = this;
    if (connection.phase.kind === 'handed-over') leanHandoversTotal.inc({ reason: connection.phase.reason });
    this.detach();
    socket.off('error', this.onError);
    socket.setTimeout(0);
    const rest = connection.takeRest();
    if (socket.readableEnded) {
      // The client's FIN has been read and its 'end' emitted: nothing can be unshifted any
      // more, so node:http gets the bytes and the end as the events it listens to.
      toNode(socket);
      if (rest !== null) socket.emit('data', rest);
      socket.emit('end');
      return;
    }
    socket.pause();
    if (rest !== null) socket.unshift(rest);
    toNode(socket);
    socket.resume();
  }

  /** Ends the connection after the last answer, as node:http does (destroySoon): not left half-open for the client to close. */
  private finish(): void {
    const { socket } = this;
    this.detach();
    socket.end();
    if (socket.writableFinished) socket.destroy();
    else socket.once('finish', () => socket.destroy());
  }

  private serve(request: Serving): void {
    const { shared, socket, connection } = this;
    const { head: read, key } = request;
    const started = process.hrtime.bigint();
    shared.fastPathRequests.inc();
    shared.leanRequests.inc();
    const requestId = requestIdFor(read.requestId);
    const body = parseJsonBody(request.body);
    shared.options.routes[read.path](body, key, false, { requestId, idempotencyKey: read.idempotencyKey })
      .catch((error: unknown) => shared.options.failed(read.path, error))
      .then((reply) => {
        if (!connection.open || socket.destroyed) return void connection.answered(request, true);
        const close = !read.keepAlive || shared.closing || shared.options.admission.closing;
        const json = reply.body === undefined ? '' : JSON.stringify(reply.body);
        if (!socket.write(answerHead(shared, reply.status, requestId, reply, Buffer.byteLength(json), close) + json)) {
          // The client is not reading its answers: read no more of its requests until it does.
          socket.pause();
          socket.once('drain', this.flow);
        }
        shared.durations[read.path].observe(Number(process.hrtime.bigint() - started) / 1e9);
        this.take(connection.answered(request, close));
      })
      // An answer that cannot be written (the connection is gone) ends that connection, never the process.
      .catch(() => socket.destroy());
  }
}
