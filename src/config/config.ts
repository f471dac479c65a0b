/**
 * Slipway's configuration: one typed object, read from the settings table (settings.ts) in
 * rising priority: the default, the configuration file, the environment variable, the
 * command-line flag. Each value is checked against its entry in the table; the rules that
 * relate several settings are checked here, together, so that a start-up that cannot work
 * stops at once with a message naming the settings.
 */
import path from 'node:path';
import { checkValidatorIdentities, defaultValidatorIdentities } from '../core/validator-identities';
import { DEFAULT_NETWORK, SINK_NETWORK, readConfigFile, type FileSettings, type NetworkConfig } from './config-file';
import { DEFAULT_SETTINGS, SETTINGS, type ScalarSettings, type Setting, type SettingName } from './settings';

export type { ScalarSettings } from './settings';

export interface SlipwayConfig extends ScalarSettings {
  /** Upstreams and routes: from the configuration file, else the embedded ledger alone. */
  readonly network: NetworkConfig;
}

export const DEFAULT_CONFIG: ScalarSettings = DEFAULT_SETTINGS;

/** Settings given explicitly (flags, tests), as text or numbers; `config` is the configuration file. */
export type Settings = Partial<Record<SettingName | 'config', string | number | undefined>>;

/**
 * Merges defaults, the configuration file (`config`, or $SLIPWAY_CONFIG), the environment
 * and explicit settings, in rising priority, and checks them.
 */
export function resolveConfig(settings: Settings, env: NodeJS.ProcessEnv = process.env): SlipwayConfig {
  const configFile = settings.config ?? env.SLIPWAY_CONFIG;
  const file = configFile === undefined ? undefined : readConfigFile(String(configFile));
  const fromFile: FileSettings = file?.settings ?? {};
  const values = {} as Record<SettingName, unknown>;
  for (const name of Object.keys(SETTINGS) as SettingName[]) {
    const setting = SETTINGS[name];
    // Where the value came from, for a refusal to name (a flag or a test's setting, the environment, the file).
    const [explicit, where] =
      settings[name] !== undefined
        ? [settings[name], `given as ${(setting as { flags?: { serve?: string } }).flags?.serve ?? name}`]
        : env[setting.env] !== undefined
          ? [env[setting.env], `env ${setting.env}`]
          : [fromFile[name], `in the configuration file ${String(configFile)}`];
    values[name] = parseSetting(name, setting, explicit === undefined ? undefined : String(explicit), where);
  }
  const scalars = values as unknown as ScalarSettings;
  const config: SlipwayConfig = {
    ...scalars,
    dataDir: path.resolve(scalars.dataDir),
    postgresSchema: checkSchemaName(scalars.postgresSchema),
    network: scalars.upstream === 'sink' ? SINK_NETWORK : (file?.network ?? DEFAULT_NETWORK),
  };
  checkTogether(config);
  return config;
}

/** One setting's value from its text (undefined: its default), checked against its entry. */
function parseSetting(name: SettingName, setting: Setting, raw: string | undefined, where: string): unknown {
  if (raw === undefined) return setting.default;
  switch (setting.kind) {
    case 'integer': {
      const value = Number(raw);
      if (!Number.isInteger(value) || value < setting.min || value > setting.max) {
        throw new Error(`${name} must be an integer from ${setting.min} to ${setting.max} (got ${JSON.stringify(raw)}; ${where})`);
      }
      return value;
    }
    case 'decimal': {
      const value = raw.trim() === '' ? NaN : Number(raw);
      if (!Number.isFinite(value) || value < setting.min || value > setting.max) {
        throw new Error(`${name} must be a number from ${setting.min} to ${setting.max} (got ${JSON.stringify(raw)}; ${where})`);
      }
      return value;
    }
    case 'choice':
      if (!setting.choices.includes(raw))
        throw new Error(`${name} must be one of ${setting.choices.join(', ')} (got ${JSON.stringify(raw)})`);
      return raw;
    case 'boolean':
      if (raw !== 'true' && raw !== 'false') throw new Error(`${name} must be one of true, false (got ${JSON.stringify(raw)})`);
      return raw === 'true';
    case 'list':
      return (CHECKS[name] as ((value: string[], where: string) => unknown) | undefined)?.(commaList(raw), where) ?? commaList(raw);
    case 'text':
      return (CHECKS[name] as ((value: string, where: string) => unknown) | undefined)?.(raw, where) ?? raw;
  }
}

