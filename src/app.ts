/**
 * The composition root: the only place where concrete stores, the ledger and upstreams
 * meet. It builds them from the configuration, recovers what a crash left (ledger replay,
 * duplicate detection, tracking of unfinished submissions), wires the pipeline and the
 * HTTP server, and owns the order of shutdown.
 */
import http from 'node:http';
import type { FastifyInstance } from 'fastify';
import { createAuthenticator } from './auth/authenticator';
import type { SlipwayConfig } from './config';
import { dataPaths } from './config';
import type { UpstreamConfig } from './config-file';
import { createHttpServer } from './http/server';
import { Admission } from './http/admission';
import { isLocalUpstream, readMethodPolicy } from './http/read-methods';
import { SubscriptionServer } from './http/subscriptions';
import { LocalLedger } from './ledger/local-ledger';
import { replayJournal } from './ledger/recover-ledger';
import { RecentRefusals } from './pipeline/recent-refusals';
import { RecentTransactions } from './pipeline/recent-transactions';
import { createRouter } from './pipeline/router';
import { createStatusView } from './pipeline/status-view';
import { createSubmissionPipeline } from './pipeline/submission-pipeline';
import { SubmissionTracker } from './pipeline/submission-tracker';
import type { Journal, JournalEntry } from './stores/journal';
import { openJournal } from './stores/open-journal';
import { openKeyStore } from './stores/open-key-store';
import { withoutPassword } from './stores/postgres-database';
import { createEmbeddedLedgerUpstream } from './upstreams/embedded-ledger';
import { createJitoUpstream } from './upstreams/jito';
import { createSinkUpstream } from './upstreams/sink';
import { createSolanaRpcUpstream } from './upstreams/solana-rpc';
import type { Upstream } from './upstreams/upstream';
import { createTransactionValidator, inlineVerifier } from './validation/transaction-validator';
import { digestWireTransaction } from './validation/transaction-digest';
import { restoreValidatedTransaction } from './validation/validate-transaction';
import { createWorkerVerifier } from './validation/worker-verifier';
import { createAdaptiveVerifier } from './validation/adaptive-verifier';
import { watchThreadLoad } from './runtime/thread-load';
import { RoundLoop } from './runtime/round-loop';
import { HoldQueue } from './protection/hold-queue';
import { createLedgerLeaderTracker, type LeaderTracker } from './protection/leader-tracker';
import { createRpcLeaderTracker } from './protection/rpc-leader-tracker';
import { SafeWindow } from './protection/safe-window';
import { createShieldPolicySource } from './protection/shield-policy';
import { createFilePolicySource, createUrlPolicySource, type PolicySource } from './protection/validator-policy';
import type { Router } from './pipeline/router';
import { Redis } from 'ioredis';
import { createKeyLimits } from './limits/key-limits';
import { prepareDataDir } from './stores/data-dir';
import { createMemoryRateLimiter } from './limits/rate-limiter-memory';
import { createRedisRateLimiter } from './limits/rate-limiter-redis';
import { createRedisDuplicateClaims } from './stores/duplicate-claims-redis';
import { countingJournal } from './metrics/counting-journal';
import { instrumentedUpstream } from './metrics/instrumented-upstream';
import { collectProcessMetrics } from './metrics/metrics';
import { DashboardFeed } from './dashboard/dashboard-feed';

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

function createUpstream(name: string, config: UpstreamConfig, limits: { timeoutMs: number; maxAnswerBytes: number }, ledger: () => LocalLedger): Upstream {
  switch (config.type) {
    case 'embedded':
      return createEmbeddedLedgerUpstream(ledger(), name);
    case 'rpc':
      return createSolanaRpcUpstream({ name, urls: config.urls, protected: config.protected, ...limits });
    case 'sink':
      return createSinkUpstream(name);
    case 'jito':
      return createJitoUpstream({ name, urls: config.urls, protected: config.protected, ...limits, minTipLamports: config.minTipLamports, requireTip: config.requireTip });
  }
}

