/**
 * `slipway keys …`: manages API keys in the data directory, or in PostgreSQL when the
 * configuration names it (`--config`, or $SLIPWAY_POSTGRES_URL). Safe while servers run:
 * each sees every change within a second.
 */
import { resolveConfig } from '../config/config';
import { parseWebhookUrl } from '../events/webhook-url';
import { generateWebhookSecret, type ApiKeyRecord, type KeyChanges } from '../stores/key-store';
import { openStore } from '../stores/database/open-store';
import { EVENT_OUTBOX, KEY_STORE } from '../stores/store-adapters';
import { describeReceiver } from './keys-show';
import { parseOptions } from './parse-options';

export async function runKeys(args: string[]): Promise<number> {
  const [action, ...rest] = args;
  // `--bundle` is a flag for `create` and takes on|off for `set`.
  const { values, positionals } = parseOptions(`keys ${action ?? ''}`.trim(), rest, {
    name: { type: 'string' },
    bundle: { type: action === 'set' ? 'string' : 'boolean' },
    tps: { type: 'string' },
    'bundles-per-second': { type: 'string' },
    'reads-per-second': { type: 'string' },
    webhook: { type: 'string' },
    json: { type: 'boolean', default: false },
    'data-dir': { type: 'string' },
    config: { type: 'string' },
  } as const);
  const config = resolveConfig({ dataDir: values['data-dir'], config: values.config });
  const store = await openStore(config, KEY_STORE);
  try {
    switch (action) {
      case 'create': {
        if (values.name === undefined || values.name.trim() === '') throw new Error('keys create: --name NAME is required');
        const bundle = values.bundle === true;
        const webhook = parseWebhook(values.webhook, config.webhookAllowPrivate, 'keys create');
        const { record, key } = await store.create({ name: values.name, bundle, ...parseLimits(values, 'keys create'), ...webhook });
        const secret = webhook.webhook?.secret;
        if (values.json) {
          process.stdout.write(JSON.stringify({ ...record, key, ...(secret === undefined ? {} : { webhookSecret: secret }) }) + '\n');
        } else {
          process.stdout.write(`${key}\n`);
          process.stderr.write(
            `created ${record.id} (${record.name}, sendBundle ${record.bundle ? 'on' : 'off'}, ${describeLimits(record)}); the key is shown only this once\n`,
          );
          if (secret !== undefined) process.stderr.write(webhookSecretLine(secret));
        }
        return 0;
      }
      case 'list': {
        const keys = await store.list();
        process.stdout.write(values.json ? JSON.stringify(keys) + '\n' : formatKeys(keys));
        return 0;
      }
      case 'revoke': {
        const id = requireId(positionals, 'keys revoke ID');
        if (!(await store.revoke(id))) throw new Error(`keys revoke: no key with id ${id}`);
        process.stderr.write(`revoked ${id}\n`);
        return 0;
      }
      case 'set': {
        const id = requireId(
          positionals,
          'keys set ID [--bundle on|off] [--tps N|off] [--bundles-per-second N|off] [--reads-per-second N|off] [--webhook URL|off]',
        );
        const changes: KeyChanges = {
          ...(values.bundle === undefined ? {} : { bundle: parseOnOff(String(values.bundle), 'keys set --bundle') }),
          ...parseLimits(values, 'keys set'),
          ...parseWebhook(values.webhook, config.webhookAllowPrivate, 'keys set'),
        };
        if (Object.keys(changes).length === 0) throw new Error('keys set: say what to change, e.g. --bundle on or --tps 50');
        if (!(await store.update(id, changes))) throw new Error(`keys set: no key with id ${id}`);
        const record = (await store.list()).find((k) => k.id === id)!;
        const secret = changes.webhook?.secret;
        if (changes.webhook !== undefined) {
          // A new webhook (or none) starts afresh: a paused receiver is resumed, and what waits is due at once.
          // None: what waited for it is given up (kept for streams a while, never sent).
          const outbox = await openStore(config, EVENT_OUTBOX);
          const now = Date.now();
          await (changes.webhook === null ? outbox.discard(id, now) : outbox.resume(id, now)).finally(() => outbox.close());
        }
        if (values.json)
          process.stdout.write(JSON.stringify({ ...record, ...(secret === undefined ? {} : { webhookSecret: secret }) }) + '\n');
        else {
          process.stderr.write(
            `${id}: sendBundle ${record.bundle ? 'on' : 'off'}, ${describeLimits(record)}, webhook ${record.webhookUrl ?? 'off'}\n`,
          );
          if (secret !== undefined) process.stderr.write(webhookSecretLine(secret));
        }
        return 0;
      }
      case 'show': {
        const id = requireId(positionals, 'keys show ID');
        const record = (await store.list()).find((k) => k.id === id);
        if (record === undefined) throw new Error(`keys show: no key with id ${id}`);
        const outbox = await openStore(config, EVENT_OUTBOX);
        try {
          const [receiver, pending] = await Promise.all([outbox.receiver(id), outbox.pending()]);
          const webhook = { url: record.webhookUrl, pending: pending.get(id) ?? 0, receiver };
          process.stdout.write(
            values.json ? JSON.stringify({ ...record, webhook }) + '\n' : formatKeys([record]) + describeReceiver(webhook),
          );
        } finally {
          await outbox.close();
        }
        return 0;
      }
      default:
        throw new Error('keys: say create, list, show, revoke or set (see bin/slipway help)');
    }
  } finally {
    await store.close();
  }
}

