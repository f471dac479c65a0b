/**
 * Slipway's metrics, registered in prom-client's default registry from the start so that
 * counting begins with the first request; `GET /metrics` exposes them (metrics-route.ts).
 * Label values come from fixed lists (operations, outcomes, error kinds, states, configured
 * upstream names), never free text.
 */
import client from 'prom-client';
import { OUTCOME_REASONS, type OutcomeReason } from '../core/outcome-reasons';
import { TRANSACTION_STATES, type TransactionState } from '../core/transaction-states';
import { collectHotCounts, collectHotSeries } from './hot-series';

export type Operation = 'sendTransaction' | 'submitBatch' | 'sendBundle';
export type Outcome = 'accepted' | 'duplicate' | 'replayed' | 'refused' | 'rejected';

const OPERATIONS: readonly Operation[] = ['sendTransaction', 'submitBatch', 'sendBundle'];
export const OUTCOMES: readonly Outcome[] = ['accepted', 'duplicate', 'replayed', 'refused', 'rejected'];

// The hot path counts in plain arrays; prom-client gets the increments when it collects.
// Its own labelled `inc` hashes and validates the labels on every call (bound children
// too), which the request thread would pay per request.
const submissionCounts = new Float64Array(OPERATIONS.length * OUTCOMES.length);
const transactionCounts = new Float64Array(OPERATIONS.length);
const operationIndex = (operation: Operation) => OPERATIONS.indexOf(operation);

/** Counts one submission's outcome. */
export const countSubmission = (operation: Operation, outcome: Outcome): void => {
  submissionCounts[operationIndex(operation) * OUTCOMES.length + OUTCOMES.indexOf(outcome)]! += 1;
};

/** Counts transactions handed to the router. */
export const countTransactions = (operation: Operation, count = 1): void => {
  transactionCounts[operationIndex(operation)]! += count;
};

/**
 * A counter's `collect`: moves what `counts` gained since the last collection into the
 * counter, entry i under `labels[i]` (inc by 0 too: every series exists from the first scrape).
 */
function collectDeltas(counts: Float64Array, labels: readonly Record<string, string>[]) {
  const seen = new Float64Array(counts.length);
  return function collect(this: client.Counter<string>): void {
    labels.forEach((set, i) => {
      this.inc(set, counts[i]! - seen[i]!);
      seen[i] = counts[i]!;
    });
  };
}

export const submissionsTotal = new client.Counter({
  name: 'slipway_submissions_total',
  help: 'Submissions by operation and outcome (accepted, duplicate, replayed, refused, rejected).',
  labelNames: ['operation', 'outcome'] as const,
  collect: collectDeltas(
    submissionCounts,
    OPERATIONS.flatMap((operation) => OUTCOMES.map((outcome) => ({ operation, outcome }))),
  ),
});

export const transactionsTotal = new client.Counter({
  name: 'slipway_transactions_total',
  help: 'Transactions handed to the router, by operation.',
  labelNames: ['operation'] as const,
  collect: collectDeltas(
    transactionCounts,
    OPERATIONS.map((operation) => ({ operation })),
  ),
});

export const refusalsTotal = new client.Counter({
  name: 'slipway_refusals_total',
  help: 'Requests refused, by error kind of the error catalogue.',
  labelNames: ['kind'] as const,
});

export const REQUEST_DURATION_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1];

/** Observed through hot-series.ts on the submission paths, through `observe` elsewhere. */
export const requestDuration = new client.Histogram({
  name: 'slipway_request_duration_seconds',
  help: 'Time from request received to response sent, by path.',
  labelNames: ['path'] as const,
  buckets: REQUEST_DURATION_BUCKETS,
  collect: collectHotSeries,
});

export const rebroadcastsTotal = new client.Counter({
  name: 'slipway_rebroadcasts_total',
  help: 'Transactions sent again by the tracker because they had not landed yet.',
});

export const rebroadcastShedTotal = new client.Counter({
  name: 'slipway_rebroadcast_shed_total',
  help: 'Tracked transactions dropped from rebroadcast because the queue was full (most-retried first).',
});

export const trackedGauge = new client.Gauge({
  name: 'slipway_tracked_transactions',
  help: 'Transactions being followed until they land or expire.',
});

export const inlineVerificationGauge = new client.Gauge({
  name: 'slipway_signature_verification_inline',
  help: '1 while signatures are verified in the request thread, 0 while on worker threads (the switch follows load).',
});

export const walRestartsTotal = new client.Counter({
  name: 'slipway_journal_wal_restarts_total',
  help: 'Times the journal held its SQLite writes for a moment so that its WAL could restart (it grows under continuous writes otherwise).',
});