export async function startApp(config: SlipwayConfig): Promise<RunningApp> {
  if (config.postgresUrl !== '' && Object.values(config.network.upstreams).some((u) => u.type === 'embedded')) {
    // Each gateway's embedded ledger is its own chain, recovered from its own journal: it cannot share one.
    throw new Error(
      'postgresUrl is for a cluster of gateways in front of a shared network; the embedded ledger is one gateway\'s own chain and keeps its journal in SQLite: configure rpc/jito upstreams (bin/slipway ledger serves a local cluster), or leave postgresUrl unset',
    );
  }
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
  const openLedger = () => (ledger ??= LocalLedger.open({ slotMs: config.slotMs, leaders: config.ledgerLeaders.length > 0 ? config.ledgerLeaders : undefined, sandwichers: config.ledgerSandwichers }, paths.ledger));
  const upstreams = new Map<string, Upstream>();
  for (const [name, upstreamConfig] of Object.entries(network.upstreams)) {
    upstreams.set(name, instrumentedUpstream(createUpstream(name, upstreamConfig, { timeoutMs: network.requestTimeoutMs, maxAnswerBytes: network.maxUpstreamAnswerBytes }, openLedger)));
  }
  const replay = ledger === undefined ? { lastSeq: await journal.lastSeq(), replayed: 0 } : await replayJournal(ledger, journal);

  const recent = new RecentTransactions(config.duplicateTtlMs, config.duplicateMaxEntries);
  for (const entry of await journal.since(Date.now() - config.duplicateTtlMs)) {
    for (const tx of entry.transactions) if (tx.state !== 'rejected') recent.rememberDigest(digestWireTransaction(tx.wire));
  }

  const router = createRouter(upstreams, network.routes);
  // The server's logger, once it exists: the tracker and the hold queue start after it.
  const logError = (error: unknown, what: string) => server.log.warn({ err: error }, `${what} failed`);
  const window = new SafeWindow(leaderTrackerFor(config, ledger), policySourceFor(config, router), config.safeWindowSlots);
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
  const verifier = !config.verifySignatures ? null : config.verifyThreads > 0 ? createAdaptiveVerifier(createWorkerVerifier(config.verifyThreads, config.verifySpinUs / 1000), load) : inlineVerifier;
  const validator = createTransactionValidator(recent, verifier);
  const dashboard = new DashboardFeed({ journal, keys: () => keyStore.list(), logError });
  // One admission for every listener: connections per address are counted across the ports.
  const admission = new Admission({ maxConnectionsPerClient: config.maxConnectionsPerClient, maxInFlight: config.maxInFlightRequests, maxInFlightPerKey: config.maxInFlightPerKey, maxEventLoopDelayMs: config.maxEventLoopDelayMs });
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
  const adopt = (entries: readonly JournalEntry[]) => follow(entries, router, tracker, holds);
  const { leases } = journal;
  // One gateway: everything unfinished is its own. In a cluster: what no live gateway holds.
  adopt(leases === undefined ? await journal.unfinished() : await leases.takeOver(TAKE_OVER_BATCH));
  const leasing =
    leases === undefined
      ? undefined
      : new RoundLoop(async () => {
          try {
            const lost = await leases.renew([...tracker.following(), ...holds.following()]);
            if (lost.length > 0) {
              tracker.drop(new Set(lost));
              holds.drop(new Set(lost));
            }
            adopt(await leases.takeOver(TAKE_OVER_BATCH));
          } catch (error) {
            logError(error, 'renewing rebroadcast leases');
          }
        }, LEASE_RENEW_MS);
  leasing?.start();
  tracker.start();
  holds.start();
  dashboard.start();

  const saveLedger = () => {
    if (ledger === undefined) return;
    ledger.journalSeq = pipeline.handedOverWatermark();
    ledger.save(paths.ledger);
  };
  saveLedger();
  let snapshots: NodeJS.Timeout | undefined;
  if (ledger !== undefined) {
    ledger.onUnjournaledChange = saveLedger;
    snapshots = setInterval(saveLedger, config.snapshotIntervalMs);
    snapshots.unref();
    ledger.start();
  }

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
  subscriptions.attach(server.server);
  const pubsub = await subscriptions.listenBeside(config.host, port + 1, (message) => server.log.warn(message));

  let closing: Promise<void> | undefined;
  return {
    url: `http://${host}:${port}`,
    server,
    ledger,
    journal,
    tracker,
    initialKey,
    replayed: replay.replayed,
    pubsubUrl: pubsub === undefined ? undefined : `ws://${host}:${port + 1}`,
    close() {
      closing ??= (async () => {
        await subscriptions.close();
        await new Promise((resolve) => (pubsub === undefined ? resolve(undefined) : pubsub.close(resolve)));
        await server.close();
        clearInterval(snapshots);
        await leasing?.stop();
        await dashboard.stop();
        await holds.stop();
        await tracker.stop();
        await window.close();
        await router.close();
        await verifier?.close();
        saveLedger();
        authenticator.close();
        await journal.close();
        load.close();
        await keyStore.close();
        await limiter.close();
        await redis?.quit().catch(() => redis.disconnect());
      })();
      return closing;
    },
  };
}

