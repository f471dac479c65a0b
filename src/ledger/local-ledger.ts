/**
 * The embedded Solana ledger: LiteSVM (real program execution, fees, the system and token
 * programs) plus what LiteSVM leaves out and a cluster has: slots on a timer, a window of
 * the last 150 blockhashes, signature statuses by slot depth, atomic bundles, and
 * persistence across restarts.
 *
 * LiteSVM accepts only its latest blockhash, and would refuse a transaction it has seen
 * before even when that transaction belonged to a bundle that was undone; so its own
 * blockhash check and transaction history are off, and this ledger keeps both (the
 * blockhash window, the status cache). This class composes the pieces, each in its own file,
 * and decides what happens to a transaction: refused, run, recorded, undone with its bundle.
 */
import bs58 from 'bs58';
import { LiteSVM } from 'litesvm';
import { Account, FailedTransactionMetadata, type LiteSvm } from 'litesvm/dist/internal';
import type { ValidatedTransaction } from '../validation/validate-transaction';
import { verifyTransactionSignaturesAsValidators } from '../validation/verify-signatures';
import { simulateBundleOn, type BundleSimulation, type BundleSimulationOptions } from './bundle-simulation';
import { LeaderSchedule } from './leader-schedule';
import { readSavedLedger, writeSavedLedger, type SavedLedger } from './ledger-state-file';
import { BlockHistory } from './block-history';
import { describeTransactionError } from '../core/transaction-error';
import { AccountSnapshot } from './account-snapshot';
import { createGenesisAccounts } from './genesis-accounts';
import { simulateInDetail, simulateOutcome } from './simulation';
import { loadedAddresses } from './lookup-tables';
import { BlockhashWindow, MAX_PROCESSING_AGE } from './blockhash-window';
import { SlotClock } from './slot-clock';
import { MAX_STATUSES, StatusCache, type BundleRecord, type SignatureStatus } from './status-cache';
import { TouchedAccounts } from './touched-accounts';
import { ExposureRecorder, type Exposure, type SubmissionPath } from './exposure';
import { ClusterNodes } from './cluster-nodes';
import { BlockProducer, type ContentionSettings } from './block-producer';
import { TRANSACTION_ACCOUNT_BASE_SIZE, writableStaticIndexes } from '../leader/cost-model';
import type { SlotStats } from '../leader/leader-scheduler';
import {
  failed,
  landedTransaction,
  notIncluded,
  succeeded,
  viewOf,
  type AccountView,
  type BundleOutcome,
  type ExecutionOutcome,
  type SimulationOutcome,
} from './execution-outcome';

export { PUBLIC_FORWARD_SLOTS, type Exposure, type SubmissionPath } from './exposure';
export { MAX_PROCESSING_AGE } from './blockhash-window';
export { CONFIRMED_DEPTH, FINALIZED_DEPTH, type BundleRecord, type SignatureStatus } from './status-cache';
export type { AccountView, BundleOutcome, ExecutionOutcome, InnerInstructionView, SimulationOutcome } from './execution-outcome';

export interface LedgerConfig {
  /** Milliseconds per slot; each slot gets a new blockhash. */
  readonly slotMs: number;
  /** Validator identities (base58) of the leader schedule; DEFAULT_VALIDATOR_COUNT derived ones when absent. */
  readonly leaders?: readonly string[];
  /** Identities of the schedule that sandwich: what they see of a transaction is recorded as exposure. */
  readonly sandwichers?: readonly string[];
  /**
   * Block limits and a scheduler per leader (block-producer.ts); absent, every transaction is
   * executed as it arrives and no block is ever full.
   */
  readonly contention?: ContentionSettings;
  /** Milliseconds on a monotonic clock, for the pacer within a slot (tests give their own). */
  readonly now?: () => number;
}

