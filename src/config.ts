/**
 * Slipway's configuration: one typed object, its defaults in one place, read from
 * environment variables and overridden by command-line flags. docs/CONFIG.md has the table.
 */
import os from 'node:os';
import path from 'node:path';
import { defaultValidatorIdentities, LeaderSchedule } from './ledger/leader-schedule';
import { DEFAULT_NETWORK, SINK_NETWORK, readConfigFile, type FileSettings, type NetworkConfig } from './config-file';
import { checkSchemaName } from './stores/postgres-database';

export interface SlipwayConfig {
  readonly host: string;
  readonly port: number;
  /** Keys, journal and the embedded ledger's state live here. */
  readonly dataDir: string;
  /** Milliseconds per slot of the embedded ledger. */
  readonly slotMs: number;
  /** `sendBundle`'s result: the bundle ID (default) or the array of signatures (the spec's example). */
  readonly bundleResult: 'id' | 'signatures';
  /** How long an accepted transaction is remembered for duplicate detection (≥ a blockhash's 150-slot life). */
  readonly duplicateTtlMs: number;
  /** At most this many remembered (about 200 bytes each); past it the oldest are forgotten first. */
  readonly duplicateMaxEntries: number;
  /** SQLite `synchronous` for the journal: NORMAL survives kill -9, FULL also power loss. */
  readonly journalSync: 'NORMAL' | 'FULL';
  /** How often the embedded ledger's state is saved, bounding what recovery replays after a crash. */
  readonly snapshotIntervalMs: number;
  readonly logLevel: string;
  /**
   * False only behind a trusted verifier that has already checked every signature: Slipway
   * then skips ed25519 verification (everything else is still checked).
   */
  readonly verifySignatures: boolean;
  /** Threads that verify signatures beside the request thread; 0 verifies in the request thread. */
  readonly verifyThreads: number;
  /**
   * How long a verification thread spins, in µs, before it sleeps when it has nothing to do:
   * under load the next transaction comes within it and needs no wake-up (0 on one core).
   */
  readonly verifySpinUs: number;
  /** `sink` replaces the network with an upstream that drops everything (a benchmarking aid). */
  readonly upstream: 'configured' | 'sink';
  /** Validator identities of the embedded ledger's leader schedule; empty: the default ones (ledger/leader-schedule.ts). */
  readonly ledgerLeaders: readonly string[];
  /** Those of the schedule's identities that sandwich: the embedded ledger records what they see (a test aid). */
  readonly ledgerSandwichers: readonly string[];
  /**
   * Anti-MEV validator policy: a JSON file, an http(s) URL serving that JSON, or
   * `shield:ADDRESS` (a Yellowstone Shield policy account read through the reads upstream).
   * Empty: no policy, so protection means the protected routes only (docs/ANTI_MEV.md).
   */
  readonly validatorPolicy: string;
  /** How often the policy is read again. */
  readonly policyRefreshMs: number;
  /** The slots from now that must all be led by trusted validators before a protected transaction is sent. */
  readonly safeWindowSlots: number;
  /** How often the current slot is asked of the RPC nodes for protection (about half a slot). */
  readonly leaderPollMs: number;
  /** Redis (`redis://host:port/db`) for rate limits shared by a cluster of gateways; empty: in this process. */
  readonly redisUrl: string;
  /** Prefix of every Redis key Slipway writes (several clusters, or tests, can share one Redis). */
  readonly redisKeyPrefix: string;
  /** PostgreSQL (`postgres://user@host:port/db`) for the API keys shared by a cluster of gateways; empty: SQLite in the data dir. */
  readonly postgresUrl: string;
  /** The schema Slipway's tables live in (created if missing). */
  readonly postgresSchema: string;
  /** A client must send a request's headers within this, or its connection is cut (408). */
  readonly headersTimeoutMs: number;
  /** …and the whole request within this. */
  readonly httpRequestTimeoutMs: number;
  /** A keep-alive connection with no request in progress is closed after this (above a load balancer's idle time-out, so that it closes first). */
  readonly idleTimeoutMs: number;
  /** Open connections per client address (0: no limit); past it, 429 and the connection closed. */
  readonly maxConnectionsPerClient: number;
  /** Requests in progress at once (0: no limit); past it new ones are shed with 503 + Retry-After. */
  readonly maxInFlightRequests: number;
  /** Requests in progress at once for one API key (so that one key cannot take every place); 0: no limit. */
  readonly maxInFlightPerKey: number;
  /** How long keys may be used when the key store cannot be read again; past it every request is refused (fail closed); 0: never. */
  readonly maxKeyStaleMs: number;
  /** How late the event loop may run, in ms, before new requests are shed (0: not watched). */
  readonly maxEventLoopDelayMs: number;
  /** Read methods forwarded to the reads upstream; empty: the default list (http/read-methods.ts); `*`: all. */
  readonly readMethods: readonly string[];
  /** WebSocket subscriptions one connection may hold. */
  readonly maxSubscriptionsPerConnection: number;
  /** …one API key over all its connections. */
  readonly maxSubscriptionsPerKey: number;
  /** …the whole gateway. */
  readonly maxSubscriptions: number;
  /** WebSocket pings go out this often; a socket that did not answer the last one is closed. */
  readonly webSocketPingMs: number;
  /** Who may read /metrics from another machine (`Authorization: Bearer …`); empty: this machine only. */
  readonly metricsToken: string;
  /** Who may open /dashboard from another machine (bearer token or ?token=); empty: this machine only. */
  readonly dashboardToken: string;
  /** Upstreams and routes: from the configuration file, else the embedded ledger alone. */
  readonly network: NetworkConfig;
}

