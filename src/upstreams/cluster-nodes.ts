/**
 * Where each validator's TPU listens, from `getClusterNodes` on the operator's RPC nodes,
 * refreshed on a timer of its own (contact information changes rarely; the schedule is
 * followed elsewhere). A validator's QUIC TPU is its `tpuQuic`; when a node reports only
 * `tpu`, the QUIC port is `tpu` + 6, as Agave's own client assumes (tpu-client-next). A
 * node with neither has no address, and the TPU route says so instead of guessing.
 */
import { JsonRpcClient } from './json-rpc-client';
import { resultOf } from './solana-rpc';

export interface TpuAddress {
  readonly host: string;
  readonly port: number;
}

export interface ClusterNodes {
  /** The QUIC TPU address of `identity`, or why there is none. */
  tpuOf(identity: string): TpuAddress | string;
  close(): Promise<void>;
}

/** Cluster nodes run to many megabytes on mainnet (thousands of nodes). */
const MAX_ANSWER_BYTES = 64 * 1024 * 1024;
/** The QUIC port Agave derives from the UDP TPU port. */
const QUIC_PORT_OFFSET = 6;

interface ContactInfo {
  readonly pubkey?: unknown;
  readonly tpu?: unknown;
  readonly tpuQuic?: unknown;
}

/** `host:port` (an IPv6 host in brackets) as a node reports it; undefined if it is not one. */
export function parseSocketAddress(value: unknown): TpuAddress | undefined {
  if (typeof value !== 'string') return undefined;
  const match = /^(?:\[([0-9a-fA-F:.]+)\]|([^:\s]+)):(\d{1,5})$/.exec(value);
  if (match === null) return undefined;
  const port = Number(match[3]);
  if (port < 1 || port > 65_535) return undefined;
  return { host: (match[1] ?? match[2])!, port };
}

export function tpuAddressOf(node: ContactInfo): TpuAddress | undefined {
  const quic = parseSocketAddress(node.tpuQuic);
  if (quic !== undefined) return quic;
  const udp = parseSocketAddress(node.tpu);
  return udp === undefined || udp.port + QUIC_PORT_OFFSET > 65_535 ? undefined : { host: udp.host, port: udp.port + QUIC_PORT_OFFSET };
}

export function createRpcClusterNodes(options: { urls: readonly string[]; timeoutMs: number; refreshMs: number }): ClusterNodes {
  const client = new JsonRpcClient({
    name: 'cluster-nodes',
    urls: options.urls,
    timeoutMs: options.timeoutMs,
    maxAnswerBytes: MAX_ANSWER_BYTES,
  });
  let nodes = new Map<string, TpuAddress | undefined>();
  let lastError = 'no answer yet from the RPC nodes';
  let fetched = false;
  const refresh = async () => {
    try {
      const list = resultOf<ContactInfo[]>(await client.call('getClusterNodes', []), 'getClusterNodes');
      if (!Array.isArray(list)) throw new Error('getClusterNodes did not answer a list');
      nodes = new Map(list.filter((node) => typeof node?.pubkey === 'string').map((node) => [node.pubkey as string, tpuAddressOf(node)]));
      fetched = true;
    } catch (error) {
      lastError = error instanceof Error ? error.message : String(error);
    }
  };
  const first = refresh();
  const timer = setInterval(() => void refresh(), options.refreshMs);
  timer.unref();
  return {
    tpuOf(identity) {
      if (!fetched) return `the cluster's nodes are not known yet (getClusterNodes: ${lastError})`;
      if (!nodes.has(identity)) return `leader ${identity} is not among the cluster's nodes`;
      return nodes.get(identity) ?? `leader ${identity} advertises no TPU address (neither tpuQuic nor tpu)`;
    },
    async close() {
      clearInterval(timer);
      await first;
      await client.close();
    },
  };
}
