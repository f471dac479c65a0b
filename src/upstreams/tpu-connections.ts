/**
 * The TPU route's connections: one per leader, opened ahead of its turn, reused while it
 * leads and kept alive between turns, at most `maxConnections` (the least recently used
 * closed first), over one UDP socket. A leader whose connections keep failing (refused,
 * stalled: nothing acknowledged for 2 s; closed by its side) is skipped for a back-off that
 * doubles with each failure (250 ms to 30 s); one acknowledged transaction clears it.
 * Per-leader metrics follow.
 */
import type { ConnectionEvent } from '../quic/connection';
import { clientTls, type TlsIdentity } from '../quic/tpu-handshakes';
import { QuicClientEndpoint, type EndpointConnection } from '../quic/udp-endpoint';
import { tpuConnectionClosesTotal, tpuConnections, tpuDeliveredTotal, tpuLeaderBackoff, tpuSendsTotal } from '../metrics/metrics';
import type { TpuAddress } from './cluster-nodes';

const BACKOFF_FIRST_MS = 250;
const BACKOFF_MAX_MS = 30_000;
/** Firedancer closes a connection idle for 10 s, Agave for 30 s: a PING every 4 s keeps it. */
const KEEP_ALIVE_MS = 4_000;
const IDLE_TIMEOUT_MS = 10_000;
/**
 * A leader that acknowledges nothing we sent for this long is stalled, even if its own
 * packets still arrive (which keeps the idle time-out from firing): by then a transaction
 * has missed the 4-slot window it was sent for. Its connection is closed and it backs off.
 */
const UNANSWERED_TIMEOUT_MS = 2_000;
/** Transactions one connection may hold while waiting for stream credit. */
const MAX_WAITING = 1_024;

export interface LeaderHealth {
  readonly leader: string;
  readonly address: string;
  readonly state: 'connecting' | 'connected' | 'idle' | 'backing-off';
  readonly sent: number;
  readonly delivered: number;
  readonly failures: number;
  readonly backoffUntil: number;
  readonly lastError: string | null;
}

interface Leader {
  readonly identity: string;
  address: TpuAddress;
  entry: EndpointConnection<number> | undefined;
  established: boolean;
  failures: number;
  backoffUntil: number;
  lastUsed: number;
  sent: number;
  delivered: number;
  lastError: string | null;
}

export class LeaderConnections {
  private readonly endpoint: QuicClientEndpoint;
  private readonly leaders = new Map<string, Leader>();

  constructor(
    private readonly upstream: string,
    private readonly identity: TlsIdentity,
    private readonly maxConnections: number,
    private readonly clock: () => number = Date.now,
  ) {
    this.endpoint = QuicClientEndpoint.create();
  }

  /** Queues `tx` for `leader`; null when queued, else why not. */
  send(leader: string, address: TpuAddress, tx: Buffer): string | null {
    const state = this.connection(leader, address);
    if (typeof state === 'string') {
      tpuSendsTotal.inc({ upstream: this.upstream, leader, outcome: 'refused' });
      return state;
    }
    if (!this.endpoint.send(state.entry!, tx, 0)) {
      tpuSendsTotal.inc({ upstream: this.upstream, leader, outcome: 'refused' });
      return `the connection to leader ${leader} has ${MAX_WAITING} transactions waiting for stream credit`;
    }
    state.sent++;
    tpuSendsTotal.inc({ upstream: this.upstream, leader, outcome: 'queued' });
    return null;
  }

  /** Opens the connection to `leader` ahead of its turn (a no-op if open or backing off). */
  prepare(leader: string, address: TpuAddress): void {
    this.connection(leader, address);
  }

  private connection(identity: string, address: TpuAddress): Leader | string {
    const now = this.clock();
    let leader = this.leaders.get(identity);
    if (leader === undefined) {
      leader = {
        identity,
        address,
        entry: undefined,
        established: false,
        failures: 0,
        backoffUntil: 0,
        lastUsed: now,
        sent: 0,
        delivered: 0,
        lastError: null,
      };
      this.leaders.set(identity, leader);
    }
    leader.lastUsed = now;
    if (leader.address.host !== address.host || leader.address.port !== address.port) {
      // The leader moved: the old connection goes, the new address is tried at once.
      this.drop(leader, 'its address changed');
      leader.address = address;
      leader.backoffUntil = 0;
    }
    if (leader.backoffUntil > now)
      return `leader ${identity} is skipped for ${leader.backoffUntil - now} ms after ${leader.failures} failed connection${leader.failures === 1 ? '' : 's'} (${leader.lastError})`;
    if (leader.entry === undefined || leader.entry.connection.isClosed) this.open(leader);
    return leader;
  }

