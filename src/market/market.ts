/**
 * The local cluster's other senders (`--market LOAD`): background traffic of LOAD times the
 * block's units each slot, spread over the slot in eight parts, paying what the fee weather
 * draws (fee-weather.ts), from the market's wallets to one another or to the hot account.
 *
 * How it is sent, by share of the units: a tenth as one-transaction bundles with a tip to
 * the block engine; of the rest, half to the TPUs of the current and the next leader (as
 * senders that know the schedule do), 35 % to the RPC node's `sendTransaction` (forwarded and
 * retried by the node) and 15 % to the block engine's `sendTransaction`. Where it goes is the
 * sink's business (in process, or over the cluster's own sockets).
 */
import bs58 from 'bs58';
import { createHash } from 'node:crypto';
import { JITO_TIP_ACCOUNTS } from '../core/jito-tip-accounts';
import { FeeWeather } from './fee-weather';
import { marketWallet, transferWire, type Wallet } from './market-wires';

/** The market's wallets: senders and recipients. */
export const MARKET_WALLETS = 256;
/** Lamports each wallet is given at the start: enough for millions of fees. */
export const WALLET_LAMPORTS = 1_000_000_000_000n;
/** The account a share of the traffic writes (a popular pool, a token launch): derived from a public seed. */
export const HOT_ACCOUNT = createHash('sha256').update('slipway market hot account').digest();
/** What the cost model estimates for a market transfer and a tipped one (the tests check these against cost-model.ts). */
export const TRANSFER_COST = 1_935;
export const TIPPED_COST = 2_388;

const PARTS_PER_SLOT = 8;
const BUNDLE_SHARE = 0.1;
const TPU_SHARE = 0.5;
const RPC_SHARE = 0.35;

export type MarketPath = 'tpu' | 'rpc' | 'engine';

/** Where the market's transactions go. */
export interface MarketSink {
  /** `leaders`: for `tpu`, the validators whose TPUs it is sent to. */
  sendTransaction(wire: Buffer, path: MarketPath, leaders: readonly string[]): void;
  sendBundle(wires: readonly Buffer[]): void;
}

/** What the market reads of the cluster. */
export interface MarketView {
  readonly currentSlot: number;
  latestBlockhash(): string;
  leaderAt(slot: number): string;
}

export interface MarketSettings {
  /** Times the block's units sent each slot. */
  readonly load: number;
  readonly blockUnits: number;
  readonly slotMs: number;
  readonly seed?: number;
}

export interface MarketCounts {
  transactions: number;
  bundles: number;
}

export class Market {
  readonly weather: FeeWeather;
  readonly wallets: readonly Wallet[];
  readonly counts: MarketCounts = { transactions: 0, bundles: 0 };
  private timer: NodeJS.Timeout | undefined;
  private part = 0;
  /** Units owed from earlier parts (a part's share is rarely a whole number of transactions). */
  private owed = 0;
  private sent = 0;

  constructor(
    private readonly view: MarketView,
    private readonly sink: MarketSink,
    private readonly settings: MarketSettings,
  ) {
    this.weather = new FeeWeather(settings.seed);
    this.wallets = Array.from({ length: MARKET_WALLETS }, (_, i) => marketWallet(i));
  }

  start(): void {
    if (this.timer !== undefined || this.settings.load <= 0) return;
    this.timer = setInterval(() => this.sendPart(), Math.max(1, Math.floor(this.settings.slotMs / PARTS_PER_SLOT)));
    this.timer.unref();
  }

  stop(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** One eighth of a slot's traffic; every eighth part moves the weather on a slot. */
  sendPart(): void {
    if (this.part++ % PARTS_PER_SLOT === 0) this.weather.nextSlot();
    this.owed += (this.settings.load * this.settings.blockUnits) / PARTS_PER_SLOT;
    const slot = this.view.currentSlot;
    const blockhash = Buffer.from(bs58.decode(this.view.latestBlockhash()));
    const leaders = [...new Set([this.view.leaderAt(slot), this.view.leaderAt(slot + 4)])];
    while (this.owed >= TRANSFER_COST) {
      const roll = this.weather.uniform();
      if (roll < BUNDLE_SHARE) {
        this.owed -= TIPPED_COST;
        this.sink.sendBundle([this.transfer(blockhash, true)]);
        this.counts.bundles++;
        continue;
      }
      this.owed -= TRANSFER_COST;
      const share = (roll - BUNDLE_SHARE) / (1 - BUNDLE_SHARE);
      const path: MarketPath = share < TPU_SHARE ? 'tpu' : share < TPU_SHARE + RPC_SHARE ? 'rpc' : 'engine';
      this.sink.sendTransaction(this.transfer(blockhash, false), path, leaders);
      this.counts.transactions++;
    }
  }

  private transfer(blockhash: Buffer, tipped: boolean): Buffer {
    const n = this.sent++;
    const from = this.wallets[n % MARKET_WALLETS]!;
    const { price, hot } = this.weather.draw();
    const to = hot ? HOT_ACCOUNT : this.wallets[(n * 7 + 1) % MARKET_WALLETS]!.publicKey;
    const tip = tipped
      ? { account: Buffer.from(bs58.decode(JITO_TIP_ACCOUNTS[n % JITO_TIP_ACCOUNTS.length]!)), lamports: this.weather.tip() }
      : undefined;
    // The amount varies so that no two transfers with one blockhash are the same transaction.
    return transferWire({ from, to, lamports: 1 + (n % 1_000_000), blockhash, price: tipped ? 0 : price, tip });
  }
}
