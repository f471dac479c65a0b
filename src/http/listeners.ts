/**
 * The gateway's listeners, from the settings: one admission for all of them (connections
 * per address are counted across the ports), the HTTP server on the configured port, and
 * the WebSocket subscriptions on its upgrades and on port + 1, where Solana clients look by
 * default. Built first, so the server's logger exists while the rest starts; `listen` opens
 * the ports last, once everything behind them runs.
 */
import type { PriorityFeeAdvice } from '../advice/priority-fee-estimate';
import type { LandingAdvice } from '../advice/landing-advice';
import type { TipFloorReader } from '../advice/tip-floor-reader';
import type { FastifyInstance } from 'fastify';
import type { Authenticator } from '../auth/authenticator';
import type { SlipwayConfig } from '../config/config';
import type { DashboardFeed } from '../dashboard/dashboard-feed';
import { createKeyLimits } from '../limits/key-limits';
import type { RateLimiter } from '../limits/rate-limiter';
import type { AssembledPipeline } from '../pipeline/assemble-pipeline';
import type { IdempotencyStore } from '../stores/idempotency-store';
import type { TransactionValidator } from '../validation/transaction-validator';
import { Admission } from './admission';
import { freePortPair } from './port-pair';
import { isLocalUpstream, readMethodPolicy } from './read-methods';
import { createHttpServer } from './server';
import { SubscriptionServer } from './subscriptions';
import type { EventStreams } from '../events/event-streams';
import { TipStream } from './tip-stream';

export type ListenerSettings = Pick<
  SlipwayConfig,
  | 'host'
  | 'port'
  | 'network'
  | 'logLevel'
  | 'bundleResult'
  | 'readMethods'
  | 'headersTimeoutMs'
  | 'httpRequestTimeoutMs'
  | 'idleTimeoutMs'
  | 'leanHttp'
  | 'metricsToken'
  | 'dashboardToken'
  | 'maxConnectionsPerClient'
  | 'maxInFlightRequests'
  | 'maxInFlightPerKey'
  | 'maxEventLoopDelayMs'
  | 'idempotencyTtlMs'
  | 'maxSubscriptionsPerConnection'
  | 'maxSubscriptionsPerKey'
  | 'maxSubscriptions'
  | 'webSocketPingMs'
>;

/**
 * A claim with no answer this long was abandoned (its gateway stopped mid-answer): a submission's
 * answer takes at most the upstream time-outs (a few seconds); a copy waits for it until then.
 */
const IDEMPOTENCY_ABANDONED_AFTER_MS = 15_000;
/** How often a copy waiting on another gateway's answer looks again. */
const IDEMPOTENCY_POLL_MS = 50;

export interface ListenerParts {
  readonly authenticator: Authenticator;
  readonly submissions: Pick<AssembledPipeline, 'pipeline' | 'router' | 'statusView' | 'refusals' | 'recordRefusal' | 'landingReports'>;
  readonly validator: TransactionValidator;
  readonly limiter: RateLimiter;
  readonly dashboard: DashboardFeed;
  readonly idempotencyKeys: IdempotencyStore;
  readonly feeAdvice: PriorityFeeAdvice;
  readonly landingAdvice: LandingAdvice;
  /** Jito's tip floor, as `GET /api/v1/bundles/tip_floor` and its stream answer it. */
  readonly tipFloor: TipFloorReader;
  /** Submission events, streamed by `submissionSubscribe`. */
  readonly events?: EventStreams;
}

export interface Listeners {
  readonly server: FastifyInstance;
  /** Opens the ports: `url` is the HTTP server's, `pubsubUrl` port + 1's (undefined if that port was taken). */
  listen(): Promise<{ url: string; pubsubUrl: string | undefined }>;
  /** Stops accepting and finishes what is in flight: WebSockets first, then HTTP. */
  close(): Promise<void>;
}

export function createListeners(settings: ListenerSettings, parts: ListenerParts): Listeners {
  const { network } = settings;
  const { authenticator } = parts;
  const admission = new Admission({
    maxConnectionsPerClient: settings.maxConnectionsPerClient,
    maxInFlight: settings.maxInFlightRequests,
    maxInFlightPerKey: settings.maxInFlightPerKey,
    maxEventLoopDelayMs: settings.maxEventLoopDelayMs,
  });
  const keyLimits = createKeyLimits(parts.limiter);
  const server = createHttpServer({
    ...parts.submissions,
    feeAdvice: parts.feeAdvice,
    landingAdvice: parts.landingAdvice,
    tipFloor: parts.tipFloor,
    authenticator,
    validator: parts.validator,
    limits: keyLimits,
    bundleResult: settings.bundleResult,
    readAllowed: readMethodPolicy(settings.readMethods, isLocalUpstream(network.upstreams[network.routes.reads]!)),
    logLevel: settings.logLevel,
    headersTimeoutMs: settings.headersTimeoutMs,
    requestTimeoutMs: settings.httpRequestTimeoutMs,
    idleTimeoutMs: settings.idleTimeoutMs,
    leanHttp: settings.leanHttp,
    metricsToken: settings.metricsToken,
    dashboard: { feed: parts.dashboard, token: settings.dashboardToken },
    admission,
    idempotency: {
      store: parts.idempotencyKeys,
      ttlMs: settings.idempotencyTtlMs,
      abandonedAfterMs: IDEMPOTENCY_ABANDONED_AFTER_MS,
      pollMs: IDEMPOTENCY_POLL_MS,
    },
  });
  const logError = (error: unknown, what: string) => server.log.warn({ err: error }, `${what} failed`);
  const tipStream = new TipStream({
    tipFloor: parts.tipFloor,
    authenticator,
    keyLimits,
    pingMs: settings.webSocketPingMs,
    logError,
  });
  const subscriptions = new SubscriptionServer({
    authenticator,
    router: parts.submissions.router,
    admission,
    keyLimits,
    pollIntervalMs: network.subscriptionPollMs,
    limits: {
      perConnection: settings.maxSubscriptionsPerConnection,
      perKey: settings.maxSubscriptionsPerKey,
      total: settings.maxSubscriptions,
      idleMs: settings.idleTimeoutMs,
      pingMs: settings.webSocketPingMs,
    },
    headersTimeoutMs: settings.headersTimeoutMs,
    requestTimeoutMs: settings.httpRequestTimeoutMs,
    tipStream,
    ...(parts.events === undefined ? {} : { events: parts.events }),
    logError,
  });
  return {
    server,
    async listen() {
      // Any port: one whose port + 1 is free too, so that subscriptions are where clients look.
      const wanted = settings.port === 0 ? await freePortPair(settings.host) : settings.port;
      await server.listen({ host: settings.host, port: wanted });
      const address = server.server.address();
      const port = typeof address === 'object' && address !== null ? address.port : settings.port;
      const host = settings.host.includes(':') ? `[${settings.host}]` : settings.host;
      const beside = await subscriptions.start(server.server, settings.host, port + 1, (message) => server.log.warn(message));
      return { url: `http://${host}:${port}`, pubsubUrl: beside ? `ws://${host}:${port + 1}` : undefined };
    },
    async close() {
      await subscriptions.close();
      await server.close();
      await parts.tipFloor.close();
    },
  };
}
