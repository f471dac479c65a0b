/**
 * The composition root: the only place where concrete stores, the ledger and upstreams
 * meet. It reads the configuration, builds each part in dependency order, starts them, and
 * owns the order of shutdown. What each part does (recovery, connections, snapshots,
 * subscriptions) lives in that part's module.
 */
import type { FastifyInstance } from 'fastify';
import { openGatewayKeys } from './auth/open-keys';
import { checkServable, dataPaths, type SlipwayConfig } from './config/config';
import { DashboardFeed } from './dashboard/dashboard-feed';
import { openEvents } from './events/open-events';
import { createListeners } from './http/listeners';
import { keepLedgerSaved } from './ledger/ledger-snapshots';
import { LocalLedger } from './ledger/local-ledger';
import { contentionOf } from './ledger/block-producer';
import { startMarket } from './market/start-market';
import { PriorityFeeAdvice } from './advice/priority-fee-estimate';
import { RecentFees } from './advice/recent-fees';
import { LandingAdvice } from './advice/landing-advice';
import { TipFloor } from './advice/tip-floor';
import { ownTipFloor, passedThroughTipFloor } from './advice/tip-floor-reader';
import { createUpstreamTipFloor } from './advice/upstream-tip-floor';
import { replayJournal } from './ledger/recover-ledger';
import { createMemoryRateLimiter } from './limits/rate-limiter-memory';
import { createRedisRateLimiter } from './limits/rate-limiter-redis';
import { collectProcessMetrics } from './metrics/metrics';
import { assemblePipeline } from './pipeline/assemble-pipeline';
import type { LandingTracker } from './pipeline/landing-tracker';
import { watchThreadLoad } from './runtime/thread-load';
import { countingJournal, openJournal, type Journal } from './stores/journal';
import { prepareDataDir } from './stores/database/data-dir';
import { createRedisDuplicateClaims } from './stores/duplicate-claims-redis';
import { openStore } from './stores/database/open-store';
import { IDEMPOTENCY_STORE, REFUSAL_COUNTS } from './stores/store-adapters';
import { closeRedis, connectRedis } from './stores/database/redis-connection';
import { createUpstreams } from './upstreams/create-upstream';
import { loadTpuIdentity, type TpuIdentity } from './upstreams/tpu-identity';
import { instrumentedUpstream } from './upstreams/instrumented-upstream';
import { verifierFor } from './validation/adaptive-verifier';
import { createTransactionValidator } from './validation/transaction-validator';

export interface RunningApp {
  /** `http://host:port` the server listens on. */
  readonly url: string;
  readonly server: FastifyInstance;
  /** The embedded ledger, when a route uses it. */
  readonly ledger: LocalLedger | undefined;
  readonly journal: Journal;
  readonly tracker: LandingTracker;
  /** The key created on first start with an empty key store, shown once. */
  readonly initialKey: { id: string; key: string } | null;
  /** Transactions replayed from the journal into the embedded ledger at start (after a crash). */
  readonly replayed: number;
  /** The identity the TPU upstreams present (its public key, and whether it came from identityKeypair), when one is configured. */
  readonly tpuIdentity: { readonly address: string; readonly source: 'file' | 'generated' } | undefined;
  /** WebSocket subscriptions on port + 1, where Solana clients look by default (undefined if that port was taken). */
  readonly pubsubUrl: string | undefined;
  /** Stops accepting, finishes in-flight requests, saves the ledger, closes the stores. */
  close(): Promise<void>;
}

