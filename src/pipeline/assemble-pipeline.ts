/**
 * The submission side of a gateway, built in dependency order: the duplicate window (warmed
 * from the journal), the router, the anti-MEV safe window, the tracker, the hold queue, the
 * pipeline, the recent refusals and the status view. `start` follows what the last run left
 * unfinished (recovery.ts) and starts the loops; `stop` ends them in the reverse order.
 */
import type { SlipwayConfig } from '../config/config';
import type { LocalLedger } from '../ledger/local-ledger';
import { leaderTrackerFor, policySourceFor } from '../protection/protection-sources';
import { SafeWindow } from '../protection/safe-window';
import type { RoundLoop } from '../runtime/round-loop';
import type { DuplicateClaims } from '../stores/duplicate-claims';
import type { Journal } from '../stores/journal';
import { createLandingReports, type LandingReports } from '../reports/landing-reports';
import type { AdviceFiguresSource } from '../core/landing-report';
import type { RefusalCounts } from '../stores/refusal-counts';
import { RefusalCountBuffer } from '../reports/refusal-count-buffer';
import type { Upstream } from '../upstreams/upstream';
import { HoldQueue } from './hold-queue';
import type { LandedTips } from './landed-tips';
import { RecentRefusals } from './recent-refusals';
import { RecentTransactions } from './recent-transactions';
import { followUnfinished, warmDuplicateWindow } from './recovery';
import { createRouter, type Router } from './router';
import { createStatusView, type StatusView } from './status-view';
import { createSubmissionPipeline } from './submission-pipeline';
import type { SubmissionPipeline } from './submission-shapes';
import { SlotWatch } from './slot-watch';
import { LandingTracker, type StuckWatch } from './landing-tracker';

/** Solana's slot time, for placing landings seen through RPC nodes at their slot. */
const MAINNET_SLOT_MS = 400;
/** How often the safe window is looked at while protected transactions are held: several times per (mainnet) slot. */
const HOLD_CHECK_MS = 50;
/** How often held transactions are checked for an expired blockhash. */
const HOLD_EXPIRY_CHECK_MS = 1_000;

export type PipelineSettings = Pick<
  SlipwayConfig,
  | 'network'
  | 'duplicateTtlMs'
  | 'simulateBundles'
  | 'duplicateMaxEntries'
  | 'leaderPollMs'
  | 'validatorPolicy'
  | 'policyRefreshMs'
  | 'safeWindowSlots'
  | 'slotMs'
>;

export interface PipelineParts {
  readonly journal: Journal;
  /** Where refused submissions are counted (per key, operation, reason and minute), for the landing report. */
  readonly refusalCounts: RefusalCounts;
  readonly upstreams: ReadonlyMap<string, Upstream>;
  /** The embedded ledger, when a route uses it: its slots and leaders are the chain's. */
  readonly ledger: LocalLedger | undefined;
  /** The cluster's duplicate claims (Redis), when there is a cluster. */
  readonly claims: DuplicateClaims | undefined;
  /** The journal's last sequence number once the embedded ledger has replayed it. */
  readonly initialSeq: number;
  /** Told of each landed bundle's tip (the gateway's tip floor). */
  readonly landedTips?: LandedTips;
  readonly logError: (error: unknown, what: string) => void;
  /** The landing advice's calibration and fees seen, for the landing report. */
  readonly adviceFigures?: AdviceFiguresSource;
  /** Told when a forwarded transaction goes too many slots without landing (the events' `stuck`). */
  readonly stuck?: StuckWatch;
}

export interface AssembledPipeline {
  readonly router: Router;
  readonly recent: RecentTransactions;
  readonly tracker: LandingTracker;
  readonly pipeline: SubmissionPipeline;
  readonly refusals: RecentRefusals;
  readonly statusView: StatusView;
  /** Counts a refusal (the submission service tells it of each), written once a second. */
  readonly recordRefusal: RefusalCountBuffer['refused'];
  readonly landingReports: LandingReports;
  /** Follows what is unfinished, then starts tracking and holding. */
  start(): Promise<void>;
  /** Stops the loops, the safe window's sources and the upstreams; writes the last refusal counts. */
  stop(): Promise<void>;
}

export async function assemblePipeline(settings: PipelineSettings, parts: PipelineParts): Promise<AssembledPipeline> {
  const { network } = settings;
  const { journal, ledger, logError } = parts;
  const recent = new RecentTransactions(settings.duplicateTtlMs, settings.duplicateMaxEntries);
  await warmDuplicateWindow(journal, recent, settings.duplicateTtlMs);
  const slotMs = ledger === undefined ? MAINNET_SLOT_MS : settings.slotMs;
  // The last slot seen, fed by every getSlot the router and the tracker make: what receipts are stamped with.
  const slots = new SlotWatch(slotMs);
  // The embedded ledger makes the slots: its clock is the watch's exact source.
  if (ledger !== undefined) {
    slots.note(ledger.currentSlot);
    ledger.onSlot((slot) => slots.note(slot));
  }
  const router = createRouter(parts.upstreams, network.routes, slots);
  const window = new SafeWindow(
    leaderTrackerFor(network, settings.leaderPollMs, ledger),
    policySourceFor(settings.validatorPolicy, settings.policyRefreshMs, (method, params) => router.call(method, params)),
    settings.safeWindowSlots,
  );
  const { intervalMs, maxAttempts, queueCapacity } = network.rebroadcast;
  const tracker = new LandingTracker({
    journal,
    reads: router.reads,
    intervalMs,
    maxAttempts,
    capacity: queueCapacity,
    slotMs,
    window,
    slots,
    landedTips: parts.landedTips,
    ...(parts.stuck === undefined ? {} : { stuck: parts.stuck }),
    logError,
  });
  const holds = new HoldQueue({
    window,
    journal,
    tracker,
    reads: router.reads,
    checkMs: HOLD_CHECK_MS,
    expiryCheckMs: HOLD_EXPIRY_CHECK_MS,
    // As long as rebroadcast would have kept trying: a durable-nonce transaction has no blockhash to expire.
    maxHoldMs: intervalMs * maxAttempts,
    logError,
  });
  const pipeline = createSubmissionPipeline({
    router,
    journal,
    recent,
    tracker,
    duplicateTtlMs: settings.duplicateTtlMs,
    simulateBundles: settings.simulateBundles,
    initialSeq: parts.initialSeq,
    protection: { window, holds },
    claims: parts.claims,
  });
  const refusals = new RecentRefusals(settings.duplicateTtlMs);
  const refusalBuffer = new RefusalCountBuffer(parts.refusalCounts, logError);
  let leasing: RoundLoop | undefined;
  return {
    router,
    recent,
    tracker,
    pipeline,
    refusals,
    statusView: createStatusView(journal, router, refusals),
    recordRefusal: (keyId, operation, error, encoded) => refusalBuffer.refused(keyId, operation, error, encoded),
    landingReports: createLandingReports(journal, parts.refusalCounts, parts.adviceFigures),
    async start() {
      leasing = await followUnfinished({ journal, router, tracker, holds, logError });
      tracker.start();
      holds.start();
      refusalBuffer.start();
    },
    async stop() {
      await leasing?.stop();
      await holds.stop();
      await tracker.stop();
      await window.close();
      await router.close();
      await refusalBuffer.close();
    },
  };
}