type ScalarSettings = Omit<SlipwayConfig, 'network'>;

export const DEFAULT_CONFIG: ScalarSettings = {
  host: '127.0.0.1',
  port: 8080,
  dataDir: './data',
  slotMs: 400,
  bundleResult: 'id',
  duplicateTtlMs: 120_000,
  duplicateMaxEntries: 1_000_000,
  journalSync: 'NORMAL',
  snapshotIntervalMs: 10_000,
  logLevel: 'info',
  verifySignatures: true,
  verifyThreads: Math.max(1, os.cpus().length - 1),
  verifySpinUs: os.cpus().length > 1 ? 50 : 0,
  upstream: 'configured',
  ledgerLeaders: [],
  ledgerSandwichers: [],
  validatorPolicy: '',
  policyRefreshMs: 5_000,
  safeWindowSlots: 8,
  leaderPollMs: 200,
  redisUrl: '',
  redisKeyPrefix: 'slipway:',
  postgresUrl: '',
  postgresSchema: 'slipway',
  headersTimeoutMs: 10_000,
  httpRequestTimeoutMs: 30_000,
  idleTimeoutMs: 72_000,
  maxConnectionsPerClient: 1_000,
  maxInFlightRequests: 1_024,
  maxInFlightPerKey: 256,
  maxKeyStaleMs: 60_000,
  maxEventLoopDelayMs: 250,
  readMethods: [],
  maxSubscriptionsPerConnection: 1_000,
  maxSubscriptionsPerKey: 10_000,
  maxSubscriptions: 100_000,
  webSocketPingMs: 30_000,
  metricsToken: '',
  dashboardToken: '',
};

const ENV: Record<keyof ScalarSettings, string> = {
  host: 'SLIPWAY_HOST',
  port: 'SLIPWAY_PORT',
  dataDir: 'SLIPWAY_DATA_DIR',
  slotMs: 'SLIPWAY_SLOT_MS',
  bundleResult: 'SLIPWAY_BUNDLE_RESULT',
  duplicateTtlMs: 'SLIPWAY_DUPLICATE_TTL_MS',
  duplicateMaxEntries: 'SLIPWAY_DUPLICATE_MAX_ENTRIES',
  journalSync: 'SLIPWAY_JOURNAL_SYNC',
  snapshotIntervalMs: 'SLIPWAY_SNAPSHOT_INTERVAL_MS',
  logLevel: 'SLIPWAY_LOG_LEVEL',
  verifySignatures: 'SLIPWAY_VERIFY_SIGNATURES',
  verifyThreads: 'SLIPWAY_VERIFY_THREADS',
  verifySpinUs: 'SLIPWAY_VERIFY_SPIN_US',
  upstream: 'SLIPWAY_UPSTREAM',
  ledgerLeaders: 'SLIPWAY_LEDGER_LEADERS',
  ledgerSandwichers: 'SLIPWAY_LEDGER_SANDWICHERS',
  validatorPolicy: 'SLIPWAY_VALIDATOR_POLICY',
  policyRefreshMs: 'SLIPWAY_POLICY_REFRESH_MS',
  safeWindowSlots: 'SLIPWAY_SAFE_WINDOW_SLOTS',
  leaderPollMs: 'SLIPWAY_LEADER_POLL_MS',
  redisUrl: 'SLIPWAY_REDIS_URL',
  redisKeyPrefix: 'SLIPWAY_REDIS_KEY_PREFIX',
  postgresUrl: 'SLIPWAY_POSTGRES_URL',
  postgresSchema: 'SLIPWAY_POSTGRES_SCHEMA',
  headersTimeoutMs: 'SLIPWAY_HEADERS_TIMEOUT_MS',
  httpRequestTimeoutMs: 'SLIPWAY_HTTP_REQUEST_TIMEOUT_MS',
  idleTimeoutMs: 'SLIPWAY_IDLE_TIMEOUT_MS',
  maxConnectionsPerClient: 'SLIPWAY_MAX_CONNECTIONS_PER_CLIENT',
  maxInFlightRequests: 'SLIPWAY_MAX_IN_FLIGHT_REQUESTS',
  maxInFlightPerKey: 'SLIPWAY_MAX_IN_FLIGHT_PER_KEY',
  maxKeyStaleMs: 'SLIPWAY_MAX_KEY_STALE_MS',
  maxEventLoopDelayMs: 'SLIPWAY_MAX_EVENT_LOOP_DELAY_MS',
  readMethods: 'SLIPWAY_READ_METHODS',
  maxSubscriptionsPerConnection: 'SLIPWAY_MAX_SUBSCRIPTIONS_PER_CONNECTION',
  maxSubscriptionsPerKey: 'SLIPWAY_MAX_SUBSCRIPTIONS_PER_KEY',
  maxSubscriptions: 'SLIPWAY_MAX_SUBSCRIPTIONS',
  webSocketPingMs: 'SLIPWAY_WEBSOCKET_PING_MS',
  metricsToken: 'SLIPWAY_METRICS_TOKEN',
  dashboardToken: 'SLIPWAY_DASHBOARD_TOKEN',
};

