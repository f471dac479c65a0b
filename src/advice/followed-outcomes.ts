/**
 * Slipway's own outcomes as the landing advice reads them (journal rows, any gateway's):
 * what each transaction paid (its scheduling priority, or a bundle's tip), the accounts it
 * wrote, where that stood in the market when it was received (market-ranks.ts), and whether
 * it landed within k slots — known once it landed, ended, or waited long enough that it no
 * longer can. A bundle is one outcome (its first transaction's row, its tip that of all its
 * transactions). No I/O.
 */
import type { TransactionOutcome } from '../stores/journal';
import type { TransactionState } from '../core/transaction-states';
import { writableStaticAddresses } from './block-fees';
import { tipOf } from '../leader/block-auction';
import { priorityAndCost } from '../leader/scheduler-priority';
import { feeOf } from '../leader/compute-budget';
import { isWireDefect, parseWireTransaction, type WireTransaction } from '../validation/wire-transaction';
import { transactionRank, rankIn, type MarketSnapshot } from './market-ranks';

/**
 * Slots past k after which a transaction still unfinished counts as not landed within k: the
 * slot it was received in is counted from the gateway's view, and its landing reaches the
 * journal a moment after the slot.
 */
const UNFINISHED_MARGIN_SLOTS = 3;

export interface Followed {
  readonly signature: string;
  readonly keyId: string;
  readonly bundle: boolean;
  readonly route: string;
  readonly createdAt: number;
  /** Agave's scheduling priority (transactions), or lamports of tip (bundles). */
  readonly paid: number;
  readonly accounts: readonly string[];
  /** Where `paid` stood in the market when it was received, or null when no snapshot covers that moment. */
  readonly rank: number | null;
  /** Lamports its fee (5,000 a signature and its priority fee; a bundle's tip not counted). */
  readonly feeLamports: number;
  state: TransactionState;
  slot: number | null;
  slotsToLand: number | null;
}

/** The outcomes of `rows` (newest first, as the journal gives them); `known` keeps those already read, by signature, updated in place. */
export function followedOf(
  rows: readonly TransactionOutcome[],
  known: Map<string, Followed>,
  snapshotAt: (atMs: number) => MarketSnapshot | undefined,
): Followed[] {
  const bundles = new Map<number, TransactionOutcome[]>();
  for (const row of rows) {
    if (row.kind !== 'bundle') continue;
    const members = bundles.get(row.seq);
    if (members === undefined) bundles.set(row.seq, [row]);
    else members.push(row);
  }
  const followed: Followed[] = [];
  for (const row of rows) {
    if (row.kind === 'bundle' && row.position !== 0) continue;
    let outcome = known.get(row.signature);
    if (outcome === undefined) {
      const made = row.kind === 'bundle' ? bundleOutcome(row, bundles.get(row.seq)!, snapshotAt) : transactionOutcome(row, snapshotAt);
      if (made === null) continue;
      known.set(row.signature, (outcome = made));
    }
    outcome.state = row.state;
    outcome.slot = row.slot;
    outcome.slotsToLand = row.slotsToLand;
    followed.push(outcome);
  }
  return followed;
}

function transactionOutcome(row: TransactionOutcome, snapshotAt: (atMs: number) => MarketSnapshot | undefined): Followed | null {
  const wire = parse(row.wire);
  if (wire === null) return null;
  const paid = Number(priorityAndCost(wire).priority);
  const accounts = writableStaticAddresses(wire);
  const snapshot = snapshotAt(row.createdAt);
  const rank = snapshot === undefined ? null : transactionRank(snapshot, paid, accounts);
  return { ...common(row), bundle: false, paid, accounts, rank, feeLamports: Number(feeOf(wire)) };
}

function bundleOutcome(
  row: TransactionOutcome,
  members: readonly TransactionOutcome[],
  snapshotAt: (atMs: number) => MarketSnapshot | undefined,
): Followed | null {
  const wires = members.map((m) => parse(m.wire));
  if (wires.some((w) => w === null)) return null;
  const parsed = wires as WireTransaction[];
  const paid = Number(tipOf(parsed));
  const tips = snapshotAt(row.createdAt)?.tips;
  const rank = tips === undefined || tips === null ? null : rankIn(tips, paid);
  const feeLamports = parsed.reduce((n, wire) => n + Number(feeOf(wire)), 0);
  return { ...common(row), bundle: true, paid, accounts: [], rank, feeLamports };
}

function common(row: TransactionOutcome) {
  return {
    signature: row.signature,
    keyId: row.keyId,
    route: row.route,
    createdAt: row.createdAt,
    state: row.state,
    slot: row.slot,
    slotsToLand: row.slotsToLand,
  };
}

function parse(bytes: Buffer): WireTransaction | null {
  const wire = parseWireTransaction(bytes);
  return isWireDefect(wire) ? null : wire;
}

/**
 * Whether `outcome` landed within `slots` slots (failed on chain counts: it was in a block), or
 * null until that is known for every transaction received with it: k + 3 slots after it was
 * received. A landing is known at once and a miss only then, so counted as soon as each was
 * known, the newest outcomes were the landings alone: the curve learnt that everything lands
 * (bench:landing at 4x: predicted 98 %, 84 % landed; advice priced where nothing landed in the
 * first slots of a stream, from its first quick landings).
 */
export function landedWithin(outcome: Followed, slots: number, nowMs: number, slotMs: number): boolean | null {
  if (nowMs - outcome.createdAt <= (slots + UNFINISHED_MARGIN_SLOTS) * slotMs) return null;
  if (outcome.state === 'landed' || outcome.state === 'failed') return outcome.slotsToLand === null ? null : outcome.slotsToLand <= slots;
  return false;
}