export const journalApplyFailuresTotal = new client.Counter({
  name: 'slipway_journal_apply_failures_total',
  help: 'Times applying the journal log to SQLite failed (a full disk, say); the writes stay in the log and are applied on the next try or at the next start.',
});

export const protectedHeldTotal = new client.Counter({
  name: 'slipway_protected_held_total',
  help: 'Protected (anti_mev=1) transactions held because a leader of the safe window was not trusted, or the schedule or the policy was not known.',
});

export const protectedReleasedTotal = new client.Counter({
  name: 'slipway_protected_released_total',
  help: 'Protected transactions sent after being held, once a safe window opened.',
});

export const protectedExpiredWhileHeldTotal = new client.Counter({
  name: 'slipway_protected_expired_while_held_total',
  help: 'Protected transactions whose blockhash expired while they were held: never sent unprotected.',
});

export const protectedHoldSeconds = new client.Histogram({
  name: 'slipway_protected_hold_seconds',
  help: 'How long protected transactions were held before being sent or expiring.',
  buckets: [0.01, 0.05, 0.1, 0.2, 0.4, 0.8, 1.6, 3.2, 6.4, 12.8, 30, 60, 90],
});

/** Counted through hot-series.ts. */
export const fastPathRequestsTotal = new client.Counter({
  name: 'slipway_http_fast_path_requests_total',
  help: 'Requests to POST / and POST /submit-batch served on the lean node:http path (the rest of those routes go through Fastify).',
  collect: collectHotCounts,
});

/** Counted through hot-series.ts. */
export const leanRequestsTotal = new client.Counter({
  name: 'slipway_http_lean_requests_total',
  help: 'Requests to POST / and POST /submit-batch read and answered straight off the connection (lean HTTP, leanHttp); also counted in slipway_http_fast_path_requests_total.',
  collect: collectHotCounts,
});

export const leanHandoversTotal = new client.Counter({
  name: 'slipway_http_lean_handovers_total',
  help: "Connections lean HTTP handed to node:http, by reason: form (a request outside its plain form), incomplete (a request that did not arrive whole within a second), refused (a refusal on arrival: unknown key, over capacity, the key's share taken).",
  labelNames: ['reason'],
});

export const rateLimitedTotal = new client.Counter({
  name: 'slipway_rate_limited_total',
  help: "Requests refused over their API key's rate limit (HTTP 429), by key id.",
  labelNames: ['key_id'],
});

export const shedTotal = new client.Counter({
  name: 'slipway_shed_requests_total',
  help: 'Requests refused on arrival, by reason: in_flight and event_loop (over capacity, 503), shutting_down (503), connections (over the per-address limit, 429).',
  labelNames: ['reason'],
});

// Transactions entering each state, counted as the journal records them (counting-journal.ts).
const stateCounts = new Float64Array(TRANSACTION_STATES.length);

/** Counts one transaction entering `state`. */
export const countState = (state: TransactionState): void => {
  stateCounts[TRANSACTION_STATES.indexOf(state)]! += 1;
};

export const transactionStatesTotal = new client.Counter({
  name: 'slipway_transaction_states_total',
  help: 'Transactions entering each state as the journal records it: forwarded or held when accepted, then landed, failed, expired; rejected when no upstream took them.',
  labelNames: ['state'] as const,
  collect: collectDeltas(
    stateCounts,
    TRANSACTION_STATES.map((state) => ({ state })),
  ),
});

// Why submissions did not land, by outcome reason code: refusals (submission-service.ts) and final states (counting-journal.ts).
const REASONS = Object.keys(OUTCOME_REASONS) as OutcomeReason[];
const reasonCounts = new Float64Array(REASONS.length);

/** Counts one submission refused, or one transaction ending without landing (or landing failed), for `reason`. */
export const countOutcomeReason = (reason: OutcomeReason): void => {
  reasonCounts[REASONS.indexOf(reason)]! += 1;
};

export const outcomeReasonsTotal = new client.Counter({
  name: 'slipway_outcome_reasons_total',
  help: 'Why submissions did not land, by reason code (docs/API.md, Outcome reasons): each refused submission once, and each transaction that ended failed, expired or rejected once.',
  labelNames: ['reason'] as const,
  collect: collectDeltas(
    reasonCounts,
    REASONS.map((reason) => ({ reason })),
  ),
});

export const landingSeconds = new client.Histogram({
  name: 'slipway_landing_seconds',
  help: 'From the request to the slot it landed in (estimated from the slots between landing and the tracker seeing it), by kind (transaction, bundle) and route (the upstreams it went to, joined by +).',
  labelNames: ['kind', 'route'] as const,
  buckets: [0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60, 120],
});

