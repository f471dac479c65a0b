/**
 * What the live dashboard shows, made once a second from the gateway's own metrics, journal
 * and key store, the charts kept for the last five minutes so that a page opened now has
 * them filled. The journal and the keys are read only while a page is open (their tables
 * come with the next second's update). Pages follow it over server-sent events
 * (dashboard-routes.ts).
 */
import type { WebhookState } from '../events/webhook-delivery';
import type { Metric } from 'prom-client';
import {
  keyTransactionsTotal,
  landingSeconds,
  submissionsTotal,
  upstreamCircuitOpen,
  upstreamSendSeconds,
  upstreamSendsTotal,
} from '../metrics/metrics';
import { histogramQuantile } from '../metrics/prometheus-text';
import { RoundLoop } from '../runtime/round-loop';
import type { Journal, JournalEntry } from '../stores/journal';
import type { ApiKeyRecord } from '../stores/key-store';
import type { LandingReport } from '../core/landing-report';
import type { LandingReports } from '../reports/landing-reports';

const OPERATIONS = ['sendTransaction', 'submitBatch', 'sendBundle'] as const;
const HISTORY_POINTS = 300;
const LATEST = 15;
/** The landing report the page shows: the last hour, read again every few seconds while a page is open (it reads the journal). */
const REPORT_PERIOD_MS = 3_600_000;
const REPORT_EVERY_MS = 5_000;

/** One second of the charts. */
export interface Point {
  readonly at: number;
  /** Requests per second by operation (every outcome). */
  readonly requests: Record<string, number>;
  /** Per route: landings that second, and their median time from request to landing (s). */
  readonly landed: Record<string, { count: number; p50: number | null }>;
}

export interface Tables {
  readonly latest: readonly LatestSubmission[];
  readonly keys: readonly {
    id: string;
    name: string;
    tps: number | null;
    bundlesPerSecond: number | null;
    lastSecond: number;
    total: number;
    /** Its webhook's state in words ("off", "12 waiting", "PAUSED: …", "failing: …"). */
    webhook: string;
  }[];
  readonly upstreams: readonly { name: string; ok: number; errors: number; p50Ms: number | null; openEndpoints: string[] }[];
  /** Each key's landing report of the last hour (keys with submissions or refusals in it), then all keys' (keyId null). */
  readonly reports: readonly KeyReport[];
}

/** A landing report as the page's table shows it. */
export interface KeyReport {
  readonly keyId: string | null;
  readonly transactions: LandingReport['transactions'];
  readonly final: number;
  readonly landedPercent: number | null;
  readonly refused: number;
  readonly ms: { p50: number | null; p99: number | null };
  readonly slots: { p50: number | null; p99: number | null };
  /** How the landing advice's predictions held for these transactions (docs/API.md, getLandingReport). */
  readonly calibration: LandingReport['calibration'];
}

export interface LatestSubmission {
  readonly kind: JournalEntry['kind'];
  readonly bundleId: string | null;
  readonly keyId: string;
  readonly antiMev: boolean;
  readonly routes: readonly string[];
  readonly receivedAt: number;
  readonly transactions: readonly {
    signature: string;
    state: string;
    slot: number | null;
    reason: string | null;
    /** The reason's code (core/outcome-reasons.ts). */
    reasonCode: string | null;
    sends: number;
    lastHold: string | null;
  }[];
}

/** A key's webhook in words, for the keys table. */
export function describeWebhook(url: string | null, state: WebhookState | undefined): string {
  if (url === null) return 'off';
  const waiting = `${state?.pending ?? 0} waiting`;
  if (state?.pausedAt != null) return `PAUSED (${waiting}): ${state.lastError ?? 'failing'}; set the webhook again to resume`;
  if (state?.failingSince != null)
    return `failing since ${new Date(state.failingSince).toISOString()} (${waiting}): ${state.lastError ?? ''}`;
  return `on, ${waiting}`;
}

