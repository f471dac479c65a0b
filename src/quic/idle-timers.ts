/**
 * Whether a connection is still alive (RFC 9000 §10.1): the idle time-out, ours or the
 * peer's if shorter, restarted by what arrives and by the first ack-eliciting packet sent
 * after it; the keep-alive PINGs that defer it; and the unanswered time-out, which ends a
 * connection whose peer takes nothing of what we send. Both count at least three probe
 * time-outs, which loss recovery knows. Its own file because these deadlines are one concern,
 * kept apart from loss recovery's timer that the connection reads beside them.
 */
import type { LossRecovery } from './loss-recovery';

export class IdleTimers {
  /** The idle time-out in force (ms; 0: none): ours, or the peer's if shorter. */
  private idleMs: number;
  /** When a packet of the peer's was last processed. */
  private lastReceived: number;
  private lastSentAt: number;
  /** When the first ack-eliciting packet after the last one received went out. */
  private lastActivity = 0;

  /** Times in ms; `keepAliveMs` and `unansweredMs` 0: never (see ConnectionSettings). */
  constructor(
    now: number,
    private readonly localIdleMs: number,
    private readonly keepAliveMs: number,
    private readonly unansweredMs: number,
    private readonly recovery: Pick<LossRecovery, 'ptoDuration' | 'unansweredSince'>,
  ) {
    this.idleMs = localIdleMs;
    this.lastReceived = now;
    this.lastSentAt = now;
  }

  /** When a datagram last went out. */
  get lastSent(): number {
    return this.lastSentAt;
  }

  /** The peer's max_idle_timeout: the shorter of the two counts, 0 meaning none. */
  adoptPeerIdleTimeout(peerMs: number): void {
    const local = this.localIdleMs;
    this.idleMs = peerMs === 0 ? local : local === 0 ? peerMs : Math.min(local, peerMs);
  }

  /** A packet of the peer's was processed: the idle timer restarts. */
  received(now: number): void {
    this.lastReceived = now;
  }

  /** A datagram went out; `ackEliciting`: it carried an ack-eliciting packet. */
  sent(ackEliciting: boolean, now: number): void {
    this.lastSentAt = now;
    // The idle timer restarts with the first ack-eliciting packet sent after one was received, not with every one (RFC 9000 §10.1).
    if (ackEliciting && this.lastActivity <= this.lastReceived) this.lastActivity = now;
  }

  /** Whether a keep-alive PING is owed now. */
  pingDue(now: number): boolean {
    return this.keepAliveMs > 0 && now - this.lastSentAt >= this.keepAliveMs;
  }

  /** When the next keep-alive PING is owed (Infinity: none). */
  keepAliveDeadline(): number {
    return this.keepAliveMs > 0 ? this.lastSentAt + this.keepAliveMs : Infinity;
  }

  /** When the connection ends for want of life (Infinity: never); `established`: whether the unanswered time-out applies. */
  deadline(established: boolean): number {
    return Math.min(this.idleDeadline(), established ? this.unansweredDeadline() : Infinity);
  }

  /** Why the connection is over at `now` (idle, or nothing it sent acknowledged), or undefined while it lives. */
  expired(now: number, established: boolean): string | undefined {
    if (now >= this.idleDeadline()) return `idle for ${this.idleMs} ms`;
    if (established && now >= this.unansweredDeadline())
      return `nothing acknowledged for ${Math.round(now - this.recovery.unansweredSince)} ms`;
    return undefined;
  }

  private idleDeadline(): number {
    if (this.idleMs === 0) return Infinity;
    // At least three probe time-outs, so that a slow path is not mistaken for an idle one (RFC 9000 §10.1).
    return Math.max(this.lastReceived, this.lastActivity) + Math.max(this.idleMs, 3 * this.recovery.ptoDuration('application'));
  }

  /** When what we sent has waited too long with nothing of it acknowledged. */
  private unansweredDeadline(): number {
    const since = this.recovery.unansweredSince;
    if (this.unansweredMs === 0 || since === Infinity) return Infinity;
    return since + Math.max(this.unansweredMs, 3 * this.recovery.ptoDuration('application'));
  }
}