export class LocalLedger {
  /** The slot and the blockhashes still valid. */
  private readonly window: BlockhashWindow;
  /** What moves the slots on: a timer, and after a restart the slots missed meanwhile. */
  private readonly clock: SlotClock;
  private readonly statuses: StatusCache;
  private readonly touched: TouchedAccounts;
  /** The journal sequence number up to which this state includes submissions. */
  journalSeq = 0;
  /**
   * Called after a change that no journal records (an airdrop), so the owner can save the
   * state at once: crash recovery replays the journal, and would miss it otherwise.
   */
  onUnjournaledChange: () => void = () => {};
  /** Who leads each slot (see leader-schedule.ts). */
  readonly schedule: LeaderSchedule;
  /** Transactions included in a slot so far (`getEpochInfo`'s transactionCount). */
  transactionCount = 0;
  /** Who saw each landed transaction (kept in memory only, as many as the statuses). */
  private readonly exposures: ExposureRecorder;
  /** Recent blocks and landed transactions, for getBlock and getTransaction. */
  readonly history = new BlockHistory();
  /** The validators' addresses, for getClusterNodes (filled in by whoever listens for them). */
  readonly clusterNodes: ClusterNodes;
  /** Called as each slot begins, with its leader (the TPUs include what they hold for it). */
  private readonly slotListeners: ((slot: number, leader: string) => void)[] = [];
  /** Under contention, the leaders' schedulers and the slot's packing; undefined when every transaction runs on arrival. */
  readonly producer: BlockProducer | undefined;

  private constructor(
    private readonly svm: LiteSvm,
    config: LedgerConfig,
    saved?: SavedLedger,
  ) {
    this.schedule = new LeaderSchedule(config.leaders);
    this.exposures = new ExposureRecorder(this.schedule, config.sandwichers ?? [], MAX_STATUSES);
    this.clusterNodes = new ClusterNodes(this.schedule.identities);
    // The window before the accounts: it sets the SlotHashes sysvar, which a transaction may
    // have touched, and the saved account (the sysvar as it was saved) then has the last word.
    this.window = new BlockhashWindow(svm, saved);
    this.touched = new TouchedAccounts(svm, saved?.accounts);
    this.history.beginSlot(this.window.slot, this.window.latest);
    this.statuses = new StatusCache(saved);
    this.journalSeq = saved?.journalSeq ?? 0;
    this.transactionCount = saved?.transactionCount ?? this.statuses.size;
    this.clock = new SlotClock(
      config.slotMs,
      saved?.savedAt,
      () => this.advanceSlot(),
      (slots) => this.window.skip(slots),
    );
    // A state saved before they were created at genesis gets them now.
    createGenesisAccounts(svm, this.touched);
    this.producer = config.contention === undefined ? undefined : new BlockProducer(this, config.contention, config.slotMs, config.now);
    this.producer?.beginSlot(this.window.slot, this.schedule.leaderAt(this.window.slot));
  }

  /** A fresh ledger, or the one saved in `dir` by `save`. */
  static open(config: LedgerConfig, dir?: string): LocalLedger {
    const saved = dir === undefined ? undefined : readSavedLedger(dir);
    return new LocalLedger(configure(new LiteSVM()), config, saved);
  }

  /** Starts producing slots; after a restart, first those missed since the state was saved (see SlotClock). */
  start(): void {
    this.clock.start();
    this.producer?.start();
  }

  stop(): void {
    this.clock.stop();
    this.producer?.stop();
  }

  /** Ends the current slot: the next one has a new blockhash; the oldest falls out of the window. */
  advanceSlot(): void {
    const blockhash = this.window.advance();
    this.history.beginSlot(this.window.slot, blockhash);
    if (this.slotListeners.length === 0 && this.producer === undefined) return;
    const leader = this.schedule.leaderAt(this.window.slot);
    this.producer?.beginSlot(this.window.slot, leader);
    for (const listener of this.slotListeners) listener(this.window.slot, leader);
  }

  /** Calls `listener` as each slot begins (after its blockhash is in the window), with the slot's leader. */
  onSlot(listener: (slot: number, leader: string) => void): void {
    this.slotListeners.push(listener);
  }

  get currentSlot(): number {
    return this.window.slot;
  }

  /** Block height equals the slot: the embedded ledger skips no slot. */
  get blockHeight(): number {
    return this.window.slot;
  }

  latestBlockhash(): { blockhash: string; lastValidBlockHeight: number } {
    return { blockhash: this.window.latest, lastValidBlockHeight: this.window.slot + MAX_PROCESSING_AGE };
  }

  isBlockhashValid(blockhash: string): boolean {
    return this.window.has(blockhash);
  }

