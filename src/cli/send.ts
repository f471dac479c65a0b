/**
 * `slipway send FILE…`: sends signed transactions from files through a gateway (one by one,
 * as one batch, or as one bundle), waits until each is final while showing progress, and
 * prints what became of each. Exit status 0 only if every one landed.
 *
 * A file holds one transaction as raw bytes, or Base64 text with one transaction per line.
 */
import fs from 'node:fs';
import { createSlipwayClient, SlipwayClientError, type SubmissionStatus } from '../client';
import { firstSignature } from '../client/transaction-input';
import { resolveConfig } from '../config/config';
import { parseOptions } from './parse-options';

interface Item {
  readonly source: string;
  readonly base64: string;
  signature?: string;
  state?: SubmissionStatus['state'] | 'refused';
  slot?: number | null;
  reason?: string | null;
  code?: number;
}

const FINAL = new Set(['landed', 'failed', 'expired', 'rejected', 'refused']);
const POLL_MS = 500;

export async function runSend(args: string[]): Promise<number> {
  const { values, positionals } = parseOptions('send', args, {
    url: { type: 'string' },
    key: { type: 'string' },
    batch: { type: 'boolean' },
    bundle: { type: 'boolean' },
    'anti-mev': { type: 'boolean' },
    json: { type: 'boolean' },
    'timeout-s': { type: 'string' },
    'data-dir': { type: 'string' },
    config: { type: 'string' },
  });
  if (positionals.length === 0) throw new Error('send: name at least one file of signed transactions (raw bytes, or Base64 one per line)');
  if (values.batch && values.bundle) throw new Error('send: --batch or --bundle, not both');
  if (values.bundle && values['anti-mev'])
    throw new Error('send: --anti-mev applies to single sends and batches (a bundle goes to the block engine, which is private already)');
  const apiKey = values.key ?? process.env.SLIPWAY_API_KEY;
  if (apiKey === undefined || apiKey === '') throw new Error('send: give the API key with --key KEY or $SLIPWAY_API_KEY');
  const timeoutS = Number(values['timeout-s'] ?? 90);
  if (!(timeoutS > 0)) throw new Error('send: --timeout-s must be a positive number of seconds');
  const config = resolveConfig({ dataDir: values['data-dir'], config: values.config });
  const url = values.url ?? `http://${config.host === '0.0.0.0' ? '127.0.0.1' : config.host}:${config.port}`;

  const items = positionals.flatMap(readTransactions);
  if ((values.batch || values.bundle) && items.length > 5)
    throw new Error(`send: a ${values.batch ? 'batch' : 'bundle'} holds 1–5 transactions; the files hold ${items.length}`);
  const client = createSlipwayClient({ url, apiKey });
  const refuse = (targets: Item[], error: unknown) => {
    if (!(error instanceof SlipwayClientError)) throw error;
    for (const item of targets)
      Object.assign(item, {
        state: 'refused',
        code: error.code,
        reason: error.message,
        signature: item.signature ?? signatureOf(item.base64),
      });
  };

  const antiMev = values['anti-mev'] === true;
  if (values.bundle) {
    await client.sendBundle(items.map((i) => i.base64)).then(
      ({ signatures }) => signatures.forEach((s, n) => (items[n]!.signature = s)),
      (error) => refuse(items, error),
    );
  } else if (values.batch) {
    await client
      .submitBatch(
        items.map((i) => i.base64),
        { antiMev },
      )
      .then(
        (signatures) => signatures.forEach((s, n) => (items[n]!.signature = s)),
        (error) => refuse(items, error),
      );
  } else {
    for (const item of items) {
      await client.sendTransaction(item.base64, { antiMev }).then(
        (signature) => (item.signature = signature),
        (error) => refuse([item], error),
      );
    }
  }

  const progress = new Progress(items.length, !values.json && process.stderr.isTTY === true);
  const deadline = Date.now() + timeoutS * 1000;
  for (;;) {
    const open = items.filter((i) => !FINAL.has(i.state ?? ''));
    progress.show(items);
    if (open.length === 0 || Date.now() > deadline) break;
    for (let i = 0; i < open.length; i += 256) {
      const chunk = open.slice(i, i + 256);
      const statuses = await client.getStatuses(chunk.map((item) => item.signature!));
      chunk.forEach((item, n) => {
        const status = statuses[n];
        if (status === null || status === undefined) return;
        const own = status.transactions.find((t) => t.signature === item.signature) ?? status;
        Object.assign(item, { state: own.state, slot: own.slot, reason: own.reason });
      });
    }
    if (items.every((i) => FINAL.has(i.state ?? ''))) continue;
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
  progress.done();

  if (values.json) {
    process.stdout.write(
      `${JSON.stringify(
        items.map(({ base64: _, ...rest }) => ({ ...rest, state: rest.state ?? 'unknown' })),
        null,
        2,
      )}\n`,
    );
  } else {
    for (const item of items) process.stdout.write(`${describe(item)}\n`);
  }
  return items.every((i) => i.state === 'landed') ? 0 : 1;
}

/** A refused transaction's first signature, to name it by, when its bytes have one. */
function signatureOf(base64: string): string | undefined {
  const bytes = Buffer.from(base64, 'base64');
  return bytes.length >= 65 && bytes[0]! > 0 && bytes[0]! < 0x80 ? firstSignature(base64) : undefined;
}

/** One transaction per file of raw bytes, or one per line of Base64 text. */
function readTransactions(file: string): Item[] {
  let bytes: Buffer;
  try {
    bytes = fs.readFileSync(file);
  } catch (error) {
    throw new Error(`send: cannot read ${file}: ${(error as Error).message}`, { cause: error });
  }
  const text = bytes.toString('latin1');
  if (/^[A-Za-z0-9+/=\s]*$/.test(text)) {
    const lines = text
      .split(/\r?\n/)
      .map((l) => l.trim())
      .filter((l) => l !== '');
    if (lines.length === 0) throw new Error(`send: ${file} holds no transaction`);
    return lines.map((base64, n) => ({ source: lines.length === 1 ? file : `${file}:${n + 1}`, base64 }));
  }
  return [{ source: file, base64: bytes.toString('base64') }];
}

function describe(item: Item): string {
  const id = item.signature ?? '(not sent)';
  switch (item.state) {
    case 'landed':
      return `${item.source}  ${id}  landed in slot ${item.slot}`;
    case 'refused':
      return `${item.source}  ${id}  refused (${item.code}): ${item.reason}`;
    case undefined:
    case 'forwarded':
    case 'held':
      return `${item.source}  ${id}  not final when the wait ended (${item.state ?? 'unknown'}${item.reason ? `: ${item.reason}` : ''})`;
    default:
      return `${item.source}  ${id}  ${item.state}${item.reason ? `: ${item.reason}` : ''}`;
  }
}

/** One line on a terminal, rewritten as states change; nothing otherwise. */
class Progress {
  private last = '';
  constructor(
    private readonly total: number,
    private readonly live: boolean,
  ) {}

  show(items: readonly Item[]): void {
    if (!this.live) return;
    const counts = new Map<string, number>();
    for (const item of items) counts.set(item.state ?? 'sent', (counts.get(item.state ?? 'sent') ?? 0) + 1);
    const line = `waiting for ${this.total} transaction(s): ${[...counts].map(([state, n]) => `${n} ${state}`).join(', ')}`;
    if (line !== this.last) process.stderr.write(`\r\x1b[K${line}`);
    this.last = line;
  }

  done(): void {
    if (this.live && this.last !== '') process.stderr.write('\n');
  }
}
