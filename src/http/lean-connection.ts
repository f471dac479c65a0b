/**
 * One lean-http connection as a state machine without I/O (lean-http.ts is its driver, the
 * one owner of the socket, the timer and the answers). It is fed what happens — bytes, the
 * client's FIN, an answer written, a time-out, the gateway closing, the socket closed — and
 * answers with the one step the driver takes next; what may happen next is read from its
 * phase, one value, as Agave's tpu-client-next reads a connection's `ConnectionState`.
 * Tested without sockets (test/http/lean-connection.test.ts).
 *
 *   reading-head ── head read and admitted ──▶ reading-body ── body whole ──▶ serving
 *        ▲                                                                      │
 *        └──────────────────── answered, kept alive ────────────────────────────┘
 *
 *   reading-head / reading-body ── outside the form, refused on arrival, not whole in
 *   time, or cut short by the client's FIN ──▶ handed-over (node:http takes the connection
 *   with every byte not yet served)
 *   any phase ── answered with Connection: close, the client's FIN after its last request,
 *   idle, or the socket closed ──▶ closed
 *
 * Admission is counted from a request's head (as node:http's path counts a request once its
 * headers have come) to its answer, and given back exactly once on every way out.
 */
import type { ApiKeyRecord } from '../stores/key-store';
import { readLeanHead, type LeanHead } from './lean-request';

/** Why the connection went to node:http (the label of slipway_http_lean_handovers_total). */
export type HandOverReason = 'form' | 'incomplete' | 'refused';

export interface ReadingHead {
  readonly kind: 'reading-head';
}
export interface ReadingBody {
  readonly kind: 'reading-body';
  readonly head: LeanHead;
  readonly key: ApiKeyRecord;
}
/** A request read whole and admitted, being answered. */
export interface Serving {
  readonly kind: 'serving';
  readonly head: LeanHead;
  readonly key: ApiKeyRecord;
  /** The body, as UTF-8 text. */
  readonly body: string;
}
export interface HandedOver {
  readonly kind: 'handed-over';
  readonly reason: HandOverReason;
}
export interface Closed {
  readonly kind: 'closed';
}
export type LeanPhase = ReadingHead | ReadingBody | Serving | HandedOver | Closed;

/**
 * What the driver does next: `wait` (for bytes, or for the answer in progress), `serve` the
 * request in `phase`, `hand-over` the connection and `takeRest()` to node:http, `finish`
 * (end it after what was written), `destroy` it (idle: nothing owed).
 */
export type LeanStep = 'wait' | 'serve' | 'hand-over' | 'finish' | 'destroy';

/** Admission as lean HTTP sees it (lean-http.ts makes it from the authenticator and `Admission`). */
export interface LeanGate {
  /**
   * The key of a request whose head has come, counted in progress until `leave`; null when it
   * is refused on arrival (unknown key, over capacity, the key's share taken): node:http's
   * path then answers it. `begunBeforeClose`: it began before the gateway started closing.
   */
  enter(apiKey: string, begunBeforeClose: boolean): ApiKeyRecord | null;
  leave(key: ApiKeyRecord): void;
}

export interface LeanLimits {
  /** The largest head lean HTTP reads; a larger one is node:http's to judge. */
  readonly maxHeadBytes: number;
  readonly bodyLimit: number;
}

const READING_HEAD: ReadingHead = { kind: 'reading-head' };
const CLOSED: Closed = { kind: 'closed' };

export class LeanConnection {
  phase: LeanPhase = READING_HEAD;
  /** What has come and not been served: one buffer, and the chunks since (merged only when there is enough to read on). */
  private pending: Buffer | null = null;
  private parts: Buffer[] = [];
  private partsLength = 0;
  /** The client has ended its side: what it sent is answered, then the connection ends. */
  private peerEnded = false;
  /** The gateway has started closing (a connection is only adopted before it does). */
  private gatewayClosing = false;
  /** Whether the request now arriving began before the gateway started closing (then it is served, as node:http serves it). */
  private begunBeforeClose = true;
  /** No request has been served yet: the wait for the first one runs even before a byte has come. */
  private fresh = true;

  constructor(
    private readonly limits: LeanLimits,
    private readonly gate: LeanGate,
  ) {}

  /** Bytes held unserved. */
  get buffered(): number {
    return (this.pending?.length ?? 0) + this.partsLength;
  }

  /** Between requests with nothing held: it may be closed without cutting anything off. */
  get idle(): boolean {
    return this.phase.kind === 'reading-head' && this.buffered === 0;
  }

  /** Still lean HTTP's (not handed over, not closed). */
  get open(): boolean {
    return this.phase.kind !== 'handed-over' && this.phase.kind !== 'closed';
  }

