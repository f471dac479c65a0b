/**
 * The configuration file (`--config FILE`, or `SLIPWAY_CONFIG`): upstreams, which of them
 * serve each operation, timeouts and rebroadcast, plus any of the server settings. Parsed
 * once at start with zod; a field that is wrong, unknown, or that would break a promise of
 * the API (bundles routed where they cannot execute atomically, anti-MEV traffic routed to
 * an unprotected upstream) stops start-up with a message naming it. docs/CONFIG.md lists
 * every field.
 */
import fs from 'node:fs';
import { z } from 'zod';
import { SETTINGS, type Setting, type SettingName } from './settings';

const name = z.string().regex(/^[A-Za-z0-9_-]+$/, 'upstream names use letters, digits, _ and -');
const url = z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' });

const upstreamSchema = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('embedded') }),
  /** A benchmarking aid: accepts everything and drops it. */
  z.strictObject({ type: z.literal('sink') }),
  z.strictObject({
    type: z.literal('rpc'),
    urls: z.array(url).min(1),
    /** A private RPC that shows transactions to no one may be marked protected by its operator. */
    protected: z.boolean().default(false),
  }),
  z.strictObject({
    type: z.literal('jito'),
    /** Block-engine base URLs, e.g. https://ny.mainnet.block-engine.jito.wtf/api/v1 (one per region). */
    urls: z.array(url).min(1),
    protected: z.boolean().default(true),
    /** Bundles must tip at least this much to one of the engine's tip accounts. */
    minTipLamports: z.number().int().min(0).default(1000),
    requireTip: z.boolean().default(true),
  }),
  z.strictObject({
    type: z.literal('tpu'),
    /** The operator's RPC nodes: the leader schedule, the leaders' TPU addresses (getClusterNodes), reads and statuses. */
    urls: z.array(url).min(1),
    /** 4-slot leader windows sent to, from the current slot: 1 by measurement (docs/CONFIG.md), 2 as Agave's tpu-client-next. */
    leaderWindows: z.number().int().min(1).max(16).default(1),
    /** Connections kept open (one per leader), the least recently used closed first; tpu-client-next keeps 64. */
    maxConnections: z.number().int().min(1).max(4096).default(64),
    /** The longest transaction sent: 1,232 bytes today, up to 4,096 once v1 transactions are live (SIMD-0296). */
    maxTransactionBytes: z.number().int().min(1232).max(4096).default(1232),
    /** How often the current slot is asked of the RPC nodes. */
    slotPollMs: z.number().int().min(10).max(10_000).default(200),
  }),
]);

/** Network settings' defaults, once: the file's schema and the two built-in networks use them. */
const NETWORK_DEFAULTS = {
  requestTimeoutMs: 2_000,
  maxUpstreamAnswerBytes: 4_194_304,
  subscriptionPollMs: 200,
  rebroadcast: { intervalMs: 2_000, maxAttempts: 90, queueCapacity: 100_000 },
} as const;

/** Each server setting in the file, typed from the settings table (its range is checked with the others', in config.ts). */
function settingSchema(setting: Setting): z.ZodType {
  switch (setting.kind) {
    case 'integer':
      return z.number().int();
    case 'decimal':
      return z.number();
    case 'choice':
      return z.enum(setting.choices as [string, ...string[]]);
    case 'boolean':
      return z.boolean();
    case 'text':
      return z.string();
    case 'list':
      return setting.nonEmptyInFile === true ? z.array(z.string()).min(1) : z.array(z.string());
  }
}

const settingsShape = Object.fromEntries(
  Object.entries(SETTINGS).map(([key, setting]) => [key, settingSchema(setting).optional()]),
) as Record<SettingName, z.ZodOptional<z.ZodType>>;

