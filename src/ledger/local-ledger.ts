/**
 * The embedded Solana ledger: LiteSVM (real program execution, fees, the system and token
 * programs) plus what LiteSVM leaves out and a cluster has: slots on a timer, a window of
 * the last 150 blockhashes, signature statuses by slot depth, atomic bundles, and
 * persistence across restarts.
 *
 * LiteSVM accepts only its latest blockhash, and would refuse a transaction it has seen
 * before even when that transaction belonged to a bundle that was undone; so its own
 * blockhash check and transaction history are off, and this class keeps both.
 */
import bs58 from 'bs58';
import { LiteSVM } from 'litesvm';
import { Account, FailedTransactionMetadata, type LiteSvm, type TransactionMetadata } from 'litesvm/dist/internal';
import type { ValidatedTransaction } from '../validation/validate-transaction';
import type { WireTransaction } from '../validation/wire-transaction';
import { LeaderSchedule } from './leader-schedule';
import { readSavedLedger, writeSavedLedger, type SavedLedger } from './ledger-state-file';
import { BlockHistory } from './block-history';
import { describeFieldlessError, describeTransactionError, type TransactionErrorJson } from '../core/transaction-error';
import { JITO_TIP_ACCOUNTS } from '../core/jito-tip-accounts';
import { ExposureRecorder, type Exposure, type SubmissionPath } from './exposure';

export { PUBLIC_FORWARD_SLOTS, type Exposure, type SubmissionPath } from './exposure';

/** Solana's MAX_PROCESSING_AGE: a blockhash stays valid for this many blocks. */
export const MAX_PROCESSING_AGE = 150;
/** Slots caught up one by one after a restart: well past MAX_PROCESSING_AGE, so every blockhash handed out before the restart has its true age. */
const MAX_CATCH_UP_SLOTS = 1_000;
/** Depth (in slots) at which a status is reported `confirmed`, then `finalized`. */
export const CONFIRMED_DEPTH = 1;
export const FINALIZED_DEPTH = 32;
/** Statuses kept for `getSignatureStatuses`; older ones are forgotten (as a node's status cache does). */
const MAX_STATUSES = 200_000;
/** Entries of the SlotHashes sysvar, as on a cluster. */
const MAX_SLOT_HASHES = 512;
const MAX_BUNDLES = 50_000;
/** Address lookup tables keep a 56-byte header before their addresses. */
const LOOKUP_TABLE_META_SIZE = 56;
const SYSTEM_PROGRAM = new Uint8Array(32);

/**
 * Errors raised before a transaction executes: a cluster never includes such a transaction
 * in a block, so it gets no status (it is dropped), and no fee is charged.
 */
const NOT_INCLUDED = new Set([
  'AccountNotFound',
  'InsufficientFundsForFee',
  'InvalidAccountForFee',
  'AlreadyProcessed',
  'BlockhashNotFound',
  'SanitizeFailure',
  'AccountLoadedTwice',
  'AddressLookupTableNotFound',
  'InvalidAddressLookupTableOwner',
  'InvalidAddressLookupTableData',
  'InvalidAddressLookupTableIndex',
  'SignatureFailure',
  'UnsupportedVersion',
  'TooManyAccountLocks',
  'MissingSignatureForFee',
  'ProgramAccountNotFound',
  'InvalidProgramForExecution',
]);

export interface LedgerConfig {
  /** Milliseconds per slot; each slot gets a new blockhash. */
  readonly slotMs: number;
  /** Validator identities (base58) of the leader schedule; DEFAULT_VALIDATOR_COUNT derived ones when absent. */
  readonly leaders?: readonly string[];
  /** Identities of the schedule that sandwich: what they see of a transaction is recorded as exposure. */
  readonly sandwichers?: readonly string[];
}

export interface ExecutionOutcome {
  readonly signature: string;
  readonly err: TransactionErrorJson | null;
  /** Agave's display text of `err`, for messages. */
  readonly errText: string | null;
  readonly logs: string[];
  readonly unitsConsumed: number;
  /** False when the cluster would not have included it (no status, no fee). */
  readonly included: boolean;
  /** Balances of its accounts before and after, when it ran (static keys, then loaded writable, then loaded readonly). */
  readonly balances?: { readonly pre: number[]; readonly post: number[]; readonly loaded: { writable: string[]; readonly: string[] } };
}

