/**
 * The composition root: the only place where concrete stores, the ledger and upstreams
 * meet. It reads the configuration, builds each part in dependency order, starts them, and
 * owns the order of shutdown. What each part does (recovery, connections, snapshots,
 * subscriptions) lives in that part's module.
 */
import type { FastifyInstance } from 'fastify';
import { createAuthenticator } from './auth/authenticator';
import { checkServable, dataPaths, type SlipwayConfig } from './config/config';
import { DashboardFeed } from './dashboard/dashboard-feed';
import { Admission } from './http/admission';
import { isLocalUpstream, readMethodPolicy } from './http/read-methods';
import { createHttpServer } from './http/server';
import { SubscriptionServer } from './http/subscriptions';
import { keepLedgerSaved } from './ledger/ledger-snapshots';
import { LocalLedger } from './ledger/local-ledger';
import { replayJournal } from './ledger/recover-ledger';
import { createKeyLimits } from './limits/key-limits';
import { createMemoryRateLimiter } from './limits/rate-limiter-memory';
import { createRedisRateLimiter } from './limits/rate-limiter-redis';
import { countingJournal } from './stores/counting-journal';
import { instrumentedUpstream } from './upstreams/instrumented-upstream';
import { collectProcessMetrics } from './metrics/metrics';
import { HoldQueue } from './pipeline/hold-queue';
import { RecentRefusals } from './pipeline/recent-refusals';
import { RecentTransactions } from './pipeline/recent-transactions';
import { followUnfinished, warmDuplicateWindow } from './pipeline/recovery';
import { createRouter } from './pipeline/router';
import { createStatusView } from './pipeline/status-view';
import { createSubmissionPipeline } from './pipeline/submission-pipeline';
import { SubmissionTracker } from './pipeline/submission-tracker';
import { leaderTrackerFor, policySourceFor } from './protection/protection-sources';
import { SafeWindow } from './protection/safe-window';
import { watchThreadLoad } from './runtime/thread-load';
import { prepareDataDir } from './stores/data-dir';
import { createRedisDuplicateClaims } from './stores/duplicate-claims-redis';
import type { Journal } from './stores/journal';
import { openJournal } from './stores/open-journal';
import { openKeyStore } from './stores/open-key-store';
import { closeRedis, connectRedis } from './stores/redis-connection';
import { createUpstreams } from './upstreams/create-upstream';
import { verifierFor } from './validation/adaptive-verifier';
import { createTransactionValidator } from './validation/transaction-validator';

export interface RunningApp {
  /** `http://host:port` the server listens on. */
  readonly url: string;
  readonly server: FastifyInstance;
  /** The embedded ledger, when a route uses it. */
  readonly ledger: LocalLedger | undefined;
  readonly journal: Journal;
  readonly tracker: SubmissionTracker;
  /** The key created on first start with an empty key store, shown once. */
  readonly initialKey: { id: string; key: string } | null;
  /** Transactions replayed from the journal into the embedded ledger at start (after a crash). */
  readonly replayed: number;
  /** WebSocket subscriptions on port + 1, where Solana clients look by default (undefined if that port was taken). */
  readonly pubsubUrl: string | undefined;
  /** Stops accepting, finishes in-flight requests, saves the ledger, closes the stores. */
  close(): Promise<void>;
}