const fileSchema = z.strictObject({
  ...settingsShape,
  upstreams: z.record(name, upstreamSchema).optional(),
  routes: z
    .strictObject({
      sendTransaction: z.array(name),
      submitBatch: z.array(name),
      sendBundle: z.array(name),
      antiMev: z.array(name),
      reads: name,
    })
    .partial()
    .optional(),
  requestTimeoutMs: z.number().int().min(50).max(60_000).default(NETWORK_DEFAULTS.requestTimeoutMs),
  /** Upstream answers larger than this are refused (reads are not an open proxy: docs/API.md). */
  maxUpstreamAnswerBytes: z.number().int().min(1_024).max(1_073_741_824).default(NETWORK_DEFAULTS.maxUpstreamAnswerBytes),
  /** How often statuses are checked for WebSocket subscriptions (one request for all of them). */
  subscriptionPollMs: z.number().int().min(10).max(10_000).default(NETWORK_DEFAULTS.subscriptionPollMs),
  rebroadcast: z
    .strictObject({
      intervalMs: z.number().int().min(50).max(60_000).default(NETWORK_DEFAULTS.rebroadcast.intervalMs),
      maxAttempts: z.number().int().min(1).max(10_000).default(NETWORK_DEFAULTS.rebroadcast.maxAttempts),
      queueCapacity: z.number().int().min(1).max(10_000_000).default(NETWORK_DEFAULTS.rebroadcast.queueCapacity),
    })
    .default(NETWORK_DEFAULTS.rebroadcast),
});

export type UpstreamConfig = z.infer<typeof upstreamSchema>;

export interface RoutesConfig {
  readonly sendTransaction: readonly string[];
  readonly submitBatch: readonly string[];
  /** Empty: bundles are not served (requests are refused, saying so). */
  readonly sendBundle: readonly string[];
  /** Where `anti_mev=1` submissions go, instead of their operation's route; empty: refused. */
  readonly antiMev: readonly string[];
  readonly reads: string;
}

export interface NetworkConfig {
  readonly upstreams: Readonly<Record<string, UpstreamConfig>>;
  readonly routes: RoutesConfig;
  readonly requestTimeoutMs: number;
  readonly maxUpstreamAnswerBytes: number;
  readonly subscriptionPollMs: number;
  readonly rebroadcast: { readonly intervalMs: number; readonly maxAttempts: number; readonly queueCapacity: number };
}

/** `--upstream sink`: everything accepted and dropped (a benchmarking aid). */
export const SINK_NETWORK: NetworkConfig = {
  upstreams: { sink: { type: 'sink' } },
  routes: { sendTransaction: ['sink'], submitBatch: ['sink'], sendBundle: ['sink'], antiMev: ['sink'], reads: 'sink' },
  ...NETWORK_DEFAULTS,
};

/** With no configuration file: everything on the embedded ledger. */
export const DEFAULT_NETWORK: NetworkConfig = {
  upstreams: { embedded: { type: 'embedded' } },
  routes: { sendTransaction: ['embedded'], submitBatch: ['embedded'], sendBundle: ['embedded'], antiMev: ['embedded'], reads: 'embedded' },
  ...NETWORK_DEFAULTS,
};

/** The server settings the file gives, as text or numbers (lists joined with commas), read like the environment's. */
export type FileSettings = Partial<Record<SettingName, string | number | boolean>>;

export interface ConfigFile {
  readonly settings: FileSettings;
  readonly network: NetworkConfig;
}