/** Counted through hot-series.ts. */
export const upstreamSendsTotal = new client.Counter({
  name: 'slipway_upstream_sends_total',
  help: 'Sends to each configured upstream (first sends and rebroadcasts), by operation (transaction, bundle) and outcome (ok, error: the upstream could not be reached or used).',
  labelNames: ['upstream', 'operation', 'outcome'] as const,
  collect: collectHotCounts,
});

export const UPSTREAM_SEND_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

/** Observed through hot-series.ts. */
export const upstreamSendSeconds = new client.Histogram({
  name: 'slipway_upstream_send_seconds',
  help: 'Time each upstream took to answer a send, by operation.',
  labelNames: ['upstream', 'operation'] as const,
  buckets: UPSTREAM_SEND_BUCKETS,
  collect: collectHotSeries,
});

export const upstreamCircuitOpen = new client.Gauge({
  name: 'slipway_upstream_circuit_open',
  help: '1 while an upstream endpoint is out of rotation after consecutive failures (its circuit is open), 0 while it is used.',
  labelNames: ['upstream', 'endpoint'] as const,
});

// The TPU route's per-leader series: a leader's identity is a label (operators ask "which leader
// is failing"), bounded by the connection cache — a leader's series are removed when its
// connection leaves the cache, so a long run does not accumulate one per validator.
export const tpuSendsTotal = new client.Counter({
  name: 'slipway_tpu_sends_total',
  help: "Transactions handed to a leader's TPU connection (queued) or not (refused: no address, backing off, queue full), by upstream and leader.",
  labelNames: ['upstream', 'leader', 'outcome'] as const,
});

export const tpuDeliveredTotal = new client.Counter({
  name: 'slipway_tpu_delivered_total',
  help: "Transactions a leader's TPU acknowledged whole (every byte and the FIN), by upstream and leader.",
  labelNames: ['upstream', 'leader'] as const,
});

export const tpuConnectionClosesTotal = new client.Counter({
  name: 'slipway_tpu_connection_closes_total',
  help: 'TPU connections that ended, by upstream, leader and how (peer, idle, reset, local) — a peer close carries its code in the log.',
  labelNames: ['upstream', 'leader', 'by'] as const,
});

export const tpuLeaderBackoff = new client.Gauge({
  name: 'slipway_tpu_leader_backoff',
  help: '1 while a leader is skipped after consecutive failed connections (backing off), 0 while it is used.',
  labelNames: ['upstream', 'leader'] as const,
});

export const tpuConnections = new client.Gauge({
  name: 'slipway_tpu_connections',
  help: 'TPU connections held open (cached, kept alive), by upstream.',
  labelNames: ['upstream'] as const,
});

let defaultsCollected = false;
/** Process metrics (CPU, memory, event-loop lag as nodejs_eventloop_lag_*), once per process. */
export function collectProcessMetrics(): void {
  if (defaultsCollected) return;
  defaultsCollected = true;
  client.collectDefaultMetrics();
}

export const metricsRegistry = client.register;

// Transactions accepted per API key (journaled), for usage against the key's limits.
const keyTransactions = new Map<string, number>();

/** Counts `count` transactions accepted from key `keyId`. */
export const countKeyTransactions = (keyId: string, count: number): void => {
  keyTransactions.set(keyId, (keyTransactions.get(keyId) ?? 0) + count);
};

export const keyTransactionsTotal = new client.Counter({
  name: 'slipway_key_transactions_total',
  help: 'Transactions accepted (journaled) per API key id.',
  labelNames: ['key_id'] as const,
  collect(this: client.Counter<'key_id'>) {
    this.reset();
    for (const [keyId, count] of keyTransactions) this.inc({ key_id: keyId }, count);
  },
});

export const webhookDeliveriesTotal = new client.Counter({
  name: 'slipway_webhook_deliveries_total',
  help: 'Webhook deliveries of submission events, by result: delivered (a 2xx answer) or failed (tried again later).',
  labelNames: ['result'] as const,
});

export const webhookEventsDroppedTotal = new client.Counter({
  name: 'slipway_webhook_events_dropped_total',
  help: "Submission events not kept because their key's queue was full (webhookQueueLimit).",
});

export const webhookPendingGauge = new client.Gauge({
  name: 'slipway_webhook_pending_events',
  help: 'Submission events waiting for delivery, all keys together.',
});

export const webhookPausedGauge = new client.Gauge({
  name: 'slipway_webhook_paused_receivers',
  help: 'Keys whose webhook deliveries are paused after failing for webhookPauseAfterSeconds.',
});
