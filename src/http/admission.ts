/**
 * Admission: whether a request is let in at all, decided as it arrives, before its body is
 * read, so that a refusal costs a few microseconds when the gateway has none to spare.
 *
 * - Connections per client address: past the limit a new connection's requests are
 *   answered 429 and the connection closed (file descriptors are what a flood from one
 *   address exhausts first). Behind a load balancer every client has its address: raise
 *   the limit or turn it off there (docs/DEPLOY.md).
 * - Overload: while more requests are in progress than `maxInFlight`, or the event loop
 *   runs late by more than `maxEventLoopDelayMs`, new requests are answered 503 with
 *   `Retry-After` at once. Queueing them instead would make every client wait, and the
 *   ones already admitted wait longest; shedding keeps the served ones fast, and the
 *   gateway comes back by itself when the load falls.
 *
 * - Per key: once a request's key is known (before its body is read), at most
 *   `maxInFlightPerKey` of that key's requests are in progress; past it the key is told to
 *   slow down (429), and the other keys keep their places.
 *
 * One set of counts, each entered and left once per request (`enter`/`leave`,
 * `enterKey`/`leaveKey`): lean HTTP (lean-http.ts) enters on a request's head and leaves
 * on its answer; node:http's path enters through `admit`/`admitKey`, which leave when the
 * response closes.
 *
 * `GET /health` and `GET /metrics` are admitted however busy the gateway is (load balancers
 * must see a busy gateway as alive, operators must see why it is busy), and refused once it
 * is shutting down.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { shedTotal } from '../metrics/metrics';
import { slipwayError, type SlipwayError } from '../errors/error-catalogue';
import { OPERATOR_PATHS } from '../web/operator-access';
import { onResponseDone } from './response-done';

export interface AdmissionLimits {
  /** Open connections per client address; 0: no limit. */
  readonly maxConnectionsPerClient: number;
  /** Requests in progress at once (read, being answered); 0: no limit. */
  readonly maxInFlight: number;
  /** Requests in progress at once for one API key; 0: no limit. */
  readonly maxInFlightPerKey: number;
  /** How late the event loop may run, in ms, before new requests are shed; 0: not watched. */
  readonly maxEventLoopDelayMs: number;
}

/** How often the event loop's lateness is sampled. */
const SAMPLE_MS = 20;
/** Samples the event loop must be late in a row (about a tenth of a second) to count as overloaded. */
const SUSTAINED_SAMPLES = 5;
const RETRY_AFTER_MS = 1_000;

/** Why a request is shed: the reason (slipway_http_shed_total's label) and the words for the client. */
export interface Shed {
  readonly reason: string;
  readonly message: string;
}

export class Admission {
  private readonly perAddress = new Map<string, number>();
  /** Connections opened past their address's limit: each of their requests is refused. */
  private readonly overLimit = new WeakSet<Socket>();
  /** Requests in progress (admitted, not yet answered), on node:http's path and in lean HTTP: the queue depth. */
  private inProgress = 0;
  /** node:http's responses in progress: at shutdown each is told to close its connection. */
  private readonly responses = new Set<ServerResponse>();
  /**
   * Requests in progress per key ID. A key's entry stays at 0 when its last request ends: keys
   * are the key store's (authenticated), so the table is bounded by them, and a Map whose
   * entries come and go at the request rate replaces its table every few dozen requests
   * (garbage that, on Node.js 20, reached the old generation: docs/PERFORMANCE.md).
   */
  private readonly perKey = new Map<string, number>();
  private delayMs = 0;
  private readonly sampler: NodeJS.Timeout | undefined;
  private shuttingDown = false;

  constructor(private readonly limits: AdmissionLimits) {
    if (limits.maxEventLoopDelayMs > 0) {
      let expected = performance.now() + SAMPLE_MS;
      const recent = new Float64Array(SUSTAINED_SAMPLES);
      let at = 0;
      this.sampler = setInterval(() => {
        const now = performance.now();
        recent[at++ % SUSTAINED_SAMPLES] = Math.max(0, now - expected);
        expected = now + SAMPLE_MS;
        // The least of the last few samples: one long task (a snapshot, a collection) delays
        // one sample and is not overload; a loop that is late sample after sample is.
        this.delayMs = Math.min(...recent);
      }, SAMPLE_MS);
      this.sampler.unref();
    }
  }

  /** Counts a new connection against its address; to be called from the server's `connection` event. */
  connected(socket: Socket): void {
    const { maxConnectionsPerClient } = this.limits;
    if (maxConnectionsPerClient === 0) return;
    const address = socket.remoteAddress ?? '';
    const open = (this.perAddress.get(address) ?? 0) + 1;
    this.perAddress.set(address, open);
    socket.once('close', () => {
      const left = (this.perAddress.get(address) ?? 1) - 1;
      if (left === 0) this.perAddress.delete(address);
      else this.perAddress.set(address, left);
    });
    if (open > maxConnectionsPerClient) {
      this.overLimit.add(socket);
      // An extra connection that never sends a request is not kept for the headers time-out.
      socket.setTimeout(OVER_LIMIT_IDLE_MS, () => socket.destroy());
    }
  }

  /** Whether the gateway is closing: answers say `Connection: close`. */
  get closing(): boolean {
    return this.shuttingDown;
  }

  /** Whether the connection is past its address's limit (its requests are refused). */
  isOverLimit(socket: Socket): boolean {
    return this.overLimit.has(socket);
  }

  /**
   * Counts a request in progress until `leave()`, or says why it is shed (over capacity, or
   * closing). `begunBeforeClose`: the request began before the gateway started closing, so it
   * is in progress as node:http counts one whose head had come, and is still served. Both the
   * lean HTTP (per request) and node:http's path (`admit`, until the response closes) count here.
   */
  enter(begunBeforeClose = false): Shed | null {
    const why = this.overloaded();
    if (why !== null && !(why.reason === 'shutting_down' && begunBeforeClose)) return why;
    this.inProgress += 1;
    return null;
  }