export function readConfigFile(file: string): ConfigFile {
  let raw: unknown;
  try {
    raw = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (error) {
    throw new Error(`configuration ${file}: cannot read it as JSON (${error instanceof Error ? error.message : String(error)})`, {
      cause: error,
    });
  }
  return parseConfigFile(raw, file);
}

export function parseConfigFile(raw: unknown, source: string): ConfigFile {
  const parsed = fileSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const field = issue.path.length === 0 ? '(top level)' : issue.path.join('.');
    throw new Error(`configuration ${source}: ${field}: ${issue.message}`);
  }
  const {
    upstreams: upstreamsValue,
    routes: routesValue,
    requestTimeoutMs,
    maxUpstreamAnswerBytes,
    subscriptionPollMs,
    rebroadcast,
  } = parsed.data;
  const settings: FileSettings = {};
  for (const key of Object.keys(SETTINGS) as SettingName[]) {
    const value = (parsed.data as Record<string, unknown>)[key];
    if (value !== undefined) settings[key] = Array.isArray(value) ? value.join(',') : (value as string | number | boolean);
  }
  const upstreams = upstreamsValue ?? DEFAULT_NETWORK.upstreams;
  const fail = (field: string, message: string): never => {
    throw new Error(`configuration ${source}: ${field}: ${message}`);
  };
  const names = Object.keys(upstreams);
  if (names.length === 0) fail('upstreams', 'name at least one upstream');
  const ofType = (...types: UpstreamConfig['type'][]) => names.filter((n) => types.includes(upstreams[n]!.type));
  const isProtected = (n: string) =>
    ['embedded', 'sink', 'tpu'].includes(upstreams[n]!.type) || (upstreams[n] as { protected?: boolean }).protected === true;

  const routes: RoutesConfig = {
    sendTransaction: routesValue?.sendTransaction ?? ofType('embedded', 'rpc', 'tpu'),
    submitBatch: routesValue?.submitBatch ?? ofType('embedded', 'rpc', 'tpu'),
    sendBundle: routesValue?.sendBundle ?? ofType('embedded', 'jito'),
    antiMev: routesValue?.antiMev ?? names.filter(isProtected),
    reads:
      routesValue?.reads ??
      ofType('embedded', 'rpc', 'tpu')[0] ??
      fail('routes.reads', 'no upstream can answer reads: add an rpc upstream'),
  };
  for (const [route, list] of Object.entries(routes) as [keyof RoutesConfig, string | readonly string[]][]) {
    for (const [i, n] of (typeof list === 'string' ? [list] : list).entries()) {
      const field = typeof list === 'string' ? `routes.${route}` : `routes.${route}[${i}]`;
      const upstream = upstreams[n] ?? fail(field, `no upstream is named "${n}" (upstreams: ${names.join(', ')})`);
      if (route === 'sendBundle' && upstream.type === 'tpu') {
        fail(
          field,
          `upstream "${n}" sends to leaders' TPUs one transaction at a time, which cannot land a bundle atomically; route sendBundle to a jito or embedded upstream`,
        );
      }
      if (route === 'sendBundle' && upstream.type === 'rpc') {
        fail(
          field,
          `upstream "${n}" is a Solana RPC node, which cannot execute bundles atomically; route sendBundle to a jito or embedded upstream`,
        );
      }
      if (route === 'antiMev' && !isProtected(n)) {
        fail(
          field,
          `upstream "${n}" is not protected: anti-MEV traffic may only go to protected upstreams (jito, tpu, embedded, or an upstream marked "protected": true)`,
        );
      }
      if (route === 'reads' && upstream.type === 'jito') fail(field, `upstream "${n}" is a block engine, which does not answer reads`);
    }
  }
  for (const route of ['sendTransaction', 'submitBatch'] as const) {
    if (routes[route].length === 0) fail(`routes.${route}`, 'name at least one upstream');
  }
  const used = new Set([...routes.sendTransaction, ...routes.submitBatch, ...routes.sendBundle, ...routes.antiMev, routes.reads]);
  const embedded = [...used].filter((n) => upstreams[n]!.type === 'embedded');
  if (embedded.length > 0 && used.size > embedded.length) {
    fail('routes', 'the embedded ledger cannot be combined with network upstreams: they are different ledgers');
  }
  return { settings, network: { upstreams, routes, requestTimeoutMs, maxUpstreamAnswerBytes, subscriptionPollMs, rebroadcast } };
}
