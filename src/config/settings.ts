/**
 * Every server setting, declared once: its type, default, allowed values, environment
 * variable, command-line flags and documentation. The rest is derived from this table: the
 * `SlipwayConfig` type and the reading of the environment and the flags (config.ts), the
 * configuration file's schema (config-file.ts), and the settings table of docs/CONFIG.md
 * (config-docs.ts, kept current by a test). Rules that relate several settings are in
 * config.ts, where they are checked together.
 */
import os from 'node:os';

/** The commands that take settings as flags. */
export type Command = 'serve' | 'ledger';

interface Common {
  /** The environment variable. */
  readonly env: string;
  /** The flag on each command that takes it. */
  readonly flags?: Partial<Record<Command, string>>;
  /** The default as the documentation shows it, where the value alone would mislead (computed, or empty). */
  readonly shownDefault?: string;
  /** What it does, for docs/CONFIG.md. */
  readonly doc: string;
}

export type Setting =
  | (Common & { readonly kind: 'integer'; readonly default: number; readonly min: number; readonly max: number })
  | (Common & { readonly kind: 'decimal'; readonly default: number; readonly min: number; readonly max: number })
  | (Common & { readonly kind: 'choice'; readonly default: string; readonly choices: readonly string[] })
  | (Common & { readonly kind: 'boolean'; readonly default: boolean })
  | (Common & { readonly kind: 'text'; readonly default: string })
  | (Common & { readonly kind: 'list'; readonly default: readonly string[]; readonly nonEmptyInFile?: boolean });

const integer = (spec: Omit<Extract<Setting, { kind: 'integer' }>, 'kind'>) => ({ kind: 'integer' as const, ...spec });
const decimal = (spec: Omit<Extract<Setting, { kind: 'decimal' }>, 'kind'>) => ({ kind: 'decimal' as const, ...spec });
const choice = <const C extends readonly string[]>(spec: Common & { readonly default: C[number]; readonly choices: C }) => ({
  kind: 'choice' as const,
  ...spec,
});
const boolean = (spec: Common & { readonly default: boolean }) => ({ kind: 'boolean' as const, ...spec });
const text = (spec: Common & { readonly default: string }) => ({ kind: 'text' as const, ...spec });
const list = (spec: Common & { readonly default: readonly string[]; readonly nonEmptyInFile?: boolean }) => ({
  kind: 'list' as const,
  ...spec,
});