  /**
   * Whether a request is due and has not arrived whole: the driver runs its wait (after which
   * `waitExpired`) exactly while this holds. Not between requests once one has been served:
   * the idle time-out applies there.
   */
  get awaitingRequest(): boolean {
    const { kind } = this.phase;
    return kind === 'reading-body' || (kind === 'reading-head' && (this.fresh || this.buffered > 0));
  }

  received(chunk: Buffer): LeanStep {
    if (!this.open) return 'wait';
    if (this.phase.kind === 'reading-head' && this.buffered === 0) this.begunBeforeClose = !this.gatewayClosing;
    this.parts.push(chunk);
    this.partsLength += chunk.length;
    if (this.phase.kind === 'serving') return 'wait';
    // A body still on its way is read on once all of it has come, not re-read chunk by chunk.
    if (this.phase.kind === 'reading-body' && this.buffered < this.phase.head.length) return 'wait';
    return this.advance();
  }

  /** The client's FIN: what it sent whole is answered, a request it cut short is node:http's (400), and then the end. */
  peerEnd(): LeanStep {
    this.peerEnded = true;
    return this.phase.kind === 'serving' || !this.open ? 'wait' : this.advance();
  }

  /**
   * The answer to `request` has been written (or could not be: the socket is gone): its
   * places in flight are given back, and the next request is read. `close`: the answer said
   * Connection: close (the client asked, or the gateway is closing).
   */
  answered(request: Serving, close: boolean): LeanStep {
    this.gate.leave(request.key);
    if (this.phase !== request) return 'wait';
    if (close) return this.end();
    this.phase = READING_HEAD;
    this.fresh = false;
    this.begunBeforeClose = !this.gatewayClosing;
    return this.advance();
  }

  /** The wait for a request ran out. */
  waitExpired(): LeanStep {
    return this.awaitingRequest ? this.handOver('incomplete') : 'wait';
  }

  /** The keep-alive time-out: only an idle connection is closed by it. */
  idleExpired(): LeanStep {
    return this.idle ? this.destroy() : 'wait';
  }

  /**
   * The gateway started closing: an idle connection is closed now, a busy one after its
   * answer. A request whose head has not all come is no longer in progress (node:http
   * refuses it 503); one whose head has come is served.
   */
  closeGateway(): LeanStep {
    this.gatewayClosing = true;
    if (this.idle) return this.destroy();
    if (this.phase.kind === 'reading-head') this.begunBeforeClose = false;
    return 'wait';
  }

  /** The socket closed (or failed): a request admitted on its head and never served gives its places back. */
  closed(): void {
    this.release();
    if (this.phase.kind !== 'handed-over') this.phase = CLOSED;
  }

  /** Every byte not served, for node:http after `hand-over`; lean HTTP holds none afterwards. */
  takeRest(): Buffer | null {
    this.merge();
    const rest = this.pending;
    this.pending = null;
    return rest;
  }

  /** Reads on from what has come: the next request's head, then its body, as far as they go. */
  private advance(): LeanStep {
    this.merge();
    const pending = this.pending;
    if (pending === null) return this.peerEnded ? this.end() : 'wait';
    if (this.phase.kind === 'reading-head') {
      const head = readLeanHead(pending, this.limits.maxHeadBytes, this.limits.bodyLimit);
      if (head === 'other') return this.handOver('form');
      if (head === 'incomplete') return this.peerEnded ? this.handOver('incomplete') : 'wait';
      const key = this.gate.enter(head.apiKey, this.begunBeforeClose);
      if (key === null) return this.handOver('refused');
      this.phase = { kind: 'reading-body', head, key };
    }
    if (this.phase.kind !== 'reading-body') return 'wait';
    const { head, key } = this.phase;
    if (pending.length < head.length) return this.peerEnded ? this.handOver('incomplete') : 'wait';
    const body = pending.toString('utf8', head.bodyStart, head.length);
    this.pending = head.length === pending.length ? null : pending.subarray(head.length);
    this.phase = { kind: 'serving', head, key, body };
    return 'serve';
  }

  private handOver(reason: HandOverReason): LeanStep {
    this.release();
    this.phase = { kind: 'handed-over', reason };
    return 'hand-over';
  }

  private end(): LeanStep {
    this.release();
    this.phase = CLOSED;
    return 'finish';
  }

  private destroy(): LeanStep {
    this.phase = CLOSED;
    return 'destroy';
  }

  /** Gives back the places of a request admitted on its head and not served (a served one gives them back in `answered`). */
  private release(): void {
    if (this.phase.kind === 'reading-body') this.gate.leave(this.phase.key);
  }

  private merge(): void {
    if (this.parts.length === 0) return;
    // One chunk onto nothing held is kept as it is: no copy for a request that came in one piece.
    if (this.pending === null && this.parts.length === 1) this.pending = this.parts[0]!;
    else this.pending = Buffer.concat(this.pending === null ? this.parts : [this.pending, ...this.parts]);
    this.parts.length = 0;
    this.partsLength = 0;
  }
}