export type Settings = Partial<Record<keyof ScalarSettings | 'config', string | number | undefined>>;

/**
 * Merges defaults, the configuration file (`config`, or $SLIPWAY_CONFIG), the environment
 * and explicit settings, in rising priority, and checks them.
 */
export function resolveConfig(settings: Settings, env: NodeJS.ProcessEnv = process.env): SlipwayConfig {
  const configFile = settings.config ?? env.SLIPWAY_CONFIG;
  const file = configFile === undefined ? undefined : readConfigFile(String(configFile));
  const fromFile: FileSettings = file?.settings ?? {};
  const pick = (name: keyof ScalarSettings): string | undefined => {
    const explicit = settings[name] ?? env[ENV[name]] ?? fromFile[name];
    return explicit !== undefined ? String(explicit) : undefined;
  };
  const integer = (name: keyof ScalarSettings, min: number, max: number): number => {
    const raw = pick(name);
    if (raw === undefined) return DEFAULT_CONFIG[name] as number;
    const value = Number(raw);
    if (!Number.isInteger(value) || value < min || value > max) {
      throw new Error(`${name} must be an integer from ${min} to ${max} (got ${JSON.stringify(raw)}; env ${ENV[name]})`);
    }
    return value;
  };
  const oneOf = <T extends string>(name: keyof ScalarSettings, allowed: readonly T[]): T => {
    const raw = pick(name) ?? String(DEFAULT_CONFIG[name]);
    if (!(allowed as readonly string[]).includes(raw)) throw new Error(`${name} must be one of ${allowed.join(', ')} (got ${JSON.stringify(raw)})`);
    return raw as T;
  };
  const ledgerLeaders = leaderList(pick('ledgerLeaders'));
  const network = pick('upstream') === 'sink' ? SINK_NETWORK : (file?.network ?? DEFAULT_NETWORK);
  const postgresUrl = serviceUrl('postgresUrl', pick('postgresUrl'), ['postgres:', 'postgresql:'], 'postgres://postgres@127.0.0.1:5432/slipway');
  const headersTimeoutMs = integer('headersTimeoutMs', 500, 600_000);
  const httpRequestTimeoutMs = integer('httpRequestTimeoutMs', 1_000, 3_600_000);
  if (headersTimeoutMs > httpRequestTimeoutMs) throw new Error(`headersTimeoutMs (${headersTimeoutMs}) must not be longer than httpRequestTimeoutMs (${httpRequestTimeoutMs}): the headers are part of the request`);
  return {
    host: pick('host') ?? DEFAULT_CONFIG.host,
    port: integer('port', 0, 65535),
    dataDir: path.resolve(pick('dataDir') ?? DEFAULT_CONFIG.dataDir),
    slotMs: integer('slotMs', 10, 60_000),
    bundleResult: oneOf('bundleResult', ['id', 'signatures'] as const),
    duplicateTtlMs: integer('duplicateTtlMs', 1_000, 86_400_000),
    duplicateMaxEntries: integer('duplicateMaxEntries', 1_000, 100_000_000),
    journalSync: oneOf('journalSync', ['NORMAL', 'FULL'] as const),
    snapshotIntervalMs: integer('snapshotIntervalMs', 100, 3_600_000),
    logLevel: oneOf('logLevel', ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const),
    verifySignatures: oneOf('verifySignatures', ['true', 'false'] as const) === 'true',
    verifyThreads: integer('verifyThreads', 0, 64),
    verifySpinUs: integer('verifySpinUs', 0, 10_000),
    upstream: oneOf('upstream', ['configured', 'sink'] as const),
    ledgerLeaders,
    ledgerSandwichers: sandwicherList(pick('ledgerSandwichers'), ledgerLeaders),
    validatorPolicy: pick('validatorPolicy') ?? DEFAULT_CONFIG.validatorPolicy,
    policyRefreshMs: integer('policyRefreshMs', 100, 3_600_000),
    // At least 4: a leader's four slots; at most an epoch's worth of lookahead that RPC nodes answer.
    safeWindowSlots: integer('safeWindowSlots', 1, 5_000),
    leaderPollMs: integer('leaderPollMs', 10, 10_000),
    redisUrl: serviceUrl('redisUrl', pick('redisUrl'), ['redis:', 'rediss:'], 'redis://127.0.0.1:6379/0'),
    redisKeyPrefix: pick('redisKeyPrefix') ?? DEFAULT_CONFIG.redisKeyPrefix,
    postgresUrl,
    postgresSchema: checkSchemaName(pick('postgresSchema') ?? DEFAULT_CONFIG.postgresSchema),
    headersTimeoutMs,
    httpRequestTimeoutMs,
    idleTimeoutMs: integer('idleTimeoutMs', 1_000, 3_600_000),
    maxConnectionsPerClient: integer('maxConnectionsPerClient', 0, 1_000_000),
    maxInFlightRequests: integer('maxInFlightRequests', 0, 10_000_000),
    maxInFlightPerKey: integer('maxInFlightPerKey', 0, 10_000_000),
    maxKeyStaleMs: integer('maxKeyStaleMs', 0, 86_400_000),
    maxEventLoopDelayMs: integer('maxEventLoopDelayMs', 0, 60_000),
    readMethods: methodList(pick('readMethods')),
    maxSubscriptionsPerConnection: integer('maxSubscriptionsPerConnection', 1, 1_000_000),
    maxSubscriptionsPerKey: integer('maxSubscriptionsPerKey', 1, 10_000_000),
    maxSubscriptions: integer('maxSubscriptions', 1, 10_000_000),
    webSocketPingMs: integer('webSocketPingMs', 100, 3_600_000),
    metricsToken: pick('metricsToken') ?? DEFAULT_CONFIG.metricsToken,
    dashboardToken: pick('dashboardToken') ?? DEFAULT_CONFIG.dashboardToken,
    network,
  };
}

