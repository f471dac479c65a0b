/**
 * The embedded ledger's saved state, as one JSON file: the accounts transactions have
 * touched (the rest is LiteSVM's built-in genesis: programs and sysvars), the slot, the
 * blockhash window, signature statuses and bundle records. A format of Slipway's own, so
 * that a saved ledger does not depend on LiteSVM's internal serialization.
 */
import fs from 'node:fs';
import path from 'node:path';

export interface SavedAccount {
  readonly address: string;
  readonly lamports: string;
  readonly owner: string;
  readonly executable: boolean;
  readonly rentEpoch: string;
  /** Base64. */
  readonly data: string;
}

export interface SavedLedger {
  readonly version: 1;
  readonly slot: number;
  /** How many blockhashes LiteSVM has derived since genesis (see LocalLedger). */
  readonly blockhashCount: number;
  readonly blockhashes: [string, number][];
  readonly slotHashes: { slot: string; hash: string }[];
  readonly accounts: SavedAccount[];
  readonly statuses: [string, { slot: number; err: unknown }][];
  readonly bundles: { bundleId: string; signatures: string[]; slot: number; landed: boolean; err: unknown; reason?: string | null }[];
  readonly journalSeq: number;
  /** Transactions included so far (absent in files written before it was kept). */
  readonly transactionCount?: number;
  /** When it was saved (epoch ms; absent in files written before it was kept). */
  readonly savedAt?: number;
}

const FILE = 'ledger.json';

export function readSavedLedger(dir: string): SavedLedger | undefined {
  const file = path.join(dir, FILE);
  if (!fs.existsSync(file)) return undefined;
  const saved = JSON.parse(fs.readFileSync(file, 'utf8')) as SavedLedger;
  if (saved.version !== 1) throw new Error(`${file} has format version ${saved.version}; this Slipway reads version 1`);
  return saved;
}

/** Writes atomically: a crash in the middle leaves the previous copy whole. */
export function writeSavedLedger(dir: string, saved: SavedLedger): void {
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, FILE);
  const temporary = `${file}.tmp`;
  const fd = fs.openSync(temporary, 'w');
  try {
    fs.writeSync(fd, JSON.stringify(saved));
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  fs.renameSync(temporary, file);
}
