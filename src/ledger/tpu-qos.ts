/**
 * The local cluster's TPU quality of service, after Agave's stake-weighted QoS (SWQoS), kept
 * simple: how many streams (transactions in flight) one connection may have open at once
 * and how many connections one identity may hold, by the identity's share of the stake;
 * optionally, how many new connections one IP address may open per minute.
 *
 * - Unstaked (no stake, or a share below MIN_STAKED_SHARE): `unstakedStreams` streams,
 *   `unstakedConnections` connections.
 * - Staked: `unstakedStreams + share × (TOTAL_STAKED_STREAMS − unstakedStreams)` streams,
 *   rounded down, at most `stakedMaxStreams` (Agave's formula with its constants: 1% of the
 *   stake gives 1,126); `stakedConnections` connections.
 *
 * What is left out: Agave also paces unstaked senders in time (streams per 100 ms) and
 * shares the unstaked connection table among all unstaked peers; a local cluster has few.
 */
import bs58 from 'bs58';
import type { StakeTable } from './stake-table';

/** Agave's QUIC_TOTAL_STAKED_CONCURRENT_STREAMS: what the whole stake shares. */
export const TOTAL_STAKED_STREAMS = 100_000;
/** A share of the stake below this counts as no stake. */
export const MIN_STAKED_SHARE = 1 / 50_000;
const MINUTE_MS = 60_000;

export interface TpuQosSettings {
  readonly unstakedStreams: number;
  readonly stakedMaxStreams: number;
  readonly unstakedConnections: number;
  readonly stakedConnections: number;
  /** New connections one IP address may open per minute; 0: no limit. */
  readonly connectionsPerIpPerMinute: number;
}

export class TpuQos {
  /** Per IP address, when its recent connections were opened (only with a per-IP limit). */
  private readonly opened = new Map<string, number[]>();

  constructor(
    private readonly stakes: StakeTable,
    private readonly settings: TpuQosSettings,
    private readonly now: () => number = Date.now,
  ) {}

  /** The identity's share of the stake, 0 when it counts as unstaked. */
  stakedShare(identity: Buffer | undefined): number {
    if (identity === undefined) return 0;
    const share = this.stakes.shareOf(bs58.encode(identity));
    return share < MIN_STAKED_SHARE ? 0 : share;
  }

  /** Streams one connection of `identity` may have open at once. */
  streamWindow(identity: Buffer | undefined): number {
    const share = this.stakedShare(identity);
    const { unstakedStreams, stakedMaxStreams } = this.settings;
    if (share === 0) return unstakedStreams;
    const scaled = Math.floor(unstakedStreams + share * (TOTAL_STAKED_STREAMS - unstakedStreams));
    return Math.max(unstakedStreams, Math.min(stakedMaxStreams, scaled));
  }

  /** Connections `identity` may hold at once; the endpoint closes the excess with code 4. */
  maxConnections(identity: Buffer | undefined): number {
    return this.stakedShare(identity) === 0 ? this.settings.unstakedConnections : this.settings.stakedConnections;
  }

  /** A reason to refuse a new connection from `remote` (`address:port`), or null. */
  admitAddress(remote: string): string | null {
    const limit = this.settings.connectionsPerIpPerMinute;
    if (limit === 0) return null;
    const address = remote.slice(0, remote.lastIndexOf(':'));
    const time = this.now();
    const recent = (this.opened.get(address) ?? []).filter((at) => time - at < MINUTE_MS);
    if (recent.length >= limit) {
      this.opened.set(address, recent);
      return `more than ${limit} new connections from ${address} in a minute`;
    }
    recent.push(time);
    this.opened.set(address, recent);
    if (this.opened.size > 10_000) this.forgetIdle(time);
    return null;
  }

  private forgetIdle(time: number): void {
    for (const [address, times] of this.opened) if (times.every((at) => time - at >= MINUTE_MS)) this.opened.delete(address);
  }
}