export async function startApp(config: SlipwayConfig): Promise<RunningApp> {
  checkServable(config);
  prepareDataDir(config.dataDir);
  const paths = dataPaths(config.dataDir);
  const { network } = config;

  const redis = config.redisUrl === '' ? undefined : await connectRedis(config.redisUrl);
  const limiter = redis === undefined ? createMemoryRateLimiter() : createRedisRateLimiter(redis, config.redisKeyPrefix);
  const keyStore = await openKeyStore(config);
  let initialKey: RunningApp['initialKey'] = null;
  const created = await keyStore.createFirst({ name: 'initial', bundle: true });
  if (created !== null) initialKey = { id: created.record.id, key: created.key };
  const authenticator = await createAuthenticator(keyStore, { rereadMs: KEY_REREAD_MS, maxStaleMs: config.maxKeyStaleMs });
  // How busy the request thread is: verification moves to other threads while it is.
  const load = watchThreadLoad();
  const journal = countingJournal(await openJournal(config));
  collectProcessMetrics();

  let ledger: LocalLedger | undefined;
  const openLedger = () =>
    (ledger ??= LocalLedger.open(
      {
        slotMs: config.slotMs,
        leaders: config.ledgerLeaders.length > 0 ? config.ledgerLeaders : undefined,
        sandwichers: config.ledgerSandwichers,
      },
      paths.ledger,
    ));
  const upstreams = createUpstreams(network, openLedger, instrumentedUpstream);
  const replay = ledger === undefined ? { lastSeq: await journal.lastSeq(), replayed: 0 } : await replayJournal(ledger, journal);

  const recent = new RecentTransactions(config.duplicateTtlMs, config.duplicateMaxEntries);
  await warmDuplicateWindow(journal, recent, config.duplicateTtlMs);

  const router = createRouter(upstreams, network.routes);
  // The server's logger, once it exists: the tracker and the hold queue start after it.
  const logError = (error: unknown, what: string) => server.log.warn({ err: error }, `${what} failed`);
  const window = new SafeWindow(
    leaderTrackerFor(network, config.leaderPollMs, ledger),
    policySourceFor(config.validatorPolicy, config.policyRefreshMs, (method, params) => router.call(method, params)),
    config.safeWindowSlots,
  );
  const tracker = new SubmissionTracker({
    journal,
    reads: router.reads,
    intervalMs: network.rebroadcast.intervalMs,
    maxAttempts: network.rebroadcast.maxAttempts,
    capacity: network.rebroadcast.queueCapacity,
    slotMs: ledger === undefined ? MAINNET_SLOT_MS : config.slotMs,
    window,
    logError,
  });
  const holds = new HoldQueue({
    window,
    journal,
    tracker,
    reads: router.reads,
    checkMs: HOLD_CHECK_MS,
    expiryCheckMs: 1_000,
    // As long as rebroadcast would have kept trying: a durable-nonce transaction has no blockhash to expire.
    maxHoldMs: network.rebroadcast.intervalMs * network.rebroadcast.maxAttempts,
    logError,
  });
  const pipeline = createSubmissionPipeline({
    router,
    journal,
    recent,
    tracker,
    duplicateTtlMs: config.duplicateTtlMs,
    initialSeq: replay.lastSeq,
    protection: { window, holds },
    claims: redis === undefined ? undefined : createRedisDuplicateClaims(redis, config.redisKeyPrefix, config.duplicateTtlMs),
  });
  const refusals = new RecentRefusals(config.duplicateTtlMs);
  const statusView = createStatusView(journal, router, refusals);
  const verifier = verifierFor(config, load);
  const validator = createTransactionValidator(recent, verifier);
  const dashboard = new DashboardFeed({ journal, keys: () => keyStore.list(), logError });
  // One admission for every listener: connections per address are counted across the ports.
  const admission = new Admission({
    maxConnectionsPerClient: config.maxConnectionsPerClient,
    maxInFlight: config.maxInFlightRequests,
    maxInFlightPerKey: config.maxInFlightPerKey,
    maxEventLoopDelayMs: config.maxEventLoopDelayMs,
  });
  const keyLimits = createKeyLimits(limiter);
  const server = createHttpServer({
    authenticator,
    pipeline,
    router,
    validator,
    statusView,
    refusals,
    limits: keyLimits,
    bundleResult: config.bundleResult,
    readAllowed: readMethodPolicy(config.readMethods, isLocalUpstream(network.upstreams[network.routes.reads]!)),
    logLevel: config.logLevel,
    headersTimeoutMs: config.headersTimeoutMs,
    requestTimeoutMs: config.httpRequestTimeoutMs,
    idleTimeoutMs: config.idleTimeoutMs,
    metricsToken: config.metricsToken,
    dashboard: { feed: dashboard, token: config.dashboardToken },
    admission,
  });
  const leasing = await followUnfinished({ journal, router, tracker, holds, logError });
  tracker.start();
  holds.start();
  dashboard.start();

  const snapshots =
    ledger === undefined
      ? undefined
      : keepLedgerSaved(ledger, paths.ledger, config.snapshotIntervalMs, () => pipeline.handedOverWatermark());
  ledger?.start();

  await server.listen({ host: config.host, port: config.port });
  const address = server.server.address();
  const port = typeof address === 'object' && address !== null ? address.port : config.port;
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;

  const subscriptions = new SubscriptionServer({
    authenticator,
    router,
    admission,
    keyLimits,
    pollIntervalMs: network.subscriptionPollMs,
    limits: {
      perConnection: config.maxSubscriptionsPerConnection,
      perKey: config.maxSubscriptionsPerKey,
      total: config.maxSubscriptions,
      idleMs: config.idleTimeoutMs,
      pingMs: config.webSocketPingMs,
    },
    headersTimeoutMs: config.headersTimeoutMs,
    requestTimeoutMs: config.httpRequestTimeoutMs,
    logError: (error, what) => server.log.warn({ err: error }, `${what} failed`),
  });
  const besideServed = await subscriptions.start(server.server, config.host, port + 1, (message) => server.log.warn(message));

  let closing: Promise<void> | undefined;
  return {
    url: `http://${host}:${port}`,
    server,
    ledger,
    journal,
    tracker,
    initialKey,
    replayed: replay.replayed,
    pubsubUrl: besideServed ? `ws://${host}:${port + 1}` : undefined,
    close() {
      closing ??= (async () => {
        await subscriptions.close();
        await server.close();
        snapshots?.stop();
        await leasing?.stop();
        await dashboard.stop();
        await holds.stop();
        await tracker.stop();
        await window.close();
        await router.close();
        await verifier?.close();
        snapshots?.save();
        authenticator.close();
        await journal.close();
        load.close();
        await keyStore.close();
        await limiter.close();
        await closeRedis(redis);
      })();
      return closing;
    },
  };
}

/** Solana's slot time, for placing landings seen through RPC nodes at their slot. */
const MAINNET_SLOT_MS = 400;

/** Keys are read again this often, notices or not (a lost NOTIFY must not keep a revoked key working). */
const KEY_REREAD_MS = 2_000;

/** How often the safe window is looked at while protected transactions are held: several times per (mainnet) slot. */
const HOLD_CHECK_MS = 50;