  /** Runs the transaction without committing anything (preflight): its outcome. */
  simulate(tx: ValidatedTransaction): ExecutionOutcome {
    return this.checkAdmission(tx) ?? simulateOutcome(this.svm, tx);
  }

  /**
   * `simulateTransaction`: the outcome with what a client may ask for besides (the accounts
   * after, inner instructions, return data). `replaceBlockhash`: the transaction is run as if
   * signed with the latest blockhash, so neither its blockhash nor (its message being another)
   * the status cache is checked, as Agave does.
   */
  simulateInDetail(tx: ValidatedTransaction, options: { replaceBlockhash: boolean }): SimulationOutcome {
    return simulateInDetail(this.svm, tx, options.replaceBlockhash ? undefined : this.checkAdmission(tx));
  }

  /**
   * `simulateBundle`: the transactions in order, each on the state the previous ones left,
   * nothing committed (bundle-simulation.ts). `replaceBlockhash`: blockhashes and the status
   * cache are not checked; `verifySignatures`: a transaction whose signatures do not verify
   * fails with SignatureFailure.
   */
  simulateBundle(
    txs: readonly ValidatedTransaction[],
    options: BundleSimulationOptions & { readonly replaceBlockhash: boolean; readonly verifySignatures: boolean },
  ): BundleSimulation {
    return simulateBundleOn(this.svm, txs, options, (tx) => {
      // The validators' rule (libsodium's, cofactorless), not the gateway's: the ledger stands in for them.
      if (options.verifySignatures && !verifyTransactionSignaturesAsValidators(tx.wire).valid)
        return notIncluded(tx.signature, 'SignatureFailure');
      return options.replaceBlockhash ? undefined : this.checkAdmission(tx);
    });
  }

  /**
   * A transaction reaches the cluster by `path` (`validator`: the TPU that received it).
   * Without contention it is executed at once, and its outcome answered; under contention a
   * transaction the cluster would refuse (already processed, unknown blockhash) is answered
   * so, and any other goes to the leaders' schedulers (undefined).
   */
  receive(tx: ValidatedTransaction, options: { path: SubmissionPath; validator?: string }): ExecutionOutcome | undefined {
    if (this.producer === undefined) return this.execute(tx, { path: options.path });
    const refused = this.checkAdmission(tx);
    if (refused !== undefined) return refused;
    this.producer.receive(tx, options.path, options.validator);
    return undefined;
  }

  /**
   * A bundle reaches the block engine. Without contention it is executed at once, and its
   * fate answered; under contention it bids in the engine's auctions (undefined: pending),
   * unless one of its transactions would be refused or its tip is under the engine's minimum
   * (`refused`: why).
   */
  receiveBundle(bundleId: string, txs: readonly ValidatedTransaction[]): BundleOutcome | { readonly refused: string } | undefined {
    if (this.producer === undefined || this.statuses.bundle(bundleId)?.landed === true) return this.executeBundle(bundleId, txs);
    if (this.producer.bundlePending(bundleId)) return undefined;
    for (const [index, tx] of txs.entries()) {
      const refused = this.checkAdmission(tx);
      if (refused !== undefined) return this.executeBundle(bundleId, txs.slice(0, index + 1));
    }
    const unfit = this.producer.receiveBundle(bundleId, txs);
    if (unfit === null) return undefined;
    this.failBundle(bundleId, txs, unfit);
    return { refused: unfit };
  }

  /** Whether a bundle is bidding in the engine's auctions (under contention). */
  bundlePending(bundleId: string): boolean {
    return this.producer?.bundlePending(bundleId) ?? false;
  }

  /** Records that a bundle will not land, and why (it lost the engine's auction, its tip is too small). */
  failBundle(bundleId: string, txs: readonly ValidatedTransaction[], reason: string): void {
    this.statuses.rememberBundle({
      bundleId,
      signatures: txs.map((t) => t.signature),
      slot: this.window.slot,
      landed: false,
      err: null,
      reason,
    });
  }

  /** The figures of a slot's production under contention (undefined without, or once forgotten). */
  slotStats(slot: number): Readonly<SlotStats> | undefined {
    return this.producer?.slotStats(slot);
  }

