/** Handing one transaction to every upstream of its route, and the journal state that follows. */
import type { TransactionState, WrittenReason } from '../stores/journal';
import type { SendOptions, Upstream } from '../upstreams/upstream';
import type { ValidatedTransaction } from '../validation/validate-transaction';

/** What became of one transaction handed to every upstream of its route. */
export interface RouteOutcome {
  /** Upstreams that took it. */
  readonly accepted: number;
  /** Why it will never land, when an upstream knows at once. */
  readonly dropped: string | null;
  /** Why each upstream that failed did. */
  readonly failures: string[];
  /** The leaders routes that pick leaders (the TPU) handed it to. */
  readonly contacted: { upstream: string; leader: string; address: string }[];
}

export function sendToRoute(route: readonly Upstream[], tx: ValidatedTransaction, options: SendOptions): Promise<RouteOutcome> {
  // One upstream, the usual route: its answer alone, without allSettled's array of results.
  if (route.length === 1) return sendToOne(route[0]!, tx, options);
  return sendToAll(route, tx, options);
}

function sendToOne(upstream: Upstream, tx: ValidatedTransaction, options: SendOptions): Promise<RouteOutcome> {
  return upstream.sendTransaction(tx, options).then(
    (result) => ({
      accepted: 1,
      dropped: result.dropped,
      failures: [],
      contacted: result.contacted === undefined ? [] : result.contacted.map((leader) => ({ upstream: upstream.name, ...leader })),
    }),
    (error: unknown) => ({ accepted: 0, dropped: null, failures: [`${upstream.name}: ${(error as Error).message}`], contacted: [] }),
  );
}

async function sendToAll(route: readonly Upstream[], tx: ValidatedTransaction, options: SendOptions): Promise<RouteOutcome> {
  const results = await Promise.allSettled(route.map((upstream) => upstream.sendTransaction(tx, options)));
  let accepted = 0;
  let dropped: string | null = null;
  const failures: string[] = [];
  const contacted: RouteOutcome['contacted'] = [];
  results.forEach((result, i) => {
    if (result.status === 'fulfilled') {
      accepted += 1;
      dropped ??= result.value.dropped;
      for (const leader of result.value.contacted ?? []) contacted.push({ upstream: route[i]!.name, ...leader });
    } else {
      failures.push(`${route[i]!.name}: ${(result.reason as Error).message}`);
    }
  });
  return { accepted, dropped, failures, contacted };
}

/** A transaction's state as journaled, with why (a code and words) when it was not forwarded. */
export type JournalState = { readonly state: TransactionState } & WrittenReason;

/** The journal state of a transaction after its route's first answer. */
export function stateAfter(outcome: RouteOutcome): JournalState {
  if (outcome.accepted === 0)
    return { state: 'rejected', reasonCode: 'upstream_unreachable', reason: `no upstream took it: ${outcome.failures.join('; ')}` };
  if (outcome.dropped !== null) {
    // The network knows no such blockhash: it expired (or was never the cluster's); the words say so, as the code does.
    if (/blockhash not found/i.test(outcome.dropped))
      return {
        state: 'expired',
        reasonCode: 'blockhash_expired',
        reason: `its blockhash expired before it landed (the network answered: ${outcome.dropped}); sign it again with a new blockhash`,
      };
    return { state: 'rejected', reasonCode: 'dropped_by_network', reason: `the network dropped it: ${outcome.dropped}` };
  }
  return { state: 'forwarded' };
}