/** In the order docs/CONFIG.md shows them. */
export const SETTINGS = {
  host: text({
    default: '127.0.0.1',
    env: 'SLIPWAY_HOST',
    flags: { serve: '--host', ledger: '--host' },
    doc: 'Address to listen on.',
  }),
  port: integer({
    default: 8080,
    min: 0,
    max: 65535,
    env: 'SLIPWAY_PORT',
    flags: { serve: '--port', ledger: '--port' },
    doc:
      'Port; `0` picks a free one whose port + 1 is free too (the real port is printed). WebSocket subscriptions are also ' +
      'served on port + 1 when it is free.',
  }),
  dataDir: text({
    default: './data',
    env: 'SLIPWAY_DATA_DIR',
    flags: { serve: '--data-dir', ledger: '--data-dir' },
    doc:
      'Keys (`keys.sqlite`), journal (`journal.sqlite`) and the embedded ledger (`ledger/`). ' +
      'The `keys` and `submissions` commands take `--data-dir` too.',
  }),
  slotMs: integer({
    default: 400,
    min: 10,
    max: 60_000,
    env: 'SLIPWAY_SLOT_MS',
    flags: { serve: '--slot-ms', ledger: '--slot-ms' },
    doc: 'Milliseconds per slot of the embedded ledger; each slot has a new blockhash.',
  }),
  blockUnits: integer({
    default: 0,
    min: 0,
    max: 100_000_000,
    env: 'SLIPWAY_BLOCK_UNITS',
    flags: { serve: '--block-units', ledger: '--block-units' },
    shownDefault: '`0` (no block limit)',
    doc:
      "The local cluster's block limit in Agave's compute units (docs/LEDGER.md, Contention). `0`: no limit, every " +
      'transaction executed as it arrives. `N`: each leader schedules what it receives by priority into blocks of N ' +
      "units, each writable account at most 40 % of them (Agave's 24,000,000 of 60,000,000).",
  }),
  market: decimal({
    default: 0,
    min: 0,
    max: 16,
    env: 'SLIPWAY_MARKET',
    flags: { serve: '--market', ledger: '--market' },
    shownDefault: '`0` (no other senders)',
    doc:
      "Background traffic on the local cluster from built-in senders, at this many times the block's capacity " +
      '(docs/LEDGER.md, The market): `2` sends twice what the blocks hold. Above 0 it turns contention on, with a block ' +
      'limit this machine can fill and execute at that load unless `blockUnits` sets one.',
  }),
  marketSeed: integer({
    default: 1,
    min: 1,
    max: 4_294_967_295,
    env: 'SLIPWAY_MARKET_SEED',
    flags: { serve: '--market-seed', ledger: '--market-seed' },
    doc:
      "The seed of the market's weather (docs/LEDGER.md, The market): the same seed gives the same drift and bursts slot " +
      'by slot at every load, and the same draws at the same load. Another seed, another weather.',
  }),
  engineStakePercent: integer({
    default: 90,
    min: 0,
    max: 100,
    env: 'SLIPWAY_ENGINE_STAKE_PERCENT',
    flags: { serve: '--engine-stake-percent', ledger: '--engine-stake-percent' },
    doc:
      "Under contention (`blockUnits`), the share of the local cluster's validators that run the block engine: bundles " +
      'land only in their slots (docs/LEDGER.md). The first of the schedule’s identities, as many as the share rounds to.',
  }),
  bundleResult: choice({
    default: 'id',
    choices: ['id', 'signatures'],
    env: 'SLIPWAY_BUNDLE_RESULT',
    flags: { serve: '--bundle-result' },
    doc: "`sendBundle`'s result: `id` (the bundle ID) or `signatures` (the array of signatures).",
  }),
  simulateBundles: boolean({
    default: true,
    env: 'SLIPWAY_SIMULATE_BUNDLES',
    flags: { serve: '--simulate-bundles' },
    doc:
      'A bundle is first simulated (`simulateBundle` on the first bundle or reads upstream that simulates bundles: the ' +
      'embedded ledger, a Jito-Solana RPC node); one that would fail is refused at once (`-32090`, naming the failing ' +
      'transaction, its error and logs; outcome `simulation_failed`) and nothing is sent. Without such an upstream, or when ' +
      'it cannot answer, bundles go unsimulated. `false`: never simulated first (a failing bundle is then sent and rejected).',
  }),
  tipFloorUrl: text({
    default: '',
    env: 'SLIPWAY_TIP_FLOOR_URL',
    flags: { serve: '--tip-floor-url' },
    shownDefault: "(none: Slipway's own)",
    doc:
      "A block engine's tip floor in Jito's shape (`http://` or `https://`, e.g. " +
      '`https://bundles.jito.wtf/api/v1/bundles/tip_floor`), which `GET /api/v1/bundles/tip_floor` and its stream then ' +
      "pass on: read at most once a second, within 2 s and 16 KB, its shape checked; when it cannot be read, Slipway's " +
      'own (from the bundles it saw land) is answered instead (docs/FEES.md, Tip floor).',
  }),
  duplicateTtlMs: integer({
    default: 120_000,
    min: 1_000,
    max: 86_400_000,
    env: 'SLIPWAY_DUPLICATE_TTL_MS',
    doc: 'How long accepted transactions (and refusals) are remembered; keep it above a ' + "blockhash's life (150 slots).",
  }),
  idempotencyTtlMs: integer({
    default: 86_400_000,
    min: 60_000,
    max: 7 * 86_400_000,
    env: 'SLIPWAY_IDEMPOTENCY_TTL_MS',
    doc:
      'How long an `Idempotency-Key` is remembered from its first use (per API key): the same key with the same submission ' +
      'within it is answered with the first answer, nothing sent again; with a different submission, refused (`-32088`). ' +
      'In the data dir, or in PostgreSQL for a cluster.',
  }),
  duplicateMaxEntries: integer({
    default: 1_000_000,
    min: 1_000,
    max: 100_000_000,
    env: 'SLIPWAY_DUPLICATE_MAX_ENTRIES',
    doc:
      'At most this many accepted transactions remembered (a 16-byte digest each, 32 bytes with' +
      ' its hash slots, allocated at start); past it the oldest are forgotten first.',
  }),
  verifySignatures: boolean({
    default: true,
    env: 'SLIPWAY_VERIFY_SIGNATURES',
    flags: { serve: '--verify-signatures' },
    doc:
      '`false` skips ed25519 verification (every other check still runs). Only behind a trusted' +
      ' verifier that has checked every signature already.',
  }),
  verifyThreads: integer({
    default: Math.max(1, os.cpus().length - 1),
    min: 0,
    max: 64,
    env: 'SLIPWAY_VERIFY_THREADS',
    flags: { serve: '--verify-threads' },
    shownDefault: 'cores − 1 (at least 1)',
    doc:
      'Worker threads that verify signatures beside the request thread, used while the request ' +
      'thread is busy (idle, it verifies itself: lower latency); `0` always verifies in the ' +
      'request thread.',
  }),
  leanHttp: boolean({
    default: true,
    env: 'SLIPWAY_LEAN_HTTP',
    flags: { serve: '--lean-http' },
    doc:
      '`true` reads and answers submissions (`POST /` and `POST /submit-batch` in their plain form: one Content-Length, ' +
      "an API key, nothing unusual) straight off the connection, without node:http's request and response objects, " +
      'which cost a bare node:http server about 40 % of its CPU a request. Anything else on the connection, and every ' +
      'refusal on arrival, goes to node:http as before, and the answers are the same.',
  }),
  verifySpinUs: integer({
    default: os.cpus().length > 1 ? 50 : 0,
    min: 0,
    max: 10_000,
    env: 'SLIPWAY_VERIFY_SPIN_US',
    flags: { serve: '--verify-spin-us' },
    shownDefault: '`50` (`0` on one core)',
    doc:
      'How long a verification thread keeps looking for work, in µs, before it sleeps. Under ' +
      'load the next transaction arrives within it, so handing it over needs no wake-up (on a ' +
      'virtual machine, an interrupt between cores); idle, each burst of work costs this much ' +
      'CPU after it. `0` sleeps at once.',
  }),
  heapGrowthPercent: integer({
    default: 300,
    min: 0,
    max: 1000,
    env: 'SLIPWAY_HEAP_GROWTH_PERCENT',
    flags: { serve: '--heap-growth-percent' },
    doc:
      'How far the JavaScript heap may grow past what it held live after a full garbage collection before the next one, ' +
      "in percent (`300`: to four times as much). V8's own choice for a gateway's small heap is a few tens of percent: " +
      'under load a full collection every second or two, each stopping or crowding out the request thread for 20 to 30 ms ' +
      'on a two-core machine, which the requests then in flight wait out. With `300`, measured at 5,000 requests/s: one ' +
      'every 15 to 18 s, for a heap of up to about 80 MB instead of 35 to 60 on Node 22; on Node 24, whose young generation ' +
      'grows to 128 MB, up to about 300 MB (docs/RELIABILITY.md). `0` leaves it to V8.',
  }),
  upstream: choice({
    default: 'configured',
    choices: ['configured', 'sink'],
    env: 'SLIPWAY_UPSTREAM',
    flags: { serve: '--upstream' },
    doc:
      '`sink` replaces every route with an upstream that accepts and drops everything: a ' +
      'benchmarking aid (`npm run bench` uses it), never for users.',
  }),
  ledgerLeaders: list({
    default: [],
    nonEmptyInFile: true,
    env: 'SLIPWAY_LEDGER_LEADERS',
    flags: { ledger: '--leaders' },
    shownDefault: '8 fixed identities',
    doc:
      "Validator identities (base58 public keys) of the embedded ledger's leader schedule, each" +
      ' leading 4 consecutive slots (docs/LEDGER.md). In the configuration file: an array of ' +
      'strings. A bad or repeated identity stops start-up, naming it.',
  }),
  ledgerSandwichers: list({
    default: [],
    env: 'SLIPWAY_LEDGER_SANDWICHERS',
    flags: { ledger: '--sandwichers' },
    doc:
      'Identities of the schedule that sandwich: the embedded ledger records which landed ' +
      'transactions they saw (`getTransactionExposure`, docs/LEDGER.md). A test aid; an ' +
      'identity not in the schedule stops start-up.',
  }),
  tpuBasePort: integer({
    default: 0,
    min: 0,
    max: 65_535,
    env: 'SLIPWAY_TPU_BASE_PORT',
    flags: { ledger: '--tpu-base-port' },
    shownDefault: '`0` (ephemeral ports)',
    doc:
      '`bin/slipway ledger` runs a QUIC TPU for each validator of the schedule on 127.0.0.1 (docs/LEDGER.md). `0`: ' +
      'each on an ephemeral port (`getClusterNodes` lists them); `N`: validator i (from 0, in the schedule’s order) on ' +
      'port N + i.',
  }),
  ledgerStakes: text({
    default: '',
    env: 'SLIPWAY_LEDGER_STAKES',
    flags: { ledger: '--stakes' },
    shownDefault: 'none (every sender unstaked)',
    doc:
      "A JSON file of stake per identity for the local cluster's TPU quality of service: an object of base58 identity →" +
      ' lamports (a number or a string of digits). Shares are taken of the total in the file. A bad file stops start-up.',
  }),
  tpuUnstakedStreams: integer({
    default: 128,
    min: 1,
    max: 100_000,
    env: 'SLIPWAY_TPU_UNSTAKED_STREAMS',
    flags: { ledger: '--tpu-unstaked-streams' },
    doc:
      'Streams (transactions in flight) one connection of an unstaked sender may have open at once on a local TPU; ' +
      "staked senders get at least as many (Agave's QUIC_MAX_UNSTAKED_CONCURRENT_STREAMS).",
  }),
  tpuStakedMaxStreams: integer({
    default: 2_048,
    min: 1,
    max: 100_000,
    env: 'SLIPWAY_TPU_STAKED_MAX_STREAMS',
    flags: { ledger: '--tpu-staked-max-streams' },
    doc:
      'The most streams one connection of a staked sender may have open at once: `unstaked + share × (100,000 − ' +
      'unstaked)`, capped here (docs/LEDGER.md). Not below `tpuUnstakedStreams`.',
  }),
  tpuUnstakedConnections: integer({
    default: 8,
    min: 1,
    max: 10_000,
    env: 'SLIPWAY_TPU_UNSTAKED_CONNECTIONS',
    flags: { ledger: '--tpu-unstaked-connections' },
    doc: 'Connections an unstaked identity may hold at once on one local TPU; the excess is closed with code 4, as Agave does.',
  }),
  tpuStakedConnections: integer({
    default: 16,
    min: 1,
    max: 10_000,
    env: 'SLIPWAY_TPU_STAKED_CONNECTIONS',
    flags: { ledger: '--tpu-staked-connections' },
    doc: '…a staked identity (a share of at least 1/50,000 of the stake).',
  }),
  tpuConnectionsPerIpPerMinute: integer({
    default: 0,
    min: 0,
    max: 1_000_000,
    env: 'SLIPWAY_TPU_CONNECTIONS_PER_IP_PER_MINUTE',
    flags: { ledger: '--tpu-connections-per-ip-per-minute' },
    shownDefault: '`0` (no limit)',
    doc:
      'New connections one IP address may open per minute on one local TPU; past it a connection is refused in its ' +
      'handshake. Off by default: every local sender shares 127.0.0.1.',
  }),
  validatorPolicy: text({
    default: '',
    env: 'SLIPWAY_VALIDATOR_POLICY',
    flags: { serve: '--validator-policy' },
    doc:
      'Anti-MEV validator policy (docs/ANTI_MEV.md): a JSON file path, an `http://`/`https://` ' +
      'URL serving the same JSON, or `shield:ADDRESS` (a Yellowstone Shield policy account, ' +
      'read with `getAccountInfo` through the reads upstream). None: `anti_mev=1` means the ' +
      'protected routes only, with no leader gating (the evidence says so).',
  }),
  policyRefreshMs: integer({
    default: 5_000,
    min: 100,
    max: 3_600_000,
    env: 'SLIPWAY_POLICY_REFRESH_MS',
    doc:
      'How often the policy is read again (a change takes effect without a restart). A policy ' +
      'not read successfully for 3 × this (at least 30 s) is stale: protected transactions are ' +
      'held.',
  }),
  safeWindowSlots: integer({
    default: 8,
    min: 1,
    max: 5_000,
    env: 'SLIPWAY_SAFE_WINDOW_SLOTS',
    flags: { serve: '--safe-window-slots' },
    doc:
      'The safe window: the slots from now that must all be led by validators the policy trusts' +
      ' before a protected transaction is sent (8: the current and the next leader).',
  }),
  identityKeypair: text({
    default: '',
    env: 'SLIPWAY_IDENTITY_KEYPAIR',
    flags: { serve: '--identity-keypair' },
    shownDefault: '(none: a fresh unstaked identity)',
    doc:
      'A Solana CLI keypair file (a JSON array of 64 numbers) whose identity the `tpu` upstreams present to leaders: a ' +
      'staked validator identity, or one a stake-weighted QoS agreement names, gets its stake-weighted credit. Never ' +
      'logged; start-up refuses a file that others may read (`chmod 600`). Empty: a fresh identity each start, unstaked, ' +
      'said at start-up.',
  }),
  leaderPollMs: integer({
    default: 200,
    min: 10,
    max: 10_000,
    env: 'SLIPWAY_LEADER_POLL_MS',
    doc:
      "How often the current slot is asked of the reads upstream's RPC nodes for protection " +
      '(about half a mainnet slot); the window is lengthened by the slots that may have passed ' +
      'since.',
  }),
  redisUrl: text({
    default: '',
    env: 'SLIPWAY_REDIS_URL',
    doc:
      'Redis (`redis://[:password@]host:port/db`) shared by a cluster of gateways for per-key ' +
      'rate limits and duplicate detection. Unreachable at start: start-up stops, saying so ' +
      '(password hidden). None: limits are counted and duplicates detected in the process.',
  }),
  redisKeyPrefix: text({
    default: 'slipway:',
    env: 'SLIPWAY_REDIS_KEY_PREFIX',
    doc: 'Prefix of every Redis key Slipway writes, so that several clusters (or test runs) can ' + 'share one Redis.',
  }),
  postgresUrl: text({
    default: '',
    env: 'SLIPWAY_POSTGRES_URL',
    doc:
      'PostgreSQL (`postgres://user[:password]@host:port/db`) for the API keys and the ' +
      'submission journal shared by a cluster of gateways; `bin/slipway keys` and `submissions`' +
      ' use it too (same variable, or `--config`). A key change made anywhere reaches every ' +
      'instance within a second (NOTIFY/LISTEN). Not with the embedded ledger (its chain is one' +
      " gateway's own; start-up refuses the pair, saying so). None: SQLite in the data dir.",
  }),
  postgresSchema: text({
    default: 'slipway',
    env: 'SLIPWAY_POSTGRES_SCHEMA',
    doc:
      "The schema Slipway's tables live in, created and migrated at start (versioned, under an " +
      'advisory lock: instances starting together migrate once).',
  }),
  headersTimeoutMs: integer({
    default: 10_000,
    min: 500,
    max: 600_000,
    env: 'SLIPWAY_HEADERS_TIMEOUT_MS',
    doc:
      "A client must send a request's headers within this, or the connection is cut with HTTP " +
      '408 (a slowloris client is cut off; others are served meanwhile). Checked every 500 ms.',
  }),
  httpRequestTimeoutMs: integer({
    default: 30_000,
    min: 1_000,
    max: 3_600_000,
    env: 'SLIPWAY_HTTP_REQUEST_TIMEOUT_MS',
    doc: '…and the whole request (headers and body) within this; not shorter than ' + '`headersTimeoutMs`.',
  }),
  idleTimeoutMs: integer({
    default: 72_000,
    min: 1_000,
    max: 3_600_000,
    env: 'SLIPWAY_IDLE_TIMEOUT_MS',
    doc:
      'A keep-alive connection with no request in progress is closed after this. Keep it above ' +
      "a load balancer's idle time-out (often 60 s), so that the balancer closes first and " +
      'never sends on a connection being closed.',
  }),
  metricsToken: text({
    default: '',
    env: 'SLIPWAY_METRICS_TOKEN',
    shownDefault: 'empty',
    doc:
      'Empty: `GET /metrics` is served to clients on this machine only. Set: to whoever sends ' +
      '`Authorization: Bearer <token>` (and only to them). Set it behind a reverse proxy on the' +
      ' same machine.',
  }),
  dashboardToken: text({
    default: '',
    env: 'SLIPWAY_DASHBOARD_TOKEN',
    shownDefault: 'empty',
    doc:
      'Empty: `GET /dashboard` is served to browsers on this machine only (reach it through an ' +
      'SSH tunnel). Set: to whoever opens `/dashboard?token=<token>` (or sends it as a bearer ' +
      'token).',
  }),
  maxConnectionsPerClient: integer({
    default: 1_000,
    min: 0,
    max: 1_000_000,
    env: 'SLIPWAY_MAX_CONNECTIONS_PER_CLIENT',
    doc:
      "Open connections per client IP address; past it a connection's requests are answered " +
      'HTTP 429 `-32096` and it is closed (an extra connection that sends nothing is closed ' +
      'after 2 s). `0`: no limit. **Behind a load balancer every connection comes from its ' +
      'address: set `0` there** (and limit at the balancer).',
  }),
  maxInFlightRequests: integer({
    default: 1_024,
    min: 0,
    max: 10_000_000,
    env: 'SLIPWAY_MAX_IN_FLIGHT_REQUESTS',
    doc:
      "Requests in progress at once (the gateway's queue depth); past it new requests are shed " +
      'at once with HTTP 503 `-32095` and `Retry-After: 1`, before their body is read. Served ' +
      "requests wait at most about this many ÷ the gateway's throughput: lower it for a tighter" +
      ' latency under overload, raise it for a slow upstream with much traffic (requests ' +
      'waiting on the upstream count too). `0`: no limit.',
  }),
  maxInFlightPerKey: integer({
    default: 256,
    min: 0,
    max: 10_000_000,
    env: 'SLIPWAY_MAX_IN_FLIGHT_PER_KEY',
    doc:
      'Requests in progress at once for one API key, counted from the moment its key is read ' +
      "(before the body): past it the key's new requests get HTTP 429 `-32097` with " +
      '`Retry-After: 1`, so that one key sending slowly cannot take every place of ' +
      '`maxInFlightRequests`. `0`: no limit.',
  }),
  maxKeyStaleMs: integer({
    default: 60_000,
    min: 0,
    max: 86_400_000,
    env: 'SLIPWAY_MAX_KEY_STALE_MS',
    doc:
      'Keys are read again whenever the key store reports a change and every 2 s regardless; ' +
      'when the store cannot be read for longer than this, every request that needs a key is ' +
      'refused with HTTP 503 `-32094` (fail closed: a revoked key must not keep working because' +
      ' the store is down), WebSocket subscriptions are closed, and `/health` answers 503 ' +
      'saying why, until a read succeeds. `0`: keep using the last keys read.',
  }),
  maxEventLoopDelayMs: integer({
    default: 250,
    min: 0,
    max: 60_000,
    env: 'SLIPWAY_MAX_EVENT_LOOP_DELAY_MS',
    doc:
      'While the event loop runs later than this, sample after sample for about 0.1 s (one long' +
      ' task does not count), new requests are shed the same way. `0`: not watched.',
  }),
  readMethods: list({
    default: [],
    env: 'SLIPWAY_READ_METHODS',
    shownDefault: 'the default list (docs/API.md, Reads)',
    doc:
      'The read methods forwarded to the reads upstream, replacing the default list ' +
      '(comma-separated; in the file an array); `*`: every method. Others are refused with ' +
      '`-32601` naming this setting. `requestAirdrop` is added where the reads upstream is the ' +
      'embedded ledger or a local cluster.',
  }),
  maxSubscriptionsPerConnection: integer({
    default: 1_000,
    min: 1,
    max: 1_000_000,
    env: 'SLIPWAY_MAX_SUBSCRIPTIONS_PER_CONNECTION',
    doc:
      'WebSocket subscriptions (signature and slot) one connection may hold; past it ' +
      '`signatureSubscribe`/`slotSubscribe` are refused with `-32602` saying so.',
  }),
  maxSubscriptionsPerKey: integer({
    default: 10_000,
    min: 1,
    max: 10_000_000,
    env: 'SLIPWAY_MAX_SUBSCRIPTIONS_PER_KEY',
    doc: '…one API key over all its connections (on this gateway).',
  }),
  maxSubscriptions: integer({
    default: 100_000,
    min: 1,
    max: 10_000_000,
    env: 'SLIPWAY_MAX_SUBSCRIPTIONS',
    doc: '…the whole gateway.',
  }),
  webSocketPingMs: integer({
    default: 30_000,
    min: 100,
    max: 3_600_000,
    env: 'SLIPWAY_WEBSOCKET_PING_MS',
    doc:
      'WebSocket pings go out this often; a socket that has not answered the previous ping is ' +
      'closed. A socket holding no subscription is closed after `idleTimeoutMs` without a ' +
      'message.',
  }),
  webhookAllowPrivate: boolean({
    default: false,
    env: 'SLIPWAY_WEBHOOK_ALLOW_PRIVATE',
    flags: { serve: '--webhook-allow-private' },
    doc:
      '`true` lets webhooks (`keys set ID --webhook URL`) reach loopback, private, link-local and other non-public ' +
      'addresses. Off, such a URL is refused when it is set, and a name that resolves to such an address is not ' +
      'called (the delivery fails saying why): no request forgery into the gateway’s own network (docs/WEBHOOKS.md).',
  }),
  webhookStuckSlots: integer({
    default: 30,
    min: 1,
    max: 10_000,
    env: 'SLIPWAY_WEBHOOK_STUCK_SLOTS',
    doc:
      'A forwarded transaction not landed this many slots after it was received, while its blockhash is still valid, ' +
      'gets one `transaction.stuck` event (webhooks and `submissionSubscribe`).',
  }),
  webhookQueueLimit: integer({
    default: 100_000,
    min: 1,
    max: 100_000_000,
    env: 'SLIPWAY_WEBHOOK_QUEUE_LIMIT',
    doc:
      'Undelivered events one key may have waiting; past it new events of that key are dropped and counted ' +
      '(`bin/slipway keys show`, `slipway_webhook_events_dropped_total`). The journal still has every state.',
  }),
  webhookPauseAfterSeconds: integer({
    default: 86_400,
    min: 1,
    max: 30 * 86_400,
    env: 'SLIPWAY_WEBHOOK_PAUSE_AFTER_SECONDS',
    doc:
      'A receiver whose every delivery has failed for this long is paused: its events wait, undelivered, until the ' +
      'key’s webhook is set again (`keys set ID --webhook URL`). Retries back off from 1 s to 5 minutes.',
  }),
  webhookTimeoutMs: integer({
    default: 10_000,
    min: 100,
    max: 120_000,
    env: 'SLIPWAY_WEBHOOK_TIMEOUT_MS',
    doc: 'A delivery not answered with a 2xx status within this time has failed, and is tried again later.',
  }),
  journalSync: choice({
    default: 'NORMAL',
    choices: ['NORMAL', 'FULL'],
    env: 'SLIPWAY_JOURNAL_SYNC',
    doc:
      'Durability of the journal. `NORMAL`: each group of writes is in the kernel (the journal ' +
      "log's `write`, SQLite's WAL) before the answer, which survives the process being killed," +
      ' `kill -9` included; `FULL` adds `fdatasync` of the log per group and SQLite ' +
      '`synchronous=FULL`, which also survives power loss, at a cost per write.',
  }),
  snapshotIntervalMs: integer({
    default: 10_000,
    min: 100,
    max: 3_600_000,
    env: 'SLIPWAY_SNAPSHOT_INTERVAL_MS',
    doc: "How often the embedded ledger's state is saved; after a crash, the journal entries since" + ' the last save are replayed.',
  }),
  logLevel: choice({
    default: 'info',
    choices: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'],
    env: 'SLIPWAY_LOG_LEVEL',
    flags: { serve: '--log-level', ledger: '--log-level' },
    doc:
      '`fatal`, `error`, `warn`, `info`, `debug`, `trace` or `silent`. Logs are JSON lines on ' +
      'stderr; stdout carries only what the CLI prints for people.',
  }),
} satisfies Record<string, Setting>;

export type SettingName = keyof typeof SETTINGS;

type ValueOf<S> = S extends { kind: 'integer' | 'decimal' }
  ? number
  : S extends { kind: 'choice'; choices: readonly (infer C)[] }
    ? C
    : S extends { kind: 'boolean' }
      ? boolean
      : S extends { kind: 'list' }
        ? readonly string[]
        : string;

/** Every setting's value, typed from the table. */
export type ScalarSettings = { readonly [K in SettingName]: ValueOf<(typeof SETTINGS)[K]> };

/** The defaults, from the table. */
export const DEFAULT_SETTINGS = Object.fromEntries(
  Object.entries(SETTINGS).map(([name, setting]) => [name, setting.default]),
) as unknown as ScalarSettings;
