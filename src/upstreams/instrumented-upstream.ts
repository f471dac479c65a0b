/**
 * An upstream whose sends are counted and timed, by its configured name: first sends and
 * rebroadcasts alike, from whichever part of Slipway sends them.
 */
import type { Upstream } from './upstream';
import { hotCount, hotSeries } from '../metrics/hot-series';
import { UPSTREAM_SEND_BUCKETS, upstreamSendSeconds, upstreamSendsTotal } from '../metrics/metrics';

export function instrumentedUpstream(upstream: Upstream): Upstream {
  // Series made once and counted in plain numbers (metrics/hot-series.ts): every send passes here.
  const bind = (operation: 'transaction' | 'bundle') => ({
    ok: hotCount(upstreamSendsTotal, { upstream: upstream.name, operation, outcome: 'ok' }),
    error: hotCount(upstreamSendsTotal, { upstream: upstream.name, operation, outcome: 'error' }),
    seconds: hotSeries(upstreamSendSeconds, UPSTREAM_SEND_BUCKETS, { upstream: upstream.name, operation }),
  });
  const transaction = bind('transaction');
  const bundle = bind('bundle');
  const timed = async <T>(counters: ReturnType<typeof bind>, send: () => Promise<T>): Promise<T> => {
    const started = process.hrtime.bigint();
    try {
      const result = await send();
      counters.ok.inc();
      return result;
    } catch (error) {
      counters.error.inc();
      throw error;
    } finally {
      counters.seconds.observe(Number(process.hrtime.bigint() - started) / 1e9);
    }
  };
  return {
    ...upstream,
    sendTransaction: (tx, options) => timed(transaction, () => upstream.sendTransaction(tx, options)),
    sendBundle: (bundleId, txs) => timed(bundle, () => upstream.sendBundle(bundleId, txs)),
  };
}
