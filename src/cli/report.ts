/**
 * `slipway report [--key ID] [--since DURATION] [--json]`: how submissions did over a period
 * (default 24h), per key and for all keys, from the journal and the refusal counts the
 * configuration names: the data dir's SQLite (read beside a running server, as `bin/slipway
 * submissions` does) or PostgreSQL, which covers every gateway of a cluster.
 */
import { resolveConfig } from '../config/config';
import type { LandingReport, Percentiles, Refused, Statistics } from '../core/landing-report';
import { createLandingReports, DEFAULT_PERIOD_MS, parsePeriod } from '../reports/landing-reports';
import { openJournal } from '../stores/journal';
import { openStore } from '../stores/database/open-store';
import { REFUSAL_COUNTS } from '../stores/store-adapters';
import { parseOptions } from './parse-options';

export async function runReport(args: string[]): Promise<number> {
  const { values, positionals } = parseOptions('report', args, {
    key: { type: 'string' },
    since: { type: 'string' },
    json: { type: 'boolean', default: false },
    'data-dir': { type: 'string' },
    config: { type: 'string' },
  });
  if (positionals.length > 0) throw new Error(`report: unexpected argument ${positionals[0]} (see bin/slipway help)`);
  const period = values.since === undefined ? DEFAULT_PERIOD_MS : parsePeriod(values.since);
  if (typeof period === 'string') throw new Error(`report --since: ${period}`);
  const config = resolveConfig({ dataDir: values['data-dir'], config: values.config });
  const journal = await openJournal(config, { reader: true });
  try {
    const refusals = await openStore(config, REFUSAL_COUNTS);
    try {
      const reports = createLandingReports(journal, refusals);
      if (values.key !== undefined) {
        const report = await reports.ofKey(values.key, period);
        process.stdout.write(values.json ? JSON.stringify(report) + '\n' : format(report));
      } else {
        const every = await reports.ofEveryKey(period);
        process.stdout.write(values.json ? JSON.stringify(every) + '\n' : [...every.keys, every.all].map(format).join('\n'));
      }
      return 0;
    } finally {
      await refusals.close();
    }
  } finally {
    await journal.close();
  }
}

function format(report: LandingReport): string {
  const lines = [
    `${report.keyId === null ? 'all keys' : `key ${report.keyId}`}: submissions received ${report.since} – ${report.until}`,
    `  ${figures(report)}`,
    `  refused: ${refused(report.refused)}`,
    `  bundles: ${report.bundles.submitted} submitted, ${report.bundles.landed} landed, ${report.bundles.notLanded} not landed, ${report.bundles.pending} pending`,
    '  by operation:',
    ...Object.entries(report.byOperation).map(([operation, f]) => `    ${operation}: ${figures(f)}; refused ${refused(f.refused)}`),
    '  by route:',
    ...Object.entries(report.byRoute).map(([route, f]) => `    ${route}: ${figures(f)}`),
  ];
  return lines.join('\n') + '\n';
}

/** One line: the counts, the landed share and the times to land. */
function figures({ transactions: t, final, landedPercent, timeToLand }: Statistics): string {
  const share = landedPercent === null ? 'landed % n/a (nothing final)' : `landed ${landedPercent.toFixed(2)} % of ${final} final`;
  return (
    `transactions ${t.submitted} submitted, ${t.landed} landed, ${t.failedOnChain} failed on chain, ${t.expired} expired, ` +
    `${t.rejected} rejected, ${t.pending} pending; ${share}; to land ${times(timeToLand.ms, 'ms')}, ${times(timeToLand.slots, 'slots')}`
  );
}

const times = (p: Percentiles, unit: string) => (p.samples === 0 ? `n/a ${unit}` : `p50 ${p.p50} / p99 ${p.p99} ${unit} (${p.samples})`);

const refused = (r: Refused) =>
  r.transactions === 0
    ? '0'
    : `${r.transactions} (${Object.entries(r.byReason)
        .map(([code, n]) => `${code} ${n}`)
        .join(', ')})`;