/** `--tps N`, `--bundles-per-second N` and `--reads-per-second N`: a positive integer, or `off` for no limit. */
function parseLimits(
  values: { tps?: string; 'bundles-per-second'?: string; 'reads-per-second'?: string },
  command: string,
): { tps?: number | null; bundlesPerSecond?: number | null; readsPerSecond?: number | null } {
  const limit = (raw: string | undefined, flag: string): number | null | undefined => {
    if (raw === undefined) return undefined;
    if (raw === 'off') return null;
    const value = Number(raw);
    if (!Number.isInteger(value) || value < 1 || value > 1_000_000)
      throw new Error(`${command} ${flag} takes a whole number from 1 to 1000000, or off (got ${JSON.stringify(raw)})`);
    return value;
  };
  const tps = limit(values.tps, '--tps');
  const bundlesPerSecond = limit(values['bundles-per-second'], '--bundles-per-second');
  const readsPerSecond = limit(values['reads-per-second'], '--reads-per-second');
  return {
    ...(tps === undefined ? {} : { tps }),
    ...(bundlesPerSecond === undefined ? {} : { bundlesPerSecond }),
    ...(readsPerSecond === undefined ? {} : { readsPerSecond }),
  };
}

/** `--webhook URL`: a new webhook with a new secret; `off`: none. */
function parseWebhook(raw: string | undefined, allowPrivate: boolean, command: string): Pick<KeyChanges, 'webhook'> {
  if (raw === undefined) return {};
  if (raw === 'off') return { webhook: null };
  try {
    return { webhook: { url: parseWebhookUrl(raw, allowPrivate).href, secret: generateWebhookSecret() } };
  } catch (error) {
    throw new Error(`${command} --webhook: ${(error as Error).message}`, { cause: error });
  }
}

function webhookSecretLine(secret: string): string {
  return `webhook signing secret (Standard Webhooks; shown only this once, a new one with each keys set --webhook): ${secret}\n`;
}

function describeLimits(record: ApiKeyRecord): string {
  const transactions = record.tps === null ? 'no transaction limit' : `${record.tps} transactions/s`;
  const bundles = record.bundlesPerSecond === null ? 'no bundle limit' : `${record.bundlesPerSecond} bundles/s`;
  const reads = record.readsPerSecond === null ? 'no read limit' : `${record.readsPerSecond} reads/s`;
  return `${transactions}, ${bundles}, ${reads}`;
}

function parseOnOff(value: string, what: string): boolean {
  if (value === 'on' || value === 'true') return true;
  if (value === 'off' || value === 'false') return false;
  throw new Error(`${what} takes on or off (got ${JSON.stringify(value)})`);
}

function requireId(positionals: string[], usage: string): string {
  const id = positionals[0];
  if (id === undefined) throw new Error(`usage: ${usage}`);
  return id;
}

function formatKeys(keys: ApiKeyRecord[]): string {
  if (keys.length === 0) return 'no keys\n';
  return keys
    .map(
      (k) =>
        `${k.id}  ${k.name}  sendBundle=${k.bundle ? 'on' : 'off'}  tps=${k.tps ?? 'off'}  bundles/s=${k.bundlesPerSecond ?? 'off'}  reads/s=${k.readsPerSecond ?? 'off'}  webhook=${k.webhookUrl ?? 'off'}  created=${k.createdAt}${k.revokedAt ? `  REVOKED ${k.revokedAt}` : ''}\n`,
    )
    .join('');
}
