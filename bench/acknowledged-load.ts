/**
 * A closed-loop load of distinct signed transfers that remembers every submission the gateway
 * acknowledged, and the check that each of them is in the gateway's journal afterwards: the
 * measure of "nothing answered with success is lost" for the soak (`npm run soak`) and for
 * the runtime test (test/runtime/sqlite-under-load.test.ts).
 *
 * Acknowledgements are kept as the first 8 bytes of each signature (a 10-minute run
 * acknowledges millions; 8 bytes of an ed25519 signature do not collide at that count).
 */
import { Pool } from 'undici';
import { createSqliteJournal } from '../src/stores/journal';
import Database from '../src/stores/database/sqlite-binding';

export interface LoadTally {
  requests: number;
  /** Answers other than HTTP 200 with a result, and transport errors. */
  failed: number;
  /** The first few reasons for failures, with their counts. */
  readonly reasons: Map<string, number>;
  /** First 8 bytes of each acknowledged signature (`count` of them are set). */
  acknowledged: BigUint64Array;
  count: number;
}

export function newTally(): LoadTally {
  return { requests: 0, failed: 0, reasons: new Map(), acknowledged: new BigUint64Array(1 << 16), count: 0 };
}

function remember(tally: LoadTally, prefix: bigint): void {
  if (tally.count === tally.acknowledged.length) {
    const grown = new BigUint64Array(tally.acknowledged.length * 2);
    grown.set(tally.acknowledged);
    tally.acknowledged = grown;
  }
  tally.acknowledged[tally.count++] = prefix;
}

function fail(tally: LoadTally, reason: string): void {
  tally.failed++;
  if (tally.reasons.size < 8 || tally.reasons.has(reason)) tally.reasons.set(reason, (tally.reasons.get(reason) ?? 0) + 1);
}

/** The first 8 bytes of a Base64 wire transaction's first signature (bytes 1..9). */
export const signaturePrefix = (base64: string): bigint => Buffer.from(base64.slice(0, 12), 'base64').readBigUInt64LE(1);

export interface AcknowledgedLoadOptions {
  readonly url: string;
  readonly key: string;
  readonly connections: number;
  /** Base64 wire transactions, each distinct. */
  readonly nextTransaction: () => string;
  /** Sending stops once this returns true. */
  readonly done: () => boolean;
}

/** Sends sendTransaction requests on `connections` connections until `done()`, into `tally`. */
export async function sendAcknowledged(options: AcknowledgedLoadOptions, tally: LoadTally): Promise<void> {
  const pool = new Pool(options.url, { connections: options.connections, pipelining: 1 });
  const headers = { 'content-type': 'application/json', 'x-api-key': options.key };
  const loop = async () => {
    while (!options.done()) {
      const wire = options.nextTransaction();
      tally.requests++;
      try {
        const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'sendTransaction', params: [wire, { encoding: 'base64' }] });
        const answer = await pool.request({ method: 'POST', path: '/', headers, body });
        const text = await answer.body.text();
        if (answer.statusCode === 200 && text.includes('"result"')) remember(tally, signaturePrefix(wire));
        else fail(tally, `HTTP ${answer.statusCode} ${text.slice(0, 120)}`);
      } catch (error) {
        fail(tally, (error as Error).message);
        await new Promise((resolve) => setTimeout(resolve, 10)); // a closed connection: do not spin
      }
    }
  };
  await Promise.all(Array.from({ length: options.connections }, loop));
  await pool.close();
}

/**
 * How many acknowledged submissions the journal of a stopped gateway does not hold. Opening
 * the journal as a reader first applies whatever its log holds beyond SQLite (as after a crash).
 */
export async function lostAcknowledgements(journalFile: string, tally: LoadTally): Promise<number> {
  const journal = createSqliteJournal(journalFile, { reader: true });
  await journal.lastSeq();
  await journal.close();
  const db = new Database(journalFile, { readonly: true });
  const journaled: bigint[] = [];
  for (const row of db.prepare('SELECT wire FROM submission_transactions').iterate() as Iterable<{ wire: Buffer }>) {
    journaled.push(row.wire.readBigUInt64LE(1));
  }
  db.close();
  const have = BigUint64Array.from(journaled).sort();
  const acknowledged = tally.acknowledged.slice(0, tally.count).sort();
  let lost = 0;
  let at = 0;
  for (const prefix of acknowledged) {
    while (at < have.length && have[at]! < prefix) at++;
    if (at >= have.length || have[at] !== prefix) lost++;
  }
  return lost;
}