/**
 * One Redis connection for the shared stores. No offline queue: while Redis is unreachable
 * a command fails at once (the request gets a clear 503), instead of waiting for it.
 */
async function connectRedis(url: string): Promise<Redis> {
  const redis = new Redis(url, { lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 1, connectTimeout: 2_000 });
  // Reconnection is ioredis's (with back-off); errors meanwhile are answered per request.
  redis.on('error', () => {});
  try {
    await redis.connect();
  } catch (error) {
    redis.disconnect();
    throw new Error(`cannot reach Redis at ${withoutPassword(url)}: ${error instanceof Error ? error.message : String(error)}`);
  }
  return redis;
}

/** Solana's slot time, for placing landings seen through RPC nodes at their slot. */
const MAINNET_SLOT_MS = 400;

/** Keys are read again this often, notices or not (a lost NOTIFY must not keep a revoked key working). */
const KEY_REREAD_MS = 2_000;

/** How often the safe window is looked at while protected transactions are held: several times per (mainnet) slot. */
const HOLD_CHECK_MS = 50;

/** Where protection learns the leaders: the embedded ledger's own schedule, or the RPC nodes that answer reads. */
function leaderTrackerFor(config: SlipwayConfig, ledger: LocalLedger | undefined): LeaderTracker {
  if (ledger !== undefined) return createLedgerLeaderTracker(ledger);
  const { network } = config;
  const reads = network.upstreams[network.routes.reads]!;
  if (reads.type !== 'rpc' || network.routes.antiMev.length === 0) {
    const reason = network.routes.antiMev.length === 0 ? 'no route takes anti-MEV traffic' : `the reads upstream "${network.routes.reads}" has no leader schedule`;
    return { upcoming: () => ({ known: false, reason: `the leader schedule is unknown: ${reason}` }), close: async () => {} };
  }
  return createRpcLeaderTracker({ urls: reads.urls, timeoutMs: network.requestTimeoutMs, pollMs: config.leaderPollMs });
}

/** The validator policy the configuration names: a file, an http(s) URL, or shield:ADDRESS; none when unset. */
function policySourceFor(config: SlipwayConfig, router: Router): PolicySource | undefined {
  const where = config.validatorPolicy.trim();
  const options = { refreshMs: config.policyRefreshMs };
  if (where === '') return undefined;
  if (where.startsWith('shield:')) return createShieldPolicySource(where.slice('shield:'.length), (method, params) => router.call(method, params), options);
  if (/^https?:\/\//.test(where)) return createUrlPolicySource(where, options);
  return createFilePolicySource(where, options);
}

/** Options for sending a held transaction after a restart (its preflight ran when it was accepted). */
const RESUMED_SEND_OPTIONS = { skipPreflight: true, preflightCommitment: 'processed', maxRetries: undefined, minContextSlot: undefined } as const;

/** Takes over at most this many submissions per round (a dead gateway's backlog comes over in a few rounds). */
const TAKE_OVER_BATCH = 2_000;
/** Leases are renewed (and stopped gateways' taken over) this often: well within a lease. */
const LEASE_RENEW_MS = 1_000;

/** Follows unfinished submissions (after a restart, or taken over from a stopped gateway): tracks what is forwarded, holds again what was held. */
function follow(entries: readonly JournalEntry[], router: Router, tracker: SubmissionTracker, holds: HoldQueue): void {
  for (const entry of entries) {
    const upstreams = entry.routes.map((name) => router.byName(name)).filter((u): u is Upstream => u !== undefined);
    if (entry.kind === 'bundle') {
      if (upstreams.some((u) => u.tracked)) tracker.trackBundle({ seq: entry.seq, bundleId: entry.bundleId!, size: entry.transactions.length, upstreams, polls: 0, submittedAt: entry.createdAt });
      continue;
    }
    for (const tx of entry.transactions) {
      const restored = restoreValidatedTransaction(tx.wire);
      if (tx.state === 'held') {
        holds.hold([{ seq: entry.seq, position: tx.position, tx: restored, upstreams, options: RESUMED_SEND_OPTIONS, heldSince: entry.createdAt, reason: tx.reason ?? 'held before the restart' }]);
      } else if (tx.state === 'forwarded' && upstreams.some((u) => u.tracked)) {
        tracker.track({ seq: entry.seq, position: tx.position, tx: restored, upstreams, attempts: tx.attempts, submittedAt: entry.createdAt, protected: entry.antiMev });
      }
    }
  }
}
