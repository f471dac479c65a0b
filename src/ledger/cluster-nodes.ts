/**
 * The local cluster's validators as `getClusterNodes` lists them, in Agave's
 * `RpcContactInfo` shape (every field, camel-cased, in its order): each validator of the
 * schedule, with the address of its TPU's QUIC port once it listens, and the JSON-RPC
 * address of the node that serves them on the first. Everything this cluster does not have
 * (gossip, turbine, repair, votes, forwards, WebSocket subscriptions, UDP TPU, which Agave
 * no longer takes) is null.
 */
/** The Solana version the local cluster's nodes claim (getClusterNodes, getVersion), for clients that check features by version. */
export const SOLANA_CORE_VERSION = '2.3.0';

export interface RpcContactInfo {
  readonly pubkey: string;
  readonly gossip: string | null;
  readonly tvu: string | null;
  readonly tpu: string | null;
  readonly tpuQuic: string | null;
  readonly tpuForwards: string | null;
  readonly tpuForwardsQuic: string | null;
  readonly tpuVote: string | null;
  readonly serveRepair: string | null;
  readonly rpc: string | null;
  readonly pubsub: string | null;
  readonly version: string | null;
  readonly clientId: string | null;
  readonly featureSet: number | null;
  readonly shredVersion: number | null;
}

/** As `getVersion`'s `feature-set` says. */
const FEATURE_SET = 0;

export class ClusterNodes {
  private readonly tpuQuic = new Map<string, string>();
  private rpc: string | null = null;

  constructor(private readonly identities: readonly string[]) {}

  /** Where `identity`'s TPU takes QUIC connections (`host:port`). */
  setTpuQuic(identity: string, address: string): void {
    this.tpuQuic.set(identity, address);
  }

  /** The JSON-RPC node's own `host:port`, listed on the first validator. */
  setRpc(address: string): void {
    this.rpc = address;
  }

  tpuQuicOf(identity: string): string | null {
    return this.tpuQuic.get(identity) ?? null;
  }

  list(): RpcContactInfo[] {
    return this.identities.map((pubkey, index) => ({
      pubkey,
      gossip: null,
      tvu: null,
      tpu: null,
      tpuQuic: this.tpuQuicOf(pubkey),
      tpuForwards: null,
      tpuForwardsQuic: null,
      tpuVote: null,
      serveRepair: null,
      rpc: index === 0 ? this.rpc : null,
      pubsub: null,
      version: SOLANA_CORE_VERSION,
      clientId: null,
      featureSet: FEATURE_SET,
      shredVersion: null,
    }));
  }
}
