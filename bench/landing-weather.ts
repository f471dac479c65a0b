/**
 * The market weather a landing benchmark runs in. The market's bursts (a token launch on the
 * hot account: docs/LEDGER.md, The market) start with a chance of 1/400 a slot, so a run of a
 * few hundred slots often has none (seed 1's first is at slot 550, after the sending), and the
 * figures said nothing of how a sender fares when the market jumps. The
 * benchmark picks the first seed whose weather starts a burst after a quarter of the sending
 * and ends it before the sending ends (the slots' weather is the same at every load:
 * fee-weather.ts), and says where the burst was seen in the blocks.
 */
import { burstsOf } from '../src/market/fee-weather';
import { startLedger, type ServerProcess } from './processes';

/** The landing benchmarks' cluster: 400 ms slots, blocks of the market's default 200,000 units (docs/LEDGER.md, The market). */
export const SLOT_MS = 400;
export const BLOCK_UNITS = 200_000;
/** A transaction counts as landed in time within this many slots of the slot read before sending it. */
export const WITHIN_SLOTS = 8;
/** Each sender sends one transaction every TICK_MS: 2 a slot, 5 a second. */
export const TICK_MS = 200;
/** Each sender's funds: 90 s at 5 a second of about 1,000,000 lamports each is under 1 SOL; the calibration stream 2.5 times that. */
export const SENDER_LAMPORTS = 20_000_000_000;

/** About how long the cluster, the gateways and the senders' funding take before the warm-up begins. */
const STARTUP_SECONDS = 10;
const MAX_SEED = 100_000;

export interface Weather {
  readonly seed: number;
  /** The market's own slot the burst begins in (counted from its start, not the cluster's slot number) and its length. */
  readonly burst: { readonly start: number; readonly slots: number };
  /** The slots the sending is expected to span. */
  readonly sending: { readonly from: number; readonly to: number };
}

/** The first seed whose burst falls within the sending of a run that warms up for `warmSeconds` and sends for `sendSeconds`. */
export function weatherFor(warmSeconds: number, sendSeconds: number, slotMs: number): Weather {
  const from = Math.round(((STARTUP_SECONDS + warmSeconds) * 1000) / slotMs);
  const to = from + Math.round((sendSeconds * 1000) / slotMs);
  const earliest = from + Math.round((to - from) / 4);
  const latestEnd = to - Math.round((to - from) / 10);
  for (let seed = 1; seed <= MAX_SEED; seed++) {
    const first = burstsOf(seed, latestEnd)[0];
    if (first !== undefined && first.start >= earliest && first.start + first.slots <= latestEnd)
      return { seed, burst: first, sending: { from, to } };
  }
  throw new Error(`no seed up to ${MAX_SEED} has a burst between slots ${earliest} and ${latestEnd}`);
}

/** Starts the local cluster under `dir` with the market at `load` in `weather`. */
export function startCongestedCluster(dir: string, load: number, weather: Weather): Promise<ServerProcess> {
  return startLedger(dir, SLOT_MS, ['--market', String(load), '--block-units', String(BLOCK_UNITS), '--market-seed', String(weather.seed)]);
}

/** What the run's log says of the weather before the cluster starts. */
export const describeWeather = ({ seed, burst, sending }: Weather) =>
  `market seed ${seed}: a token launch from the market's slot ${burst.start} for ${burst.slots} slots; sending expected over its slots ${sending.from}–${sending.to}`;

/**
 * What the run's log says of the bursts seen in the blocks read: runs of at least SEEN_SLOTS
 * slots where the hot account took at least SEEN_HOT_SHARE of what landed. A burst's dear
 * transactions wait in the leaders' buffers and keep landing after it ends (at most the
 * account's limit a block), so a run seen lasts longer than the burst.
 */
export function describeSeenBursts(hotShareBySlot: ReadonlyMap<number, number>): string {
  const runs = hotRuns(hotShareBySlot, SEEN_HOT_SHARE).filter(({ from, to }) => to - from + 1 >= SEEN_SLOTS);
  return runs.length === 0
    ? 'no token launch seen in the blocks read'
    : `the hot account took ≥ ${SEEN_HOT_SHARE * 100} % of what landed in slots ${runs.map(({ from, to }) => `${from}–${to}`).join(', ')}`;
}

/** Outside a burst 15 % of the market writes the hot account (a block now and then reaches 30 %); in one 60 %, held by the account limit to 40 % of a block. */
const SEEN_HOT_SHARE = 0.35;
const SEEN_SLOTS = 5;

/** Each slot's share of the hot account, from what the block watcher read. */
export const hotShares = (slots: ReadonlyMap<number, { readonly hotShare: number }>) =>
  new Map([...slots].map(([slot, { hotShare }]) => [slot, hotShare]));

/** The slots where the hot account's share of what landed is at least `share`, as runs (first and last slot). */
export function hotRuns(hotShareBySlot: ReadonlyMap<number, number>, share: number): { from: number; to: number }[] {
  const runs: { from: number; to: number }[] = [];
  for (const slot of [...hotShareBySlot.keys()].sort((a, b) => a - b)) {
    if (hotShareBySlot.get(slot)! < share) continue;
    const last = runs.at(-1);
    if (last !== undefined && slot - last.to <= 2) last.to = slot;
    else runs.push({ from: slot, to: slot });
  }
  return runs;
}
