/**
 * `slipway send FILE…`: sends signed transactions from files through a gateway (one by one,
 * as one batch, or as one bundle), waits until each is final while showing progress, and
 * prints what became of each. Exit status 0 only if every one landed.
 *
 * A file holds one transaction as raw bytes, or Base64 text with one transaction per line.
 *
 * `--fee auto --keypair FILE` asks the gateway's getLandingEstimate for each transaction (the
 * chance `--probability`, default 0.9, of landing within `--land-within` slots, default 8) and
 * sets that compute-unit price, signing it again with the fee payer's key (priority-fee.ts);
 * `--fee N` sets N micro-lamports a unit.
 */
import fs from 'node:fs';
import { createSlipwayClient, SlipwayClientError, type SubmissionStatus } from '../client';
import { firstSignature } from '../client/transaction-input';
import { resolveConfig } from '../config/config';
import { parseOptions } from './parse-options';
import { MAX_PRICE, readKeypair, withPriorityFee } from './priority-fee';

interface Item {
  readonly source: string;
  base64: string;
  /** The price `--fee` set, with the advice it came from. */
  fee?: FeeSet;
  signature?: string;
  state?: SubmissionStatus['state'] | 'refused';
  slot?: number | null;
  reason?: string | null;
  code?: number;
}

interface FeeSet {
  readonly microLamportsPerComputeUnit: number;
  readonly advice?: { probability: number; withinSlots: number; reachable: boolean; outcomes: number; confidence: string };
}

/** What `--fee` asks: a price, or advice for a chance within some slots. */
type FeeRequest = { readonly price: number } | { readonly probability: number; readonly withinSlots: number };

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
    fee: { type: 'string' },
    keypair: { type: 'string' },
    'land-within': { type: 'string' },
    probability: { type: 'string' },
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

  const feeRequest = feeRequestOf(values);
  const payer = feeRequest === undefined ? undefined : readKeypair(values.keypair!);

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

  if (feeRequest !== undefined) {
    for (const item of items) {
      const fee = await feeFor(item, feeRequest, client);
      try {
        item.base64 = withPriorityFee(item.base64, fee.microLamportsPerComputeUnit, payer!);
      } catch (error) {
        throw new Error(`send: ${item.source}: ${(error as Error).message}`, { cause: error });
      }
      item.fee = fee;
      if (!values.json) process.stderr.write(`${item.source}  ${describeFee(fee)}\n`);
    }
  }

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

/** `--fee`, `--land-within` and `--probability` as asked, or undefined without `--fee`; throws saying what is wrong. */
function feeRequestOf(values: Record<string, string | boolean | undefined>): FeeRequest | undefined {
  const { fee, keypair } = values as Record<string, string | undefined>;
  const within = values['land-within'] as string | undefined;
  const probability = values.probability as string | undefined;
  if (fee === undefined) {
    if (within !== undefined || probability !== undefined) throw new Error('send: --land-within and --probability go with --fee auto');
    if (keypair !== undefined) throw new Error('send: --keypair goes with --fee (the key that signs the transaction again)');
    return undefined;
  }
  if (values.bundle)
    throw new Error('send: --fee applies to single sends and batches (a bundle pays by its tip: ask getLandingEstimate with bundle: true)');
  if (keypair === undefined)
    throw new Error(
      "send: --fee changes the transaction, which must then be signed again: give its fee payer's keypair file with --keypair FILE",
    );
  if (fee !== 'auto') {
    if (within !== undefined || probability !== undefined)
      throw new Error('send: --land-within and --probability go with --fee auto, not a price of your own');
    const price = /^[0-9]{1,16}$/.test(fee) ? Number(fee) : NaN;
    if (!(price <= MAX_PRICE))
      throw new Error(
        `send: --fee must be auto or a whole number of micro-lamports per compute unit; got ${JSON.stringify(fee.slice(0, 40))}`,
      );
    return { price };
  }
  const slots = Number(within ?? 8);
  if (!Number.isInteger(slots) || slots < 1 || slots > 150)
    throw new Error(`send: --land-within must be a whole number of slots from 1 to 150; got ${within}`);
  const chance = Number(probability ?? 0.9);
  if (!(chance >= 0.01 && chance <= 0.99)) throw new Error(`send: --probability must be a number from 0.01 to 0.99; got ${probability}`);
  return { probability: chance, withinSlots: slots };
}

async function feeFor(item: Item, request: FeeRequest, client: ReturnType<typeof createSlipwayClient>): Promise<FeeSet> {
  if ('price' in request) return { microLamportsPerComputeUnit: request.price };
  let estimate;
  try {
    estimate = await client.getLandingEstimate({ transaction: item.base64, ...request });
  } catch (error) {
    throw new Error(`send: ${item.source}: the gateway gave no fee advice: ${(error as Error).message}`, { cause: error });
  }
  const { microLamportsPerComputeUnit, probability, withinSlots, reachable, evidence } = estimate;
  return {
    microLamportsPerComputeUnit,
    advice: { probability, withinSlots, reachable, outcomes: evidence.outcomes, confidence: evidence.confidence },
  };
}

function describeFee({ microLamportsPerComputeUnit, advice }: FeeSet): string {
  if (advice === undefined) return `fee set: ${microLamportsPerComputeUnit} micro-lamports per compute unit`;
  const chance = `${Math.round(advice.probability * 100)} % within ${advice.withinSlots} slots`;
  return `fee advised: ${microLamportsPerComputeUnit} micro-lamports per compute unit for ${chance}${advice.reachable ? '' : ' (the best on offer)'}, from ${advice.outcomes} outcomes, confidence ${advice.confidence}`;
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