  /** The accounts a transaction locks for writing (static ones as Agave demotes them, and those loaded through lookup tables), as keys. */
  writeAccounts(tx: ValidatedTransaction): string[] {
    const keys = writableStaticIndexes(tx.wire).map((index) => tx.wire.staticAccountKeys[index]!.toString('latin1'));
    if (tx.wire.addressTableLookups.length > 0) {
      for (const address of loadedAddresses(this.svm, tx.wire).writable) keys.push(Buffer.from(address).toString('latin1'));
    }
    return [...new Set(keys)];
  }

  /** Why a transaction can no longer land (its blockhash left the window, it was processed), or null. */
  staleness(tx: ValidatedTransaction): 'expired' | 'alreadyProcessed' | null {
    if (this.statuses.has(tx.signature)) return 'alreadyProcessed';
    if (!tx.usesDurableNonce && !this.window.has(bs58.encode(tx.wire.recentBlockhash))) return 'expired';
    return null;
  }

  /** Executes and commits one transaction, as a leader including it in the current slot would. */
  execute(tx: ValidatedTransaction, options: { replay?: boolean; path?: SubmissionPath } = {}): ExecutionOutcome {
    const refused = this.checkAdmission(tx, options.replay === true);
    if (refused !== undefined) return refused;
    const outcome = this.run(tx);
    if (outcome.included) {
      this.recordStatus(outcome);
      this.history.record(outcome.signature, landedTransaction(tx, outcome, this.window.slot));
      this.exposures.record(outcome.signature, options.path ?? 'private', this.window.slot);
    }
    return outcome;
  }

  /** Records that `validator`'s TPU received `signature` from `sender` (base58), landed or not: part of its exposure. */
  noteTpuReceipt(signature: string, validator: string, sender: string): void {
    this.exposures.noteTpuReceipt(signature, validator, sender);
  }

  /** Who saw a landed transaction (undefined: not landed here, or forgotten). */
  getExposure(signature: string): Exposure | undefined {
    return this.exposures.of(signature);
  }

  /**
   * Executes the transactions in order, all or nothing: when one fails, every account the
   * bundle could have written is put back as it was and none of its transactions gets a status.
   */
  executeBundle(bundleId: string, txs: readonly ValidatedTransaction[], options: { replay?: boolean } = {}): BundleOutcome {
    // The same bundle again after it landed (a resend whose first answer was lost): it stays
    // landed, as a block engine reports it, rather than failing as already processed.
    const landed = this.statuses.bundle(bundleId);
    if (landed?.landed === true) return { landed: true, slot: landed.slot, outcomes: [] };
    const saved = AccountSnapshot.of(this.svm, txs);
    const remember = (fate: Pick<BundleRecord, 'landed' | 'err' | 'reason'>) =>
      this.statuses.rememberBundle({ bundleId, signatures: txs.map((t) => t.signature), slot: this.window.slot, ...fate });
    const outcomes: ExecutionOutcome[] = [];
    for (const [index, tx] of txs.entries()) {
      const outcome = this.checkAdmission(tx, options.replay === true) ?? this.run(tx);
      if (outcome.err !== null) {
        saved.restore();
        const reason = `transaction ${index + 1} of ${txs.length} (${tx.signature}) failed: ${outcome.errText}`;
        remember({ landed: false, err: outcome.err, reason });
        return { landed: false, failedIndex: index, outcome };
      }
      outcomes.push(outcome);
    }
    outcomes.forEach((outcome, i) => {
      this.recordStatus(outcome);
      this.history.record(outcome.signature, landedTransaction(txs[i]!, outcome, this.window.slot));
      this.exposures.record(outcome.signature, 'private', this.window.slot);
    });
    remember({ landed: true, err: null, reason: null });
    return { landed: true, slot: this.window.slot, outcomes };
  }

  /** Credits `lamports` to `address` with a real transfer from LiteSVM's faucet; returns its signature. */
  airdrop(address: Uint8Array, lamports: bigint): { signature: string } | { error: string } {
    this.touched.touch(address);
    const result = this.svm.airdrop(address, lamports);
    if (result === null) return { error: 'the faucet could not make the transfer' };
    if (result instanceof FailedTransactionMetadata) return { error: describeTransactionError(result.err()).text };
    const signature = bs58.encode(result.signature());
    this.recordStatus({ signature, err: null, errText: null, logs: [], unitsConsumed: 0, included: true });
    this.onUnjournaledChange();
    return { signature };
  }