  leave(): void {
    this.inProgress -= 1;
  }

  /** Counts a request of `keyId` in progress until `leaveKey`, or refuses it: the key has `maxInFlightPerKey` in progress already. */
  enterKey(keyId: string): SlipwayError | null {
    const max = this.limits.maxInFlightPerKey;
    if (max === 0) return null;
    const open = this.perKey.get(keyId) ?? 0;
    if (open >= max) {
      const message = `API key ${keyId} has ${max} requests in progress (maxInFlightPerKey): nothing was done; wait for answers before sending more`;
      return slipwayError('RATE_LIMITED', message, { retryAfterMs: RETRY_AFTER_MS });
    }
    this.perKey.set(keyId, open + 1);
    return null;
  }

  leaveKey(keyId: string): void {
    if (this.limits.maxInFlightPerKey === 0) return;
    this.perKey.set(keyId, Math.max(0, (this.perKey.get(keyId) ?? 1) - 1));
  }

  /** From now on every request is refused (the gateway is closing). */
  close(): void {
    this.shuttingDown = true;
    if (this.sampler !== undefined) clearInterval(this.sampler);
    // Their answers say `Connection: close`, so clients do not send another request on a
    // connection the server is about to close.
    for (const response of this.responses) if (!response.headersSent) response.shouldKeepAlive = false;
  }

  /**
   * Admits the request (it is counted in flight until its response or connection closes), or says why
   * not. A refused request must be answered with `Connection: close` when `closeConnection`.
   */
  admit(request: IncomingMessage, response: ServerResponse): { error: SlipwayError; closeConnection: boolean } | null {
    // Health checks and metrics scrapes are what an operator needs most while it sheds.
    // (The dashboard's event stream stays open: counted in flight it would take a place for good.)
    const operator = request.method === 'GET' && OPERATOR_PATHS.has(request.url?.split('?')[0] ?? '') && !this.shuttingDown;
    if (this.overLimit.has(request.socket)) {
      // A health check sharing its address with a flood is answered too, on a connection
      // closed after the answer: the limit still frees the descriptor.
      if (operator) {
        response.shouldKeepAlive = false;
        return null;
      }
      shedTotal.inc({ reason: 'connections' });
      const message = `too many connections from ${request.socket.remoteAddress}: at most ${this.limits.maxConnectionsPerClient} at once (maxConnectionsPerClient); reuse connections (keep-alive) or close some`;
      return { error: slipwayError('TOO_MANY_CONNECTIONS', message, { retryAfterMs: RETRY_AFTER_MS }), closeConnection: true };
    }
    if (operator) return null;
    const why = this.enter();
    if (why !== null) {
      shedTotal.inc({ reason: why.reason });
      return {
        error: slipwayError('SERVICE_UNAVAILABLE', why.message, { retryAfterMs: RETRY_AFTER_MS }),
        closeConnection: this.shuttingDown,
      };
    }
    this.responses.add(response);
    onResponseDone(response, () => {
      this.responses.delete(response);
      this.leave();
    });
    return null;
  }

  /**
   * Counts a request of `keyId` in progress until its response closes, or says why not (the
   * key has `maxInFlightPerKey` in progress already). Called once the key is authenticated.
   */
  admitKey(keyId: string, response: ServerResponse): SlipwayError | null {
    const busy = this.enterKey(keyId);
    if (busy !== null) {
      shedTotal.inc({ reason: 'key_in_flight' });
      return busy;
    }
    if (this.limits.maxInFlightPerKey > 0) onResponseDone(response, () => this.leaveKey(keyId));
    return null;
  }

  /**
   * Admits a WebSocket upgrade, or says why not, with the HTTP status to answer. An upgraded
   * connection is not counted in flight (it stays open); its address's connections are.
   */
  admitUpgrade(request: IncomingMessage): { status: number; error: SlipwayError } | null {
    if (this.overLimit.has(request.socket)) {
      shedTotal.inc({ reason: 'connections' });
      return {
        status: 429,
        error: slipwayError(
          'TOO_MANY_CONNECTIONS',
          `too many connections from ${request.socket.remoteAddress}: at most ${this.limits.maxConnectionsPerClient} at once (maxConnectionsPerClient)`,
        ),
      };
    }
    const why = this.overloaded();
    if (why === null) return null;
    shedTotal.inc({ reason: why.reason });
    return { status: 503, error: slipwayError('SERVICE_UNAVAILABLE', why.message) };
  }

  private overloaded(): Shed | null {
    if (this.shuttingDown)
      return {
        reason: 'shutting_down',
        message: 'Slipway is shutting down: nothing was submitted; send to another instance or again in a moment',
      };
    const { maxInFlight, maxEventLoopDelayMs } = this.limits;
    if (maxInFlight > 0 && this.inProgress >= maxInFlight) {
      return {
        reason: 'in_flight',
        message: `Slipway is over capacity (${maxInFlight} requests in progress, maxInFlightRequests): nothing was submitted; retry after a second`,
      };
    }
    if (maxEventLoopDelayMs > 0 && this.delayMs > maxEventLoopDelayMs) {
      return {
        reason: 'event_loop',
        message: `Slipway is over capacity (its event loop runs ${Math.round(this.delayMs)} ms late, maxEventLoopDelayMs ${maxEventLoopDelayMs}): nothing was submitted; retry after a second`,
      };
    }
    return null;
  }
}

/** An extra connection past the per-address limit is closed after this long without a request. */
const OVER_LIMIT_IDLE_MS = 2_000;
