/**
 * The TPU route: each transaction straight to the QUIC TPU of the leaders of the next
 * `leaderWindows` 4-slot windows from the current slot (default 1: the current slot and the
 * next three, so near the end of a window its successor too; bench:strategy measured one
 * window landing as much as two for half the hand-offs: a copy handed to a leader ahead is
 * the earliest at its price and a leader packs the later of equal priorities first), with
 * the connection of the window after them opened ahead.
 * The schedule and the leaders' addresses come from the operator's RPC nodes (`urls`),
 * which also answer this upstream's reads and statuses. The route refuses clearly when it
 * knows no leader, no address, or when every leader it tried refused. Under anti-MEV the
 * send options name the safe window's trusted leaders, and only they are sent to.
 */
import { createRpcClusterNodes, type ClusterNodes, type TpuAddress } from './cluster-nodes';
import type { LeaderTracker } from './leader-tracker';
import { createRpcLeaderTracker } from './rpc-leader-tracker';
import { createSolanaRpcUpstream } from './solana-rpc';
import { LeaderConnections, type LeaderHealth } from './tpu-connections';
import type { TpuIdentity } from './tpu-identity';
import type { SendOptions, Upstream } from './upstream';
import type { ValidatedTransaction } from '../validation/validate-transaction';

const SLOTS_PER_LEADER = 4;
const CLUSTER_REFRESH_MS = 30_000;

export interface TpuUpstreamConfig {
  readonly name: string;
  readonly urls: readonly string[];
  readonly timeoutMs: number;
  readonly maxAnswerBytes: number;
  readonly identity: TpuIdentity;
  /** Leader windows sent to: the current one and the next `leaderWindows - 1`. */
  readonly leaderWindows: number;
  readonly maxConnections: number;
  /** The longest transaction a TPU takes (1,232 today; 4,096 once v1 transactions are live, SIMD-0296). */
  readonly maxTransactionBytes: number;
  /** How often the current slot is asked for. */
  readonly slotPollMs: number;
  /** Injected in tests; built on `urls` otherwise. */
  readonly tracker?: LeaderTracker;
  readonly nodes?: ClusterNodes;
}

export interface TpuUpstream extends Upstream {
  /** Each leader's connection, sends, deliveries and back-off. */
  leaderHealth(): LeaderHealth[];
  /** The leaders `sendTransaction` would send to now, with their addresses, or why none. */
  targets(): { leader: string; address: string | null; reason: string | null }[] | string;
}

export function createTpuUpstream(config: TpuUpstreamConfig): TpuUpstream {
  const reads = createSolanaRpcUpstream({
    name: config.name,
    urls: config.urls,
    protected: false,
    timeoutMs: config.timeoutMs,
    maxAnswerBytes: config.maxAnswerBytes,
  });
  const tracker = config.tracker ?? createRpcLeaderTracker({ urls: config.urls, timeoutMs: config.timeoutMs, pollMs: config.slotPollMs });
  const nodes = config.nodes ?? createRpcClusterNodes({ urls: config.urls, timeoutMs: config.timeoutMs, refreshMs: CLUSTER_REFRESH_MS });
  const connections = new LeaderConnections(config.name, config.identity, config.maxConnections);
  const sendSlots = config.leaderWindows * SLOTS_PER_LEADER;

  /** The distinct leaders to send to now and to connect ahead to, or why none are known. */
  const upcoming = (): { send: string[]; ahead: string[] } | string => {
    const view = tracker.upcoming(sendSlots + SLOTS_PER_LEADER);
    if (!view.known) return `no leader to send to: ${view.reason}`;
    const send = [...new Set(view.window.leaders.slice(0, Math.max(sendSlots, view.window.leaders.length - SLOTS_PER_LEADER)))];
    const ahead = [...new Set(view.window.leaders.slice(-SLOTS_PER_LEADER))].filter((leader) => !send.includes(leader));
    return { send, ahead };
  };

  const refusal = (text: string) => new Error(`tpu upstream ${config.name}: ${text}`);

  return {
    name: config.name,
    kind: 'tpu',
    // Only the leaders of the next windows see what it sends (under anti-MEV: only the trusted leaders of the safe window).
    protected: true,
    simulates: true,
    tracked: true,
    getSlot: () => reads.getSlot(),
    simulate: (tx) => reads.simulate(tx),
    async sendTransaction(tx: ValidatedTransaction, options: SendOptions) {
      if (tx.wire.bytes.length > config.maxTransactionBytes)
        throw refusal(
          `the transaction is ${tx.wire.bytes.length} bytes; a TPU takes at most ${config.maxTransactionBytes} (maxTransactionBytes)`,
        );
      const leaders = upcoming();
      if (typeof leaders === 'string') throw refusal(leaders);
      const allowed = options.leaders;
      const targets = allowed === undefined ? leaders.send : leaders.send.filter((leader) => allowed.includes(leader));
      if (targets.length === 0) throw refusal(`none of the leaders of the next ${sendSlots} slots may see it (${leaders.send.join(', ')})`);
      const reasons: string[] = [];
      const contacted: { leader: string; address: string }[] = [];
      for (const leader of targets) {
        const address = nodes.tpuOf(leader);
        const why = typeof address === 'string' ? address : connections.send(leader, address, tx.wire.bytes);
        if (why === null) contacted.push({ leader, address: `${(address as TpuAddress).host}:${(address as TpuAddress).port}` });
        else reasons.push(why);
      }
      for (const leader of allowed === undefined ? leaders.ahead : []) {
        const address = nodes.tpuOf(leader);
        if (typeof address !== 'string') connections.prepare(leader, address);
      }
      if (contacted.length === 0) throw refusal(`no leader took it: ${reasons.join('; ')}`);
      return { dropped: null, contacted };
    },
    async admitBundle() {
      return 'a TPU takes transactions one by one: bundles need a block engine (jito) or the embedded ledger to land atomically';
    },
    async sendBundle() {
      throw refusal('a TPU cannot take a bundle atomically: route sendBundle to a jito or embedded upstream');
    },
    call: (method, params) => reads.call(method, params),
    getSignatureStatuses: (signatures) => reads.getSignatureStatuses(signatures),
    async getBundleStatuses() {
      throw refusal('a TPU has no bundle statuses');
    },
    isBlockhashValid: (blockhash) => reads.isBlockhashValid(blockhash),
    leaderHealth: () => connections.health(),
    targets() {
      const leaders = upcoming();
      if (typeof leaders === 'string') return leaders;
      return leaders.send.map((leader) => {
        const address = nodes.tpuOf(leader);
        return typeof address === 'string'
          ? { leader, address: null, reason: address }
          : { leader, address: `${address.host}:${address.port}`, reason: null };
      });
    },
    async close() {
      await connections.close();
      if (config.nodes === undefined) await nodes.close();
      if (config.tracker === undefined) await tracker.close();
      await reads.close();
    },
  };
}