/** An instruction a program invoked, in the order they ran, with its depth (2: called by a top-level instruction). */
export interface InnerInstructionView {
  readonly programIdIndex: number;
  readonly accounts: Uint8Array;
  readonly data: Uint8Array;
  readonly stackHeight: number;
}

/** A simulation's outcome and what `simulateTransaction` may report of it. */
export interface SimulationOutcome extends ExecutionOutcome {
  /** The transaction's account keys: static, then loaded writable, then loaded readonly. */
  readonly accountKeys: readonly Uint8Array[];
  /** Its accounts as they would be after it, when it succeeded (empty when it failed). */
  readonly postAccounts: readonly { readonly address: Uint8Array; readonly account: AccountView }[];
  /** Per top-level instruction, the instructions it invoked. */
  readonly innerInstructions: readonly (readonly InnerInstructionView[])[];
  /** What the last program to set it returned, or null when none did. */
  readonly returnData: { readonly programId: Uint8Array; readonly data: Uint8Array } | null;
}

export interface SignatureStatus {
  readonly slot: number;
  readonly err: TransactionErrorJson | null;
}

export interface BundleRecord {
  readonly bundleId: string;
  readonly signatures: string[];
  readonly slot: number;
  readonly landed: boolean;
  readonly err: TransactionErrorJson | null;
  /** Why a bundle did not land, in words (null when it landed). */
  readonly reason?: string | null;
}

export type BundleOutcome =
  | { readonly landed: true; readonly slot: number; readonly outcomes: ExecutionOutcome[] }
  | { readonly landed: false; readonly failedIndex: number; readonly outcome: ExecutionOutcome };

export interface AccountView {
  readonly lamports: bigint;
  readonly data: Uint8Array;
  readonly owner: Uint8Array;
  readonly executable: boolean;
  readonly rentEpoch: bigint;
}

export class LocalLedger {
  private slot: number;
  /** Recent blockhashes (base58) → the slot that produced them, oldest first. */
  private readonly blockhashes = new Map<string, number>();
  private readonly statuses = new Map<string, SignatureStatus>();
  private readonly bundles = new Map<string, BundleRecord>();
  /** Every address a transaction or airdrop has touched: what a save must keep (latin1 keys). */
  private readonly touched = new Set<string>();
  private latest: string;
  /**
   * LiteSVM derives each blockhash from the previous one, from a fixed genesis hash, and has
   * no way to set it; a restored ledger derives as many again to continue the same chain,
   * rather than hand out blockhashes that were used before.
   */
  private blockhashCount = 0;
  private timer: NodeJS.Timeout | undefined;
  /** When the state this ledger was restored from was saved (until start() has caught up with the time since). */
  private savedAt: number | undefined;
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

  private constructor(
    private readonly svm: LiteSvm,
    private readonly config: LedgerConfig,
    saved?: SavedLedger,
  ) {
    this.schedule = new LeaderSchedule(config.leaders);
    this.exposures = new ExposureRecorder(this.schedule, config.sandwichers ?? [], MAX_STATUSES);
    if (saved === undefined) {
      this.slot = Number(svm.getClock().slot);
      this.latest = svm.latestBlockhash();
      this.blockhashes.set(this.latest, this.slot);
      this.history.beginSlot(this.slot, this.latest);
      this.createGenesisAccounts();
      return;
    }
    this.slot = saved.slot;
    svm.warpToSlot(BigInt(saved.slot));
    for (let i = 0; i < saved.blockhashCount; i++) svm.expireBlockhash();
    this.blockhashCount = saved.blockhashCount;
    svm.setSlotHashes(saved.slotHashes.map(({ slot, hash }) => ({ slot: BigInt(slot), hash })));
    for (const a of saved.accounts) {
      const address = bs58.decode(a.address);
      svm.setAccount(
        address,
        new Account(BigInt(a.lamports), Buffer.from(a.data, 'base64'), bs58.decode(a.owner), a.executable, BigInt(a.rentEpoch)),
      );
      this.touched.add(Buffer.from(address).toString('latin1'));
    }
    for (const [hash, slot] of saved.blockhashes) this.blockhashes.set(hash, slot);
    this.latest = svm.latestBlockhash();
    this.history.beginSlot(this.slot, this.latest);
    for (const [signature, status] of saved.statuses) this.statuses.set(signature, status as SignatureStatus);
    for (const bundle of saved.bundles) this.bundles.set(bundle.bundleId, bundle as BundleRecord);
    this.journalSeq = saved.journalSeq;
    this.transactionCount = saved.transactionCount ?? this.statuses.size;
    this.savedAt = saved.savedAt;
    // A state saved before they were created at genesis gets them now.
    this.createGenesisAccounts();
  }