export interface DashboardFeedOptions {
  readonly journal: Journal;
  readonly keys: () => Promise<ApiKeyRecord[]>;
  /** How each key's webhook receiver fares (absent: not shown). */
  readonly webhooks?: () => Promise<ReadonlyMap<string, WebhookState>>;
  /** The landing reports (reports/landing-reports.ts); absent: no report table. */
  readonly reports?: Pick<LandingReports, 'ofEveryKey'>;
  readonly logError: (error: unknown, what: string) => void;
}

type Values = Awaited<ReturnType<Metric['get']>>['values'];

export class DashboardFeed {
  private readonly history: Point[] = [];
  private tables: Tables = { latest: [], keys: [], upstreams: [], reports: [] };
  private reports: { at: number; rows: KeyReport[] } = { at: 0, rows: [] };
  private readonly listeners = new Set<(point: Point, tables: Tables) => void>();
  private previous: { requests: Values; landing: Values; keys: Values } | undefined;
  private readonly loop: RoundLoop;

  constructor(private readonly options: DashboardFeedOptions) {
    this.loop = new RoundLoop(() => this.sample(), 1_000);
  }

  start(): void {
    this.loop.start();
  }

  stop(): Promise<void> {
    return this.loop.stop();
  }

  /** The charts so far and the current tables; then `listener` each second until it unsubscribes. */
  subscribe(listener: (point: Point, tables: Tables) => void): { history: Point[]; tables: Tables; unsubscribe: () => void } {
    this.listeners.add(listener);
    return { history: [...this.history], tables: this.tables, unsubscribe: () => this.listeners.delete(listener) };
  }

  /** Takes one second's figures (also callable by tests). */
  async sample(): Promise<void> {
    try {
      // The charts' figures always (they are in memory); the tables' stores only while a page watches.
      const watched = this.listeners.size > 0;
      const [requests, landing, keyCounts, sends, sendSeconds, circuits, entries, keys, reports, webhooks] = await Promise.all([
        submissionsTotal.get(),
        landingSeconds.get(),
        keyTransactionsTotal.get(),
        upstreamSendsTotal.get(),
        upstreamSendSeconds.get(),
        upstreamCircuitOpen.get(),
        watched ? this.options.journal.list({ limit: LATEST }) : [],
        watched ? this.options.keys() : [],
        watched ? this.reportRows() : [],
        watched && this.options.webhooks !== undefined ? this.options.webhooks() : new Map<string, WebhookState>(),
      ]);
      const now = { requests: copy(requests.values), landing: copy(landing.values), keys: copy(keyCounts.values) };
      const previous = this.previous ?? now;
      this.previous = now;
      const point: Point = {
        at: Date.now(),
        requests: Object.fromEntries(
          OPERATIONS.map((operation) => [operation, delta(requests.values, previous.requests, (l) => l.operation === operation)]),
        ),
        landed: landedByRoute(landing.values, previous.landing),
      };
      this.history.push(point);
      if (this.history.length > HISTORY_POINTS) this.history.shift();
      this.tables = {
        latest: entries.map(latestSubmission),
        keys: keys
          .filter((k) => k.revokedAt === null)
          .map((k) => ({
            id: k.id,
            name: k.name,
            tps: k.tps,
            bundlesPerSecond: k.bundlesPerSecond,
            lastSecond: delta(keyCounts.values, previous.keys, (l) => l.key_id === k.id),
            total: sum(keyCounts.values, (l) => l.key_id === k.id),
            webhook: describeWebhook(k.webhookUrl, webhooks.get(k.id)),
          })),
        upstreams: [...new Set(sends.values.map((v) => String(v.labels.upstream)))].map((name) => ({
          name,
          ok: sum(sends.values, (l) => l.upstream === name && l.outcome === 'ok'),
          errors: sum(sends.values, (l) => l.upstream === name && l.outcome === 'error'),
          p50Ms: toMs(median(bucketsOf(sendSeconds.values, (l) => l.upstream === name))),
          openEndpoints: circuits.values.filter((v) => v.labels.upstream === name && v.value === 1).map((v) => String(v.labels.endpoint)),
        })),
        reports,
      };
      for (const listener of this.listeners) listener(point, this.tables);
    } catch (error) {
      this.options.logError(error, 'the dashboard sample');
    }
  }