export async function startApp(config: SlipwayConfig): Promise<RunningApp> {
  checkServable(config);
  // Refused before anything is opened (a file others may read stops start-up): see identityKeypair.
  const usesTpu = Object.values(config.network.upstreams).some((upstream) => upstream.type === 'tpu');
  const tpuIdentity: TpuIdentity | undefined = usesTpu ? loadTpuIdentity(config.identityKeypair) : undefined;
  prepareDataDir(config.dataDir);
  const paths = dataPaths(config.dataDir);

  const redis = config.redisUrl === '' ? undefined : await connectRedis(config.redisUrl);
  const limiter = redis === undefined ? createMemoryRateLimiter() : createRedisRateLimiter(redis, config.redisKeyPrefix);
  const keys = await openGatewayKeys(config);
  // How busy the request thread is: verification moves to other threads while it is.
  const load = watchThreadLoad();
  const events = await openEvents(config, keys.authenticator, (error, what) => logError(error, what));
  const journal = events.wrap(countingJournal(await openJournal(config), (ended) => listeners.server.log.info(ended, 'transaction ended')));
  const refusalCounts = await openStore(config, REFUSAL_COUNTS);
  collectProcessMetrics();

  // The embedded ledger is opened only if a route uses it, and catches up with the journal after a crash.
  let ledger: LocalLedger | undefined;
  const leaders = config.ledgerLeaders.length > 0 ? config.ledgerLeaders : undefined;
  const ledgerSettings = { slotMs: config.slotMs, leaders, sandwichers: config.ledgerSandwichers, contention: contentionOf(config) };
  const upstreams = createUpstreams(
    config.network,
    {
      ledger: () => (ledger ??= LocalLedger.open(ledgerSettings, paths.ledger)),
      identity: () => tpuIdentity!,
    },
    instrumentedUpstream,
  );
  const replay = ledger === undefined ? { lastSeq: await journal.lastSeq(), replayed: 0 } : await replayJournal(ledger, journal);

  // The server's logger, once it exists: nothing logs through it before the listeners are made.
  const logError = (error: unknown, what: string) => listeners.server.log.warn({ err: error }, `${what} failed`);
  const claims = redis && createRedisDuplicateClaims(redis, config.redisKeyPrefix, config.duplicateTtlMs);
  // The fee advice reads through the router the pipeline makes (once it is made), and the pipeline's reports read its calibration.
  const recentFees = new RecentFees((method, params) => submissions.router.call(method, params));
  const landingAdvice = new LandingAdvice(recentFees, (query) => journal.outcomes(query));
  // Fed with the tips of the bundles the tracker sees land; read by the tip floor path and stream.
  const tipFloor = new TipFloor();
  const submissions = await assemblePipeline(config, {
    journal,
    refusalCounts,
    upstreams,
    ledger,
    claims,
    initialSeq: replay.lastSeq,
    landedTips: tipFloor,
    logError,
    adviceFigures: (sinceMs, keyId) => landingAdvice.figures(sinceMs, keyId),
    stuck: { slots: config.webhookStuckSlots, tell: (seq, position, slots) => events.sink.stuck(seq, position, slots, Date.now()) },
  });
  const verifier = verifierFor(config, load);
  const validator = createTransactionValidator(submissions.recent, verifier);
  const dashboard = new DashboardFeed({
    journal,
    keys: () => keys.store.list(),
    webhooks: () => events.webhookStates(),
    reports: submissions.landingReports,
    logError,
  });
  const idempotencyKeys = await openStore(config, IDEMPOTENCY_STORE);
  const listeners = createListeners(config, {
    authenticator: keys.authenticator,
    submissions,
    validator,
    limiter,
    dashboard,
    idempotencyKeys,
    feeAdvice: new PriorityFeeAdvice(recentFees),
    landingAdvice,
    events: events.streams,
    tipFloor:
      config.tipFloorUrl === ''
        ? ownTipFloor(tipFloor)
        : passedThroughTipFloor(tipFloor, createUpstreamTipFloor(config.tipFloorUrl), (message) => listeners.server.log.warn(message)),
  });

  await submissions.start();
  events.start();
  dashboard.start();
  const watermark = () => submissions.pipeline.handedOverWatermark();
  const snapshots = ledger && keepLedgerSaved(ledger, paths.ledger, config.snapshotIntervalMs, watermark);
  ledger?.start();
  const market = ledger && startMarket(ledger, config.market, config.slotMs, { seed: config.marketSeed });
  const { url, pubsubUrl } = await listeners.listen();

  let closing: Promise<void> | undefined;
  return {
    url,
    pubsubUrl,
    server: listeners.server,
    ledger,
    journal,
    tracker: submissions.tracker,
    initialKey: keys.initialKey,
    tpuIdentity: tpuIdentity && { address: tpuIdentity.address, source: tpuIdentity.source },
    replayed: replay.replayed,
    close() {
      closing ??= (async () => {
        await listeners.close();
        landingAdvice.close();
        market?.stop();
        snapshots?.stop();
        await dashboard.stop();
        await submissions.stop();
        await events.stop();
        await verifier?.close();
        snapshots?.save();
        await keys.close();
        await journal.close();
        await idempotencyKeys.close();
        load.close();
        await limiter.close();
        await closeRedis(redis);
      })();
      return closing;
    },
  };
}