  /**
   * Accounts a cluster has from its start: Jito's tip accounts, rent-exempt (as on mainnet,
   * where they exist and hold balances), so that a tip of the minimum lands.
   */
  private createGenesisAccounts(): void {
    const rentExempt = this.svm.minimumBalanceForRentExemption(0n);
    for (const tipAccount of JITO_TIP_ACCOUNTS) {
      const address = bs58.decode(tipAccount);
      if ((this.svm.getAccount(address)?.lamports() ?? 0n) > 0n) continue;
      this.svm.setAccount(address, new Account(rentExempt, new Uint8Array(0), SYSTEM_PROGRAM, false, 0n));
      this.touched.add(Buffer.from(address).toString('latin1'));
    }
  }

  /** A fresh ledger, or the one saved in `dir` by `save`. */
  static open(config: LedgerConfig, dir?: string): LocalLedger {
    const saved = dir === undefined ? undefined : readSavedLedger(dir);
    return new LocalLedger(configure(new LiteSVM()), config, saved);
  }

  /**
   * Starts producing slots; after a restart, first those that would have passed since the
   * state was saved: the chain went on meanwhile. Blockhashes are derived one from the
   * next, so the ones handed out between the save and a crash come round again, with the
   * age they would have had (a transaction signed with one, held or in a client's hands,
   * is still valid if it would have been).
   */
  start(): void {
    if (this.timer !== undefined) return;
    if (this.savedAt !== undefined) {
      const missed = Math.max(0, Math.floor((Date.now() - this.savedAt) / this.config.slotMs));
      // Past MAX_CATCH_UP_SLOTS every blockhash of before has expired: the slot number alone moves on.
      for (let i = 0; i < Math.min(missed, MAX_CATCH_UP_SLOTS); i++) this.advanceSlot();
      if (missed > MAX_CATCH_UP_SLOTS) {
        this.slot += missed - MAX_CATCH_UP_SLOTS;
        this.svm.warpToSlot(BigInt(this.slot));
      }
      this.savedAt = undefined;
    }
    this.timer = setInterval(() => this.advanceSlot(), this.config.slotMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Ends the current slot: the next one has a new blockhash; the oldest falls out of the window. */
  advanceSlot(): void {
    this.slot += 1;
    this.svm.warpToSlot(BigInt(this.slot));
    this.svm.expireBlockhash();
    this.blockhashCount += 1;
    const blockhash = this.svm.latestBlockhash();
    this.latest = blockhash;
    this.blockhashes.set(blockhash, this.slot);
    this.history.beginSlot(this.slot, blockhash);
    // The SlotHashes sysvar lists recent slots, newest first; programs read it (address
    // lookup tables are created against a recent slot), and warping does not update it.
    const slotHashes = this.svm.getSlotHashes().map(({ slot, hash }) => ({ slot, hash }));
    slotHashes.unshift({ slot: BigInt(this.slot), hash: blockhash });
    this.svm.setSlotHashes(slotHashes.slice(0, MAX_SLOT_HASHES));
    for (const [hash, slot] of this.blockhashes) {
      if (this.slot - slot <= MAX_PROCESSING_AGE) break;
      this.blockhashes.delete(hash);
    }
  }

  get currentSlot(): number {
    return this.slot;
  }

  /** Block height equals the slot: the embedded ledger skips no slot. */
  get blockHeight(): number {
    return this.slot;
  }

  latestBlockhash(): { blockhash: string; lastValidBlockHeight: number } {
    return { blockhash: this.latest, lastValidBlockHeight: this.slot + MAX_PROCESSING_AGE };
  }

  isBlockhashValid(blockhash: string): boolean {
    return this.blockhashes.has(blockhash);
  }

  /** Runs the transaction without committing anything (preflight): its outcome. */
  simulate(tx: ValidatedTransaction): ExecutionOutcome {
    const refused = this.checkAdmission(tx);
    if (refused !== undefined) return refused;
    const result = this.simulateOnly(tx);
    return result instanceof FailedTransactionMetadata ? failed(tx.signature, result) : succeeded(tx.signature, result.meta());
  }

  /**
   * `simulateTransaction`: the outcome with what a client may ask for besides (the accounts
   * after, inner instructions, return data). `replaceBlockhash`: the transaction is run as if
   * signed with the latest blockhash, so neither its blockhash nor (its message being another)
   * the status cache is checked, as Agave does.
   */
  simulateInDetail(tx: ValidatedTransaction, options: { replaceBlockhash: boolean }): SimulationOutcome {
    const loaded = this.loadedAddresses(tx.wire);
    const accountKeys = [...tx.wire.staticAccountKeys, ...loaded.writable, ...loaded.readonly];
    const refused = options.replaceBlockhash ? undefined : this.checkAdmission(tx);
    if (refused !== undefined) return { ...refused, accountKeys, postAccounts: [], innerInstructions: [], returnData: null };
    const result = this.simulateOnly(tx);
    if (result instanceof FailedTransactionMetadata)
      return { ...failed(tx.signature, result), accountKeys, postAccounts: [], ...detailsOf(result.meta()) };
    const meta = result.meta();
    const postAccounts = result.postAccounts().map((entry) => ({ address: entry.address, account: viewOf(entry.account()) }));
    return { ...succeeded(tx.signature, meta), accountKeys, postAccounts, ...detailsOf(meta) };
  }

  private simulateOnly(tx: ValidatedTransaction) {
    const bytes = tx.wire.bytes;
    return tx.wire.version === 'legacy' ? this.svm.simulateLegacyTransaction(bytes) : this.svm.simulateVersionedTransaction(bytes);
  }

  /** Executes and commits one transaction, as a leader including it in the current slot would. */
  execute(tx: ValidatedTransaction, options: { replay?: boolean; path?: SubmissionPath } = {}): ExecutionOutcome {
    const refused = this.checkAdmission(tx, options.replay === true);
    if (refused !== undefined) return refused;
    const outcome = this.run(tx);
    if (outcome.included) {
      this.recordStatus(outcome);
      this.recordLanded(tx, outcome);
      this.exposures.record(outcome.signature, options.path ?? 'private', this.slot);
    }
    return outcome;
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
    const landed = this.bundles.get(bundleId);
    if (landed?.landed === true) return { landed: true, slot: landed.slot, outcomes: [] };
    const saved = this.snapshotAccounts(txs);
    const outcomes: ExecutionOutcome[] = [];
    for (const [index, tx] of txs.entries()) {
      const outcome = this.checkAdmission(tx, options.replay === true) ?? this.run(tx);
      if (outcome.err !== null) {
        this.restoreAccounts(saved);
        const reason = `transaction ${index + 1} of ${txs.length} (${tx.signature}) failed: ${outcome.errText}`;
        this.rememberBundle({
          bundleId,
          signatures: txs.map((t) => t.signature),
          slot: this.slot,
          landed: false,
          err: outcome.err,
          reason,
        });
        return { landed: false, failedIndex: index, outcome };
      }
      outcomes.push(outcome);
    }
    outcomes.forEach((outcome, i) => {
      this.recordStatus(outcome);
      this.recordLanded(txs[i]!, outcome);
      this.exposures.record(outcome.signature, 'private', this.slot);
    });
    this.rememberBundle({ bundleId, signatures: txs.map((t) => t.signature), slot: this.slot, landed: true, err: null, reason: null });
    return { landed: true, slot: this.slot, outcomes };
  }

  /** Credits `lamports` to `address` with a real transfer from LiteSVM's faucet; returns its signature. */
  airdrop(address: Uint8Array, lamports: bigint): { signature: string } | { error: string } {
    this.touched.add(Buffer.from(address).toString('latin1'));
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
    this.touched.add(Buffer.from(address).toString('latin1'));
    this.svm.setAccount(address, new Account(account.lamports, account.data, account.owner, false, 0n));
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
    return this.statuses.get(signature);
  }

  getBundle(bundleId: string): BundleRecord | undefined {
    return this.bundles.get(bundleId);
  }

  /** Writes the whole state to `dir` (atomically: a crash mid-save leaves the previous copy). */
  save(dir: string): void {
    const accounts = [];
    for (const key of this.touched) {
      const address = Buffer.from(key, 'latin1');
      const account = this.svm.getAccount(address);
      if (account === null) continue;
      accounts.push({
        address: bs58.encode(address),
        lamports: account.lamports().toString(),
        owner: bs58.encode(account.owner()),
        executable: account.executable(),
        rentEpoch: account.rentEpoch().toString(),
        data: Buffer.from(account.data()).toString('base64'),
      });
    }
    writeSavedLedger(dir, {
      version: 1,
      slot: this.slot,
      blockhashCount: this.blockhashCount,
      blockhashes: [...this.blockhashes],
      slotHashes: this.svm.getSlotHashes().map(({ slot, hash }) => ({ slot: slot.toString(), hash })),
      accounts,
      statuses: [...this.statuses],
      bundles: [...this.bundles.values()],
      journalSeq: this.journalSeq,
      transactionCount: this.transactionCount,
      savedAt: Date.now(),
    });
  }

  /** Refusals a cluster makes before execution: unknown blockhash, already processed. */
  private checkAdmission(tx: ValidatedTransaction, replay = false): ExecutionOutcome | undefined {
    if (this.statuses.has(tx.signature)) return notIncluded(tx.signature, 'AlreadyProcessed');
    if (!replay && !tx.usesDurableNonce && !this.blockhashes.has(bs58.encode(tx.wire.recentBlockhash))) {
      return notIncluded(tx.signature, 'BlockhashNotFound');
    }
    return undefined;
  }

  private run(tx: ValidatedTransaction): ExecutionOutcome {
    const loaded = this.loadedAddresses(tx.wire);
    const accounts = [...tx.wire.staticAccountKeys, ...loaded.writable, ...loaded.readonly];
    for (const address of accounts) this.touched.add(Buffer.from(address).toString('latin1'));
    const balances = () => accounts.map((address) => Number(this.svm.getAccount(address)?.lamports() ?? 0n));
    const pre = balances();
    const bytes = tx.wire.bytes;
    const result = tx.wire.version === 'legacy' ? this.svm.sendLegacyTransaction(bytes) : this.svm.sendVersionedTransaction(bytes);
    const outcome = result instanceof FailedTransactionMetadata ? failed(tx.signature, result) : succeeded(tx.signature, result);
    const encode = (list: Uint8Array[]) => list.map((address) => bs58.encode(address));
    return {
      ...outcome,
      balances: { pre, post: balances(), loaded: { writable: encode(loaded.writable), readonly: encode(loaded.readonly) } },
    };
  }

  private recordLanded(tx: ValidatedTransaction, outcome: ExecutionOutcome): void {
    const { pre, post, loaded } = outcome.balances ?? { pre: [], post: [], loaded: { writable: [], readonly: [] } };
    const sum = (list: number[]) => list.reduce((total, lamports) => total + lamports, 0);
    this.history.record(outcome.signature, {
      slot: this.slot,
      wire: tx.wire.bytes,
      version: tx.wire.version,
      err: outcome.err,
      // Lamports only move between a transaction's own accounts: what they lost together is the fee.
      fee: Math.max(0, sum(pre) - sum(post)),
      preBalances: pre,
      postBalances: post,
      loadedAddresses: loaded,
      logs: outcome.logs,
      unitsConsumed: outcome.unitsConsumed,
    });
  }

  private recordStatus(outcome: ExecutionOutcome): void {
    this.statuses.set(outcome.signature, { slot: this.slot, err: outcome.err });
    this.transactionCount += 1;
    if (this.statuses.size > MAX_STATUSES) this.statuses.delete(this.statuses.keys().next().value!);
  }

  private rememberBundle(record: BundleRecord): void {
    this.bundles.set(record.bundleId, record);
    if (this.bundles.size > MAX_BUNDLES) this.bundles.delete(this.bundles.keys().next().value!);
  }

  /** Every account the transactions can write: static keys and addresses loaded from lookup tables. */
  private snapshotAccounts(txs: readonly ValidatedTransaction[]): Map<string, Account | null> {
    const saved = new Map<string, Account | null>();
    const keep = (address: Uint8Array) => {
      const key = Buffer.from(address).toString('latin1');
      if (!saved.has(key)) saved.set(key, this.svm.getAccount(address));
    };
    for (const tx of txs) {
      for (const key of tx.wire.staticAccountKeys) keep(key);
      for (const address of this.lookupAddresses(tx.wire)) keep(address);
    }
    return saved;
  }

  private restoreAccounts(saved: Map<string, Account | null>): void {
    for (const [key, account] of saved) {
      const address = Buffer.from(key, 'latin1');
      this.svm.setAccount(address, account ?? new Account(0n, new Uint8Array(0), SYSTEM_PROGRAM, false, 0n));
    }
  }

  private lookupAddresses(wire: WireTransaction): Uint8Array[] {
    const loaded = this.loadedAddresses(wire);
    return [...loaded.writable, ...loaded.readonly];
  }

  /** The addresses a v0 transaction loads from lookup tables, in Solana's order: every table's writable ones, then every table's readonly ones. */
  private loadedAddresses(wire: WireTransaction): { writable: Uint8Array[]; readonly: Uint8Array[] } {
    const loaded = { writable: [] as Uint8Array[], readonly: [] as Uint8Array[] };
    for (const lookup of wire.addressTableLookups) {
      const table = this.svm.getAccount(lookup.tableAddress);
      if (table === null) continue;
      const data = table.data();
      const pick = (indexes: Iterable<number>, into: Uint8Array[]) => {
        for (const index of indexes) {
          const start = LOOKUP_TABLE_META_SIZE + index * 32;
          if (start + 32 <= data.length) into.push(data.subarray(start, start + 32));
        }
      };
      pick(lookup.writableIndexes, loaded.writable);
      pick(lookup.readonlyIndexes, loaded.readonly);
    }
    return loaded;
  }
}

function configure(svm: LiteSVM): LiteSvm {
  svm.withSigverify(false).withBlockhashCheck(false).withTransactionHistory(0n);
  return (svm as unknown as { inner: LiteSvm }).inner;
}

function viewOf(account: Account): AccountView {
  return {
    lamports: account.lamports(),
    data: account.data(),
    owner: account.owner(),
    executable: account.executable(),
    rentEpoch: account.rentEpoch(),
  };
}

function detailsOf(meta: TransactionMetadata): Pick<SimulationOutcome, 'innerInstructions' | 'returnData'> {
  const innerInstructions = meta.innerInstructions().map((list) =>
    list.map((inner) => {
      const instruction = inner.instruction();
      return {
        programIdIndex: instruction.programIdIndex(),
        accounts: instruction.accounts(),
        data: instruction.data(),
        stackHeight: inner.stackHeight(),
      };
    }),
  );
  const returned = meta.returnData();
  const data = returned.data();
  return { innerInstructions, returnData: data.length === 0 ? null : { programId: returned.programId(), data } };
}

function succeeded(signature: string, meta: TransactionMetadata): ExecutionOutcome {
  return { signature, err: null, errText: null, logs: meta.logs(), unitsConsumed: Number(meta.computeUnitsConsumed()), included: true };
}

function failed(signature: string, result: FailedTransactionMetadata): ExecutionOutcome {
  const described = describeTransactionError(result.err());
  const meta = result.meta();
  return {
    signature,
    err: described.json,
    errText: described.text,
    logs: meta.logs(),
    unitsConsumed: Number(meta.computeUnitsConsumed()),
    included: typeof described.json !== 'string' || !NOT_INCLUDED.has(described.json),
  };
}

function notIncluded(signature: string, name: 'AlreadyProcessed' | 'BlockhashNotFound'): ExecutionOutcome {
  const described = describeFieldlessError(name);
  return { signature, err: described.json, errText: described.text, logs: [], unitsConsumed: 0, included: false };
}
