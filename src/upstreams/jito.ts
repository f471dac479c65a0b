/**
 * Jito block engines (one URL per region) as a route: bundles go to `/bundles` on every
 * region at once, single transactions to `/transactions` (with `bundleOnly=true` when they
 * pay a tip themselves); bundle outcomes are read with
 * `getInflightBundleStatuses`. A bundle that pays no tip is refused before it is sent:
 * the engines would drop it without a word.
 */
import bs58 from 'bs58';
import type { ValidatedTransaction } from '../validation/validate-transaction';
import { JsonRpcClient, alreadyProcessed } from './json-rpc-client';
import { resultOf } from './solana-rpc';
import type { BundleStatusView, Upstream } from './upstream';

/** Tip accounts change rarely; asking once in a while is enough. */
const TIP_ACCOUNTS_TTL_MS = 10 * 60_000;
const SYSTEM_PROGRAM = Buffer.alloc(32);
const SYSTEM_TRANSFER = 2;

export interface JitoUpstreamConfig {
  readonly name: string;
  /** Block-engine API bases, e.g. https://ny.mainnet.block-engine.jito.wtf/api/v1. */
  readonly urls: readonly string[];
  readonly protected: boolean;
  readonly timeoutMs: number;
  readonly maxAnswerBytes: number;
  readonly minTipLamports: number;
  readonly requireTip: boolean;
}

export function createJitoUpstream(config: JitoUpstreamConfig): Upstream {
  const client = new JsonRpcClient({
    name: config.name,
    urls: config.urls,
    timeoutMs: config.timeoutMs,
    maxAnswerBytes: config.maxAnswerBytes,
  });
  let tipAccounts: { accounts: Set<string>; fetchedAt: number } | undefined;

  async function currentTipAccounts(): Promise<Set<string>> {
    if (tipAccounts === undefined || Date.now() - tipAccounts.fetchedAt > TIP_ACCOUNTS_TTL_MS) {
      const list = resultOf<string[]>(await client.call('getTipAccounts', [], '/bundles'), 'getTipAccounts');
      tipAccounts = { accounts: new Set(list), fetchedAt: Date.now() };
    }
    return tipAccounts.accounts;
  }

  const unsupported = (what: string) => async (): Promise<never> => {
    throw new Error(`a block engine does not ${what}`);
  };

  return {
    name: config.name,
    kind: 'jito',
    protected: config.protected,
    simulates: false,
    tracked: true,
    getSlot: unsupported('report slots'),
    simulate: unsupported('simulate transactions'),
    async sendTransaction(tx) {
      // A transaction that pays its own tip goes as a bundle of one (`bundleOnly`): it then
      // only lands whole, in the auction. One without a tip cannot: it goes plain, still
      // private to the engine. Tip accounts not known (the engine did not say) → plain.
      const tipped = await currentTipAccounts().then(
        (accounts) => tipLamports([tx], accounts) >= config.minTipLamports,
        () => false,
      );
      const results = await client.callAll(
        'sendTransaction',
        [tx.base64, { encoding: 'base64' }],
        tipped ? '/transactions?bundleOnly=true' : '/transactions',
      );
      if (results.some((r) => r.status === 'fulfilled' && ('result' in r.value || alreadyProcessed(r.value)))) return { dropped: null };
      throw new Error(`no block engine took the transaction: ${describeFailures(results)}`);
    },
    async admitBundle(txs) {
      if (!config.requireTip) return null;
      const tipped = tipLamports(txs, await currentTipAccounts());
      if (tipped >= config.minTipLamports) return null;
      return `the bundle tips ${tipped} lamports to the block engine's tip accounts; at least ${config.minTipLamports} are needed (a system transfer to one of the accounts getTipAccounts lists)`;
    },
    async sendBundle(_bundleId, txs) {
      const results = await client.callAll('sendBundle', [txs.map((tx) => tx.base64), { encoding: 'base64' }], '/bundles');
      if (results.some((r) => r.status === 'fulfilled' && 'result' in r.value)) return { accepted: true };
      const refusals = results.filter((r) => r.status === 'fulfilled');
      if (refusals.length > 0) {
        return {
          accepted: false,
          failedIndex: -1,
          err: null,
          errText: `the block engine refused the bundle: ${describeFailures(results)}`,
          logs: [],
        };
      }
      throw new Error(`no block engine took the bundle: ${describeFailures(results)}`);
    },
    async call(method, params) {
      if (method === 'getTipAccounts' || method === 'getBundleStatuses' || method === 'getInflightBundleStatuses') {
        return client.call(method, params, '/bundles');
      }
      return undefined;
    },
    getSignatureStatuses: unsupported('report signature statuses'),
    async getBundleStatuses(bundleIds) {
      const answer = await client.call('getInflightBundleStatuses', [bundleIds], '/bundles');
      const { value } = resultOf<{ value: ({ status: BundleStatusView['status']; landed_slot: number | null; err?: unknown } | null)[] }>(
        answer,
        'getInflightBundleStatuses',
      );
      return bundleIds.map((_, i) => {
        const entry = value[i];
        if (entry === null || entry === undefined) return { status: 'Invalid', landedSlot: null, reason: null };
        const reason =
          typeof entry.err === 'string'
            ? entry.err
            : entry.status === 'Failed'
              ? 'the block engine reports the bundle failed (it gives no reason)'
              : null;
        return { status: entry.status, landedSlot: entry.landed_slot, reason };
      });
    },
    isBlockhashValid: unsupported('check blockhashes'),
    close: () => client.close(),
  };
}

/** Lamports the transactions move to tip accounts with system transfers. */
export function tipLamports(txs: readonly ValidatedTransaction[], tipAccounts: Set<string>): number {
  let total = 0;
  for (const tx of txs) {
    const keys = tx.wire.staticAccountKeys;
    for (const ix of tx.wire.instructions) {
      const program = keys[ix.programIdIndex];
      if (program === undefined || !program.equals(SYSTEM_PROGRAM) || ix.data.length < 12 || ix.data.readUInt32LE(0) !== SYSTEM_TRANSFER)
        continue;
      const destination = keys[ix.accountIndexes[1] ?? 256];
      if (destination !== undefined && tipAccounts.has(bs58.encode(destination))) total += Number(ix.data.readBigUInt64LE(4));
    }
  }
  return total;
}

function describeFailures(results: PromiseSettledResult<{ result: unknown } | { error: { message: string } }>[]): string {
  return results
    .map((r) => (r.status === 'rejected' ? String((r.reason as Error).message) : 'error' in r.value ? r.value.error.message : 'accepted'))
    .join('; ');
}