  /** The report table's rows, read again once REPORT_EVERY_MS has passed. */
  private async reportRows(): Promise<KeyReport[]> {
    const source = this.options.reports;
    if (source === undefined || Date.now() - this.reports.at < REPORT_EVERY_MS) return this.reports.rows;
    const { all, keys } = await source.ofEveryKey(REPORT_PERIOD_MS);
    this.reports = { at: Date.now(), rows: [...keys, all].map(keyReport) };
    return this.reports.rows;
  }
}

const keyReport = (report: LandingReport): KeyReport => ({
  keyId: report.keyId,
  transactions: report.transactions,
  final: report.final,
  landedPercent: report.landedPercent,
  refused: report.refused.transactions,
  ms: { p50: report.timeToLand.ms.p50, p99: report.timeToLand.ms.p99 },
  slots: { p50: report.timeToLand.slots.p50, p99: report.timeToLand.slots.p99 },
  calibration: report.calibration,
});

type Labels = Record<string, string | number>;
// A counter's get() hands back its live entries, which the next inc changes in place: kept as
// they are, last second's figures would always equal this second's and every delta be 0.
const copy = (values: Values): Values => values.map((v) => ({ ...v }));
const toMs = (seconds: number | null) => (seconds === null ? null : seconds * 1000);
const sum = (values: Values, match: (labels: Labels) => boolean) =>
  values.filter((v) => match(v.labels as Labels)).reduce((n, v) => n + v.value, 0);
const delta = (now: Values, before: Values, match: (labels: Labels) => boolean) => Math.max(0, sum(now, match) - sum(before, match));

/** Cumulative bucket counts by bound, summed over the series `match` picks. */
function bucketsOf(values: Values, match: (labels: Labels) => boolean, before: Values = []): { le: number; count: number }[] {
  const bounds = new Map<number, number>();
  const add = (list: Values, sign: number) => {
    for (const v of list) {
      const labels = v.labels as Labels;
      if ((v as { metricName?: string }).metricName?.endsWith('_bucket') !== true || !match(labels)) continue;
      const le = labels.le === '+Inf' ? Infinity : Number(labels.le);
      bounds.set(le, (bounds.get(le) ?? 0) + sign * v.value);
    }
  };
  add(values, 1);
  add(before, -1);
  return [...bounds].map(([le, count]) => ({ le, count })).sort((a, b) => a.le - b.le);
}

/** The median of cumulative buckets, interpolated as Prometheus does (null when empty). */
const median = (buckets: { le: number; count: number }[]): number | null => histogramQuantile(0.5, buckets) ?? null;

function landedByRoute(now: Values, before: Values): Point['landed'] {
  const routes = [...new Set(now.map((v) => String((v.labels as Labels).route)).filter((r) => r !== 'undefined'))];
  return Object.fromEntries(
    routes.map((route) => {
      const buckets = bucketsOf(now, (l) => l.route === route, before);
      return [route, { count: buckets.at(-1)?.count ?? 0, p50: median(buckets) }];
    }),
  );
}

function latestSubmission(entry: JournalEntry): LatestSubmission {
  return {
    kind: entry.kind,
    bundleId: entry.bundleId,
    keyId: entry.keyId,
    antiMev: entry.antiMev,
    routes: entry.routes,
    receivedAt: entry.createdAt,
    transactions: entry.transactions.map((tx) => {
      const held = [...tx.sends].reverse().find((send) => send.heldReason !== null && send.heldReason !== undefined);
      return {
        signature: tx.signature,
        state: tx.state,
        slot: tx.slot,
        reason: tx.reason,
        reasonCode: tx.reasonCode,
        sends: Math.max(tx.attempts, tx.sends.length),
        lastHold: held === undefined ? null : `held ${held.heldMs} ms: ${held.heldReason}`,
      };
    }),
  };
}