  private open(leader: Leader): void {
    this.evict();
    leader.established = false;
    const entry: EndpointConnection<number> = this.endpoint.connect<number>(
      leader.address.host,
      leader.address.port,
      {
        tls: clientTls(this.identity),
        idleTimeoutMs: IDLE_TIMEOUT_MS,
        keepAliveMs: KEEP_ALIVE_MS,
        unansweredTimeoutMs: UNANSWERED_TIMEOUT_MS,
        maxWaiting: MAX_WAITING,
      },
      (events) => this.onEvents(leader, entry, events),
    );
    leader.entry = entry;
    tpuConnections.set({ upstream: this.upstream }, this.openCount());
  }

  private onEvents(leader: Leader, entry: EndpointConnection<number>, events: ConnectionEvent<number>[]): void {
    for (const event of events) {
      if (event.type === 'established') {
        leader.established = true;
      } else if (event.type === 'delivered') {
        leader.delivered++;
        tpuDeliveredTotal.inc({ upstream: this.upstream, leader: leader.identity });
        if (leader.failures > 0) {
          leader.failures = 0;
          tpuLeaderBackoff.set({ upstream: this.upstream, leader: leader.identity }, 0);
        }
      } else if (event.type === 'closed') {
        tpuConnectionClosesTotal.inc({ upstream: this.upstream, leader: leader.identity, by: event.by });
        if (leader.entry === entry) leader.entry = undefined;
        tpuConnections.set({ upstream: this.upstream }, this.openCount());
        // An idle close with nothing held, or our own close, is no failure.
        if (event.by === 'local' || (event.by === 'idle' && event.undelivered.length === 0 && leader.established)) continue;
        this.failed(
          leader,
          `${event.by === 'peer' ? `closed by the leader (code ${event.code}${event.reason === '' ? '' : `: ${event.reason}`})` : event.by === 'idle' ? (leader.established ? `no answer (stalled: ${event.reason})` : 'no handshake (refused or unreachable)') : 'stateless reset'}`,
        );
      }
    }
  }

  private failed(leader: Leader, why: string): void {
    leader.failures++;
    leader.lastError = why;
    leader.backoffUntil = this.clock() + Math.min(BACKOFF_MAX_MS, BACKOFF_FIRST_MS * 2 ** (leader.failures - 1));
    tpuLeaderBackoff.set({ upstream: this.upstream, leader: leader.identity }, 1);
  }

  private openCount(): number {
    let open = 0;
    for (const leader of this.leaders.values()) if (leader.entry !== undefined) open++;
    return open;
  }

  /** Makes room for one more connection: the least recently used leader's goes, and its series. */
  private evict(): void {
    while (this.openCount() >= this.maxConnections) {
      let oldest: Leader | undefined;
      for (const leader of this.leaders.values())
        if (leader.entry !== undefined && (oldest === undefined || leader.lastUsed < oldest.lastUsed)) oldest = leader;
      if (oldest === undefined) return;
      this.drop(oldest, 'evicted from the connection cache');
      this.leaders.delete(oldest.identity);
      for (const metric of [tpuDeliveredTotal, tpuLeaderBackoff]) metric.remove({ upstream: this.upstream, leader: oldest.identity });
      for (const outcome of ['queued', 'refused']) tpuSendsTotal.remove({ upstream: this.upstream, leader: oldest.identity, outcome });
      for (const by of ['peer', 'idle', 'reset', 'local'])
        tpuConnectionClosesTotal.remove({ upstream: this.upstream, leader: oldest.identity, by });
    }
  }

  private drop(leader: Leader, why: string): void {
    if (leader.entry === undefined) return;
    this.endpoint.closeConnection(leader.entry, 0, why);
    leader.entry = undefined;
  }

  health(): LeaderHealth[] {
    const now = this.clock();
    return [...this.leaders.values()].map((leader) => ({
      leader: leader.identity,
      address: `${leader.address.host}:${leader.address.port}`,
      state:
        leader.backoffUntil > now ? 'backing-off' : leader.entry === undefined ? 'idle' : leader.established ? 'connected' : 'connecting',
      sent: leader.sent,
      delivered: leader.delivered,
      failures: leader.failures,
      backoffUntil: leader.backoffUntil,
      lastError: leader.lastError,
    }));
  }

  async close(): Promise<void> {
    await this.endpoint.close();
  }
}
