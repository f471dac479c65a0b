/**
 * Solana RPC nodes as a route: preflight on one healthy node, each send to all of them at
 * once (`skipPreflight`, `maxRetries: 0`: Slipway rebroadcasts itself, see the tracker),
 * reads and statuses from the healthiest. Health, failover and the circuit breaker live
 * in the JSON-RPC client.
 */
import { describeTransactionErrorJson, type TransactionErrorJson } from '../core/transaction-error';
import { JsonRpcClient, alreadyProcessed, type JsonRpcAnswer } from './json-rpc-client';
import type { SignatureStatusView, Upstream } from './upstream';

export interface SolanaRpcUpstreamConfig {
  readonly name: string;
  readonly urls: readonly string[];
  readonly protected: boolean;
  readonly timeoutMs: number;
  readonly maxAnswerBytes: number;
}

/** The value of a JSON-RPC answer, or an error that says which call the node refused and why. */
export function resultOf<T>(answer: JsonRpcAnswer, method: string): T {
  if ('error' in answer) throw new Error(`${method} refused: ${answer.error.message} (${answer.error.code})`);
  return answer.result as T;
}

export function createSolanaRpcUpstream(config: SolanaRpcUpstreamConfig): Upstream {
  const client = new JsonRpcClient({
    name: config.name,
    urls: config.urls,
    timeoutMs: config.timeoutMs,
    maxAnswerBytes: config.maxAnswerBytes,
  });
  return {
    name: config.name,
    kind: 'rpc',
    protected: config.protected,
    simulates: true,
    tracked: true,
    async getSlot() {
      return resultOf<number>(await client.call('getSlot', [{ commitment: 'processed' }]), 'getSlot');
    },
    async simulate(tx) {
      const answer = await client.call('simulateTransaction', [
        tx.base64,
        { encoding: 'base64', commitment: 'processed', sigVerify: false, replaceRecentBlockhash: false },
      ]);
      const { context, value } = resultOf<{
        context: { slot: number };
        value: { err: TransactionErrorJson | null; logs: string[] | null; unitsConsumed?: number };
      }>(answer, 'simulateTransaction');
      return {
        err: value.err,
        errText: value.err === null ? null : describeTransactionErrorJson(value.err),
        logs: value.logs ?? [],
        unitsConsumed: value.unitsConsumed ?? 0,
        slot: context.slot,
      };
    },
    async sendTransaction(tx) {
      const results = await client.callAll('sendTransaction', [tx.base64, { encoding: 'base64', skipPreflight: true, maxRetries: 0 }]);
      if (results.some((r) => r.status === 'fulfilled' && ('result' in r.value || alreadyProcessed(r.value)))) return { dropped: null };
      const reasons = results.map((r) =>
        r.status === 'rejected'
          ? String((r.reason as Error).message)
          : `refused: ${(r.value as { error: { message: string } }).error.message}`,
      );
      throw new Error(`no RPC node took the transaction: ${reasons.join('; ')}`);
    },
    admitBundle: async () => 'a Solana RPC node cannot execute bundles',
    async sendBundle() {
      throw new Error('a Solana RPC node cannot execute bundles');
    },
    call: (method, params) => client.call(method, params),
    async getSignatureStatuses(signatures) {
      const answer = await client.call('getSignatureStatuses', [signatures, { searchTransactionHistory: false }]);
      return resultOf<{ value: (SignatureStatusView | null)[] }>(answer, 'getSignatureStatuses').value.map((s) =>
        s === null ? null : { slot: s.slot, confirmations: s.confirmations, err: s.err, confirmationStatus: s.confirmationStatus ?? null },
      );
    },
    async getBundleStatuses() {
      throw new Error('a Solana RPC node knows no bundles');
    },
    async isBlockhashValid(blockhash) {
      return resultOf<{ value: boolean }>(
        await client.call('isBlockhashValid', [blockhash, { commitment: 'processed' }]),
        'isBlockhashValid',
      ).value;
    },
    close: () => client.close(),
  };
}
