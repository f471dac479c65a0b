/**
 * The landing benchmark's user senders: each signs transfers (to a recipient of its own, or
 * to the market's hot account, writing it) at the price its way of sending picks, reads the
 * cluster's slot just before sending, and records what it sent; whether and where each landed
 * is read afterwards (followUntilSettled).
 */
import { createHash } from 'node:crypto';
import bs58 from 'bs58';
import { Connection } from '@solana/web3.js';
import { Pool } from 'undici';
import { HOT_ACCOUNT } from '../src/market/market';
import { seededWallet, TIPPED_UNITS, TRANSFER_UNITS, transferWire, type Wallet } from '../src/market/market-wires';
import { JITO_TIP_ACCOUNTS } from '../src/core/jito-tip-accounts';
import { priorityAndCost } from '../src/leader/scheduler-priority';
import { parseWireTransaction, type WireTransaction } from '../src/validation/wire-transaction';
import { postJson, type Call, type Sent } from './landing-load';

/** Solana's base fee per signature (lamports). */
const LAMPORTS_PER_SIGNATURE = 5_000;
/** Each transfer moves at least this much, so that a recipient's first one makes it rent-exempt. */
const FIRST_LAMPORTS = 1_000_000;
/** Every third transaction writes the hot account (a call to the contended program, in effect). */
const HOT_EVERY = 3;
const TIP_ACCOUNT = Buffer.from(bs58.decode(JITO_TIP_ACCOUNTS[0]!));

export type SenderName = 'advised' | 'plain' | 'jito' | 'tpu' | 'lowFee' | 'calibration';

export interface UserSent extends Sent {
  /** Micro-lamports per compute unit set in the transaction. */
  readonly price: number;
  /** Its scheduling priority (Agave's), as a leader orders it. */
  readonly priority: number;
  readonly unitLimit: number;
  /** Lamports tipped to the block engine (0: none). */
  readonly tip: number;
  readonly hot: boolean;
  /** The probability of landing within the slots asked that the advice was for (null: no such advice). */
  readonly probability: number | null;
  /** How long the price took to have (ms): the advice's answer time, before the slot is read and the transaction sent. */
  readonly adviceMs: number;
}

/**
 * What a sender pays for a transaction writing `accountKeys`, `draft` (the transaction signed at
 * price 0, for advice that reads its shape): a price, a tip, the probability it was advised for.
 */
export type Pricing = (accountKeys: string[], draft: Buffer) => Promise<{ price: number; tip: number; probability: number | null }>;
/** Sends one signed transaction; answers its signature, or throws with why it was refused. */
export type Submit = (wire: Buffer) => Promise<string>;

/** One sender: its own wallet and recipient, its pricing and its way of sending. */
export class UserSender {
  readonly sent: UserSent[] = [];
  readonly wallet: Wallet;
  private readonly recipient: Buffer;
  private lamports = FIRST_LAMPORTS;
  private readonly inFlight = new Set<Promise<void>>();
  /** Advice that could not be had (the transaction was then not sent), by message, at most 5 kept. */
  readonly adviceFailures: Record<string, number> = {};

  constructor(
    readonly name: string,
    private readonly pricing: Pricing,
    private readonly submit: Submit,
    runId: string,
  ) {
    this.wallet = seededWallet(`slipway landing bench ${runId} ${name}`);
    this.recipient = createHash('sha256').update(`slipway landing bench ${runId} ${name} recipient`).digest();
  }

  get address(): string {
    return bs58.encode(this.wallet.publicKey);
  }

  /**
   * Sends one transaction (not awaited: the load is open loop), signed with the blockhash
   * `blockhash()` gives once its price is known (advice may take a slot or more).
   */
  send(node: Call, blockhash: () => string): void {
    const hot = (this.lamports - FIRST_LAMPORTS) % HOT_EVERY === HOT_EVERY - 1;
    const lamports = this.lamports++;
    const done = this.sendOne(node, blockhash, hot, lamports).finally(() => this.inFlight.delete(done));
    this.inFlight.add(done);
  }

  private async sendOne(node: Call, latestBlockhash: () => string, hot: boolean, lamports: number): Promise<void> {
    const to = hot ? HOT_ACCOUNT : this.recipient;
    let pricing: Awaited<ReturnType<Pricing>>;
    const asked = performance.now();
    const draft = transferWire({ from: this.wallet, to, lamports, blockhash: Buffer.from(bs58.decode(latestBlockhash())), price: 0 });
    try {
      pricing = await this.pricing([this.address, bs58.encode(to)], draft);
    } catch (error) {
      const why = error instanceof Error ? error.message : String(error);
      if (why in this.adviceFailures || Object.keys(this.adviceFailures).length < 5)
        this.adviceFailures[why] = (this.adviceFailures[why] ?? 0) + 1;
      return;
    }
    const slot = await node<number>('getSlot', [{ commitment: 'processed' }]);
    const blockhash = latestBlockhash();
    const tip = pricing.tip > 0 ? { account: TIP_ACCOUNT, lamports: pricing.tip } : undefined;
    const wire = transferWire({
      from: this.wallet,
      to,
      lamports,
      blockhash: Buffer.from(bs58.decode(blockhash)),
      price: pricing.price,
      tip,
    });
    const signature = bs58.encode(wire.subarray(1, 65));
    const entry: UserSent = {
      signature,
      blockhash,
      slot,
      price: pricing.price,
      priority: Number(priorityAndCost(parseWireTransaction(wire) as WireTransaction).priority),
      unitLimit: tip === undefined ? TRANSFER_UNITS : TIPPED_UNITS,
      tip: pricing.tip,
      hot,
      probability: pricing.probability,
      adviceMs: performance.now() - asked,
    };
    this.sent.push(entry);
    const started = performance.now();
    try {
      const answered = await this.submit(wire);
      entry.accepted = answered === signature;
      if (!entry.accepted) entry.refusal = `answered ${answered}`;
    } catch (error) {
      entry.accepted = false;
      entry.refusal = error instanceof Error ? error.message : String(error);
    }
    entry.answerMs = performance.now() - started;
  }

  async settle(): Promise<void> {
    await Promise.all(this.inFlight);
  }
}

/** The fee a landed transaction paid: 5,000 for its signature, its priority fee rounded up, its tip. */
export function feePaid(entry: UserSent): number {
  return LAMPORTS_PER_SIGNATURE + Math.ceil((entry.price * entry.unitLimit) / 1e6) + entry.tip;
}

/** `sendTransaction` through a Slipway gateway, with `key`. */
export function viaGateway(pool: Pool, key: string): Submit {
  let id = 0;
  return async (wire) => {
    const answer = (await postJson(
      pool,
      { jsonrpc: '2.0', id: ++id, method: 'sendTransaction', params: [wire.toString('base64'), { encoding: 'base64' }] },
      { 'x-api-key': key },
    )) as { result?: string; error?: { code: number; message: string } };
    if (answer.error !== undefined) throw new Error(`${answer.error.code}: ${answer.error.message}`);
    return String(answer.result);
  };
}

/**
 * As a user without Slipway sends: `@solana/web3.js`'s `sendRawTransaction` to one RPC node,
 * its defaults (preflight on, the node's own retries).
 */
export function viaWeb3(nodeUrl: string): Submit {
  const connection = new Connection(nodeUrl, 'confirmed');
  return (wire) => connection.sendRawTransaction(wire);
}
