/** The local cluster's record of where a transaction landed and who saw it first (getTransactionExposure), asked for in pages of 256. */
import type { Exposure } from '../../src/ledger/exposure';
import { post } from './rpc';

export type { Exposure };

/** Each signature's exposure, null when the ledger never saw it, asked of the ledger node at `url`. */
export async function exposuresAt(url: string, signatures: readonly string[]): Promise<(Exposure | null)[]> {
  const all: (Exposure | null)[] = [];
  for (let i = 0; i < signatures.length; i += 256) {
    const answer = await post(url, { jsonrpc: '2.0', id: 1, method: 'getTransactionExposure', params: [signatures.slice(i, i + 256)] });
    all.push(...(answer.body.result.value as (Exposure | null)[]));
  }
  return all;
}
