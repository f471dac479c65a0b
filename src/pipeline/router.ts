/**
 * Chooses the upstreams of each submission from the configured routes: one route per
 * operation, and the anti-MEV route (protected upstreams only) for `anti_mev=1` traffic.
 * A route may hold several upstreams; a submission goes to all of them.
 */
import type { RoutesConfig } from '../config/config-file';
import type { Result } from '../errors/error-catalogue';
import { fail, ok, slipwayError } from '../errors/error-catalogue';
import type { RpcAnswer, Upstream } from '../upstreams/upstream';
import type { SlotWatch } from './slot-watch';

export type Operation = 'sendTransaction' | 'submitBatch' | 'sendBundle';

/** Methods block engines answer; everything else goes to the reads upstream. */
const BUNDLE_METHODS = new Set(['getTipAccounts', 'getBundleStatuses', 'getInflightBundleStatuses']);

export interface Router {
  /** The upstreams that take this submission (anti-MEV does not change bundles' route). */
  route(operation: Operation, antiMev: boolean): Result<readonly Upstream[]>;
  /** Where a route's preflight may run, in order: its upstreams that simulate, then the reads upstream. */
  simulators(route: readonly Upstream[]): readonly Upstream[];
  /** Answers reads and statuses. */
  readonly reads: Upstream;
  byName(name: string): Upstream | undefined;
  /** Answers a JSON-RPC method Slipway does not handle itself. */
  call(method: string, params: readonly unknown[]): Promise<RpcAnswer | undefined>;
  /**
   * `simulateBundle` (Jito-Solana's shape) on the first of the sendBundle route's upstreams,
   * then the reads upstream, that simulates bundles (an embedded ledger, a Jito-Solana RPC
   * node; not a block engine); undefined when none does. `tried`: the upstreams asked.
   */
  simulateBundle(params: readonly unknown[]): Promise<{ answer: RpcAnswer | undefined; tried: string[] }>;
  getSlot(): Promise<number>;
  close(): Promise<void>;
}

/** `slots`, when given, is told every slot `getSlot` reads (the receipts' slot, slot-watch.ts). */
export function createRouter(upstreams: ReadonlyMap<string, Upstream>, routes: RoutesConfig, slots?: SlotWatch): Router {
  const resolve = (names: readonly string[]) => names.map((name) => upstreams.get(name)!);
  const table = {
    sendTransaction: resolve(routes.sendTransaction),
    submitBatch: resolve(routes.submitBatch),
    sendBundle: resolve(routes.sendBundle),
    antiMev: resolve(routes.antiMev),
  };
  const reads = upstreams.get(routes.reads)!;
  const simulatorsOf = new WeakMap<readonly Upstream[], readonly Upstream[]>();
  return {
    route(operation, antiMev) {
      const chosen = antiMev && operation !== 'sendBundle' ? table.antiMev : table[operation];
      if (chosen.length > 0) return ok(chosen);
      return fail(
        slipwayError(
          'ROUTE_NOT_CONFIGURED',
          antiMev && operation !== 'sendBundle'
            ? 'anti_mev=1 is not available on this gateway: no protected upstream is configured'
            : `${operation} is not available on this gateway: no upstream is configured for it`,
        ),
      );
    },
    simulators: (route) => {
      // Routes are the table's own arrays: each one's simulators are worked out once.
      let found = simulatorsOf.get(route);
      if (found === undefined) {
        found = [...new Set([...route.filter((u) => u.simulates), reads])];
        simulatorsOf.set(route, found);
      }
      return found;
    },
    reads,
    byName: (name) => upstreams.get(name),
    async call(method, params) {
      if (BUNDLE_METHODS.has(method)) {
        for (const upstream of table.sendBundle) {
          const answer = await upstream.call(method, params);
          if (answer !== undefined) return answer;
        }
      }
      return reads.call(method, params);
    },
    async simulateBundle(params) {
      const tried: string[] = [];
      for (const upstream of new Set([...table.sendBundle, reads])) {
        tried.push(upstream.name);
        const answer = await upstream.call('simulateBundle', params);
        // A node without the method answers Method not found: the next one may have it.
        if (answer !== undefined && !('error' in answer && answer.error.code === -32601)) return { answer, tried };
      }
      return { answer: undefined, tried };
    },
    async getSlot() {
      const slot = await reads.getSlot();
      slots?.note(slot);
      return slot;
    },
    async close() {
      await Promise.all([...upstreams.values()].map((u) => u.close()));
    },
  };
}