/** Checks of single settings beyond their type, by name (each returns the value, or throws saying what is wrong). */
const CHECKS: {
  readonly [K in SettingName]?: (value: ScalarSettings[K] extends readonly string[] ? string[] : string, where: string) => unknown;
} = {
  readMethods: (methods, where) => {
    const bad = methods.find((method) => method !== '*' && !/^[A-Za-z][A-Za-z0-9]{0,63}$/.test(method));
    if (bad !== undefined)
      throw new Error(`readMethods: ${JSON.stringify(bad.slice(0, 64))} is not a method name (${where}, a comma-separated list, or *)`);
    return methods;
  },
  ledgerLeaders: (identities, where) => {
    if (identities.length === 0) return identities;
    try {
      checkValidatorIdentities(identities);
    } catch (error) {
      throw new Error(`ledgerLeaders: ${error instanceof Error ? error.message : String(error)} (${where}, a comma-separated list)`, {
        cause: error,
      });
    }
    return identities;
  },
  tipFloorUrl: (raw, where) =>
    serviceUrl('tipFloorUrl', raw, ['https:', 'http:'], 'https://bundles.jito.wtf/api/v1/bundles/tip_floor', where),
  redisUrl: (raw, where) => serviceUrl('redisUrl', raw, ['redis:', 'rediss:'], 'redis://127.0.0.1:6379/0', where),
  postgresUrl: (raw, where) =>
    serviceUrl('postgresUrl', raw, ['postgres:', 'postgresql:'], 'postgres://postgres@127.0.0.1:5432/slipway', where),
};

/** The rules that relate several settings. */
function checkTogether(config: SlipwayConfig): void {
  if (config.headersTimeoutMs > config.httpRequestTimeoutMs) {
    throw new Error(
      `headersTimeoutMs (${config.headersTimeoutMs}) must not be longer than httpRequestTimeoutMs (${config.httpRequestTimeoutMs}): the headers are part of the request`,
    );
  }
  if (config.tpuStakedMaxStreams < config.tpuUnstakedStreams) {
    throw new Error(
      `tpuStakedMaxStreams (${config.tpuStakedMaxStreams}) must not be below tpuUnstakedStreams (${config.tpuUnstakedStreams}): a staked sender gets at least what an unstaked one does`,
    );
  }
  const leaders = config.ledgerLeaders.length > 0 ? config.ledgerLeaders : defaultValidatorIdentities();
  for (const identity of config.ledgerSandwichers) {
    if (!leaders.includes(identity))
      throw new Error(
        `ledgerSandwichers: ${identity} is not one of the leader schedule's validators (env ${SETTINGS.ledgerSandwichers.env})`,
      );
  }
}

/**
 * The rules a gateway's configuration must also meet to serve (the CLI's other commands read
 * the same settings for their stores, where these do not apply).
 */
export function checkServable(config: SlipwayConfig): void {
  if (config.postgresUrl !== '' && Object.values(config.network.upstreams).some((u) => u.type === 'embedded')) {
    // Each gateway's embedded ledger is its own chain, recovered from its own journal: it cannot share one.
    throw new Error(
      "postgresUrl is for a cluster of gateways in front of a shared network; the embedded ledger is one gateway's own chain and keeps its journal in SQLite: configure rpc/jito upstreams (bin/slipway ledger serves a local cluster), or leave postgresUrl unset",
    );
  }
}

/** A PostgreSQL identifier Slipway may put in its statements unquoted. */
const SCHEMA_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

export function checkSchemaName(schema: string): string {
  if (!SCHEMA_NAME.test(schema)) {
    throw new Error(
      `postgresSchema must be letters, digits and _ (starting with a letter or _), at most 63: got ${JSON.stringify(schema)}`,
    );
  }
  return schema;
}

/** The items of a comma-separated setting (none when blank). */
const commaList = (raw: string): string[] => (raw.trim() === '' ? [] : raw.split(',').map((item) => item.trim()));

/** A service's URL, checked now so that a typo stops start-up with its reason. */
function serviceUrl(
  name: 'redisUrl' | 'postgresUrl' | 'tipFloorUrl',
  raw: string,
  protocols: readonly string[],
  example: string,
  where: string,
): string {
  if (raw.trim() === '') return '';
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new Error(`${name} must be a URL like ${example} (${where})`);
  }
  if (!protocols.includes(url.protocol))
    throw new Error(`${name} must start with ${protocols.map((p) => `${p}//`).join(' or ')} (got ${url.protocol}//…; ${where})`);
  return raw;
}

/** Where each store keeps its files inside the data directory. */
export const dataPaths = (dataDir: string) => ({
  keys: path.join(dataDir, 'keys.sqlite'),
  journal: path.join(dataDir, 'journal.sqlite'),
  idempotency: path.join(dataDir, 'idempotency.sqlite'),
  refusals: path.join(dataDir, 'refusals.sqlite'),
  events: path.join(dataDir, 'events.sqlite'),
  ledger: path.join(dataDir, 'ledger'),
});