/** The items of a comma-separated setting (none when unset or blank). */
const commaList = (raw: string | undefined): string[] => (raw === undefined || raw.trim() === '' ? [] : raw.split(',').map((item) => item.trim()));

/** The readMethods setting: method names (letters and digits), or `*`. */
function methodList(raw: string | undefined): readonly string[] {
  const methods = commaList(raw);
  const bad = methods.find((method) => method !== '*' && !/^[A-Za-z][A-Za-z0-9]{0,63}$/.test(method));
  if (bad !== undefined) throw new Error(`readMethods: ${JSON.stringify(bad.slice(0, 64))} is not a method name (env ${ENV.readMethods}, a comma-separated list, or *)`);
  return methods;
}

/** A service's URL, checked now so that a typo stops start-up with its reason. */
function serviceUrl(name: 'redisUrl' | 'postgresUrl', raw: string | undefined, protocols: readonly string[], example: string): string {
  if (raw === undefined || raw.trim() === '') return '';
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new Error(`${name} must be a URL like ${example} (env ${ENV[name]})`);
  }
  if (!protocols.includes(url.protocol)) throw new Error(`${name} must start with ${protocols.map((p) => `${p}//`).join(' or ')} (got ${url.protocol}//…; env ${ENV[name]})`);
  return raw;
}

/** A comma-separated list of validator identities, checked now so that a bad one stops start-up with its name. */
function leaderList(raw: string | undefined): readonly string[] {
  const identities = commaList(raw);
  if (identities.length === 0) return identities;
  try {
    new LeaderSchedule(identities);
  } catch (error) {
    throw new Error(`ledgerLeaders: ${error instanceof Error ? error.message : String(error)} (env ${ENV.ledgerLeaders}, a comma-separated list)`);
  }
  return identities;
}

/** The sandwiching identities: each must be one of the schedule's (the configured leaders, or the default ones). */
function sandwicherList(raw: string | undefined, leaders: readonly string[]): readonly string[] {
  const identities = commaList(raw);
  if (identities.length === 0) return identities;
  const known = leaders.length > 0 ? leaders : defaultValidatorIdentities();
  for (const identity of identities) {
    if (!known.includes(identity)) throw new Error(`ledgerSandwichers: ${identity} is not one of the leader schedule's validators (env ${ENV.ledgerSandwichers})`);
  }
  return identities;
}

/** Where each store keeps its files inside the data directory. */
export const dataPaths = (dataDir: string) => ({
  keys: path.join(dataDir, 'keys.sqlite'),
  journal: path.join(dataDir, 'journal.sqlite'),
  ledger: path.join(dataDir, 'ledger'),
});