  /**
   * Puts an account in place, as solana-test-validator's `--account` does: for state of
   * programs not loaded here, such as a Yellowstone Shield policy.
   */
  loadAccount(address: Uint8Array, account: { lamports: bigint; data: Uint8Array; owner: Uint8Array }): void {
    this.touched.touch(address);
    this.svm.setAccount(address, new Account(account.lamports, account.data, account.owner, false, 0n));
    this.onUnjournaledChange();
  }

  /** Gives each address `lamports` (a system account), as a genesis config funds accounts: the local market's wallets. */
  fundAccounts(addresses: readonly Uint8Array[], lamports: bigint): void {
    for (const address of addresses) {
      this.touched.touch(address);
      this.svm.setAccount(address, new Account(lamports, new Uint8Array(0), new Uint8Array(32), false, 0n));
    }
    this.onUnjournaledChange();
  }

  getAccount(address: Uint8Array): AccountView | null {
    const account = this.svm.getAccount(address);
    return account === null || account.lamports() === 0n ? null : viewOf(account);
  }

  minimumBalanceForRentExemption(dataLength: number): bigint {
    return this.svm.minimumBalanceForRentExemption(BigInt(dataLength));
  }

  getSignatureStatus(signature: string): SignatureStatus | undefined {
    return this.statuses.status(signature);
  }

  getBundle(bundleId: string): BundleRecord | undefined {
    return this.statuses.bundle(bundleId);
  }

  /** Writes the whole state to `dir` (atomically: a crash mid-save leaves the previous copy). */
  save(dir: string): void {
    writeSavedLedger(dir, {
      version: 1,
      ...this.window.saved(),
      accounts: this.touched.saved(),
      ...this.statuses.saved(),
      journalSeq: this.journalSeq,
      transactionCount: this.transactionCount,
      savedAt: Date.now(),
    });
  }

  /** Refusals a cluster makes before execution: unknown blockhash, already processed. */
  private checkAdmission(tx: ValidatedTransaction, replay = false): ExecutionOutcome | undefined {
    if (this.statuses.has(tx.signature)) return notIncluded(tx.signature, 'AlreadyProcessed');
    if (!replay && !tx.usesDurableNonce && !this.window.has(bs58.encode(tx.wire.recentBlockhash))) {
      return notIncluded(tx.signature, 'BlockhashNotFound');
    }
    return undefined;
  }

  private run(tx: ValidatedTransaction): ExecutionOutcome {
    const loaded = loadedAddresses(this.svm, tx.wire);
    const accounts = [...tx.wire.staticAccountKeys, ...loaded.writable, ...loaded.readonly];
    for (const address of accounts) this.touched.touch(address);
    const balances = () => accounts.map((address) => Number(this.svm.getAccount(address)?.lamports() ?? 0n));
    // The account data it loads counts against the block only under contention; reading it copies each account's data, so only then.
    const measure = this.producer !== undefined;
    let loadedAccountsBytes = 0;
    const pre = accounts.map((address) => {
      const account = this.svm.getAccount(address);
      if (measure) loadedAccountsBytes += (account?.data().length ?? 0) + TRANSACTION_ACCOUNT_BASE_SIZE;
      return Number(account?.lamports() ?? 0n);
    });
    const bytes = tx.wire.bytes;
    const result = tx.wire.version === 'legacy' ? this.svm.sendLegacyTransaction(bytes) : this.svm.sendVersionedTransaction(bytes);
    const outcome = result instanceof FailedTransactionMetadata ? failed(tx.signature, result) : succeeded(tx.signature, result);
    const encode = (list: Uint8Array[]) => list.map((address) => bs58.encode(address));
    return {
      ...outcome,
      balances: { pre, post: balances(), loaded: { writable: encode(loaded.writable), readonly: encode(loaded.readonly) } },
      loadedAccountsBytes: measure ? loadedAccountsBytes : undefined,
    };
  }

  private recordStatus(outcome: ExecutionOutcome): void {
    this.statuses.record(outcome.signature, { slot: this.window.slot, err: outcome.err });
    this.transactionCount += 1;
  }
}

function configure(svm: LiteSVM): LiteSvm {
  svm.withSigverify(false).withBlockhashCheck(false).withTransactionHistory(0n);
  return (svm as unknown as { inner: LiteSvm }).inner;
}
