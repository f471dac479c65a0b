/**
 * Translates LiteSVM's transaction errors into Solana's JSON shape (as `getSignatureStatuses`
 * and `simulateTransaction` report them, e.g. `{"InstructionError":[0,{"Custom":1}]}`) and
 * into Agave's display text (as in "Transaction simulation failed: …").
 */

/** Solana's `TransactionError` in its JSON (serde) form. */
export type TransactionErrorJson = string | Record<string, unknown>;

// Order copied from litesvm's TransactionErrorFieldless / InstructionErrorFieldless enums.
const TRANSACTION_ERRORS = (
  'AccountInUse,AccountLoadedTwice,AccountNotFound,ProgramAccountNotFound,InsufficientFundsForFee,InvalidAccountForFee,' +
  'AlreadyProcessed,BlockhashNotFound,CallChainTooDeep,MissingSignatureForFee,InvalidAccountIndex,SignatureFailure,' +
  'InvalidProgramForExecution,SanitizeFailure,ClusterMaintenance,AccountBorrowOutstanding,WouldExceedMaxBlockCostLimit,' +
  'UnsupportedVersion,InvalidWritableAccount,WouldExceedMaxAccountCostLimit,WouldExceedAccountDataBlockLimit,' +
  'TooManyAccountLocks,AddressLookupTableNotFound,InvalidAddressLookupTableOwner,InvalidAddressLookupTableData,' +
  'InvalidAddressLookupTableIndex,InvalidRentPayingAccount,WouldExceedMaxVoteCostLimit,WouldExceedAccountDataTotalLimit,' +
  'MaxLoadedAccountsDataSizeExceeded,ResanitizationNeeded,InvalidLoadedAccountsDataSizeLimit,UnbalancedTransaction,' +
  'ProgramCacheHitMaxLimit,CommitCancelled'
).split(',');

const INSTRUCTION_ERRORS = (
  'GenericError,InvalidArgument,InvalidInstructionData,InvalidAccountData,AccountDataTooSmall,InsufficientFunds,' +
  'IncorrectProgramId,MissingRequiredSignature,AccountAlreadyInitialized,UninitializedAccount,UnbalancedInstruction,' +
  'ModifiedProgramId,ExternalAccountLamportSpend,ExternalAccountDataModified,ReadonlyLamportChange,ReadonlyDataModified,' +
  'DuplicateAccountIndex,ExecutableModified,RentEpochModified,NotEnoughAccountKeys,AccountDataSizeChanged,' +
  'AccountNotExecutable,AccountBorrowFailed,AccountBorrowOutstanding,DuplicateAccountOutOfSync,InvalidError,' +
  'ExecutableDataModified,ExecutableLamportChange,ExecutableAccountNotRentExempt,UnsupportedProgramId,CallDepth,' +
  'MissingAccount,ReentrancyNotAllowed,MaxSeedLengthExceeded,InvalidSeeds,InvalidRealloc,ComputationalBudgetExceeded,' +
  'PrivilegeEscalation,ProgramEnvironmentSetupFailure,ProgramFailedToComplete,ProgramFailedToCompile,Immutable,' +
  'IncorrectAuthority,AccountNotRentExempt,InvalidAccountOwner,ArithmeticOverflow,UnsupportedSysvar,IllegalOwner,' +
  'MaxAccountsDataAllocationsExceeded,MaxAccountsExceeded,MaxInstructionTraceLengthExceeded,' +
  'BuiltinProgramsMustConsumeComputeUnits,BorshIoError'
).split(',');

/** Agave's Display text for the transaction errors users meet most. */
const TRANSACTION_ERROR_TEXT: Record<string, string> = {
  AccountInUse: 'Account in use',
  AccountLoadedTwice: 'Account loaded twice',
  AccountNotFound: 'Attempt to debit an account but found no record of a prior credit.',
  ProgramAccountNotFound: 'Attempt to load a program that does not exist',
  InsufficientFundsForFee: 'Insufficient funds for fee',
  InvalidAccountForFee: 'This account may not be used to pay transaction fees',
  AlreadyProcessed: 'This transaction has already been processed',
  BlockhashNotFound: 'Blockhash not found',
  InvalidAccountIndex: 'Transaction contains an invalid account reference',
  SignatureFailure: 'Transaction did not pass signature verification',
  InvalidProgramForExecution: 'This program may not be used for executing instructions',
  SanitizeFailure: 'Transaction failed to sanitize accounts offsets correctly',
  AddressLookupTableNotFound: "Transaction loads an address table account that doesn't exist",
  InvalidAddressLookupTableIndex: 'Transaction address table lookup uses an invalid index',
  InvalidRentPayingAccount: 'Transaction leaves an account with a lower balance than rent-exempt minimum',
};

const INSTRUCTION_ERROR_TEXT: Record<string, string> = {
  GenericError: 'generic instruction error',
  InvalidArgument: 'invalid program argument',
  InvalidInstructionData: 'invalid instruction data',
  InvalidAccountData: 'invalid account data for instruction',
  AccountDataTooSmall: 'account data too small for instruction',
  InsufficientFunds: 'insufficient funds for instruction',
  IncorrectProgramId: 'incorrect program id for instruction',
  MissingRequiredSignature: 'missing required signature for instruction',
  AccountAlreadyInitialized: 'instruction requires an uninitialized account',
  UninitializedAccount: 'instruction requires an initialized account',
  NotEnoughAccountKeys: 'insufficient account keys for instruction',
  ComputationalBudgetExceeded: 'Computational budget exceeded',
  ProgramFailedToComplete: 'Program failed to complete',
};

export interface DescribedError {
  readonly json: TransactionErrorJson;
  readonly text: string;
}

/** Describes a transaction error that carries no field, by its name (e.g. `BlockhashNotFound`). */
export function describeFieldlessError(name: string): DescribedError {
  return { json: name, text: describeTransactionErrorJson(name) };
}

/** Converts the value of LiteSVM's `FailedTransactionMetadata.err()`. */
export function describeTransactionError(err: unknown): DescribedError {
  const json = toTransactionErrorJson(err);
  return { json, text: describeTransactionErrorJson(json) };
}

function toTransactionErrorJson(err: unknown): TransactionErrorJson {
  if (typeof err === 'number') return TRANSACTION_ERRORS[err] ?? `TransactionError(${err})`;
  if (err !== null && typeof err === 'object') {
    const e = err as { index?: number; accountIndex?: number; err?: () => unknown };
    if (typeof e.err === 'function' && typeof e.index === 'number') return { InstructionError: [e.index, toInstructionErrorJson(e.err())] };
    if (typeof e.accountIndex === 'number') {
      const name = err.constructor.name.includes('Rent') ? 'InsufficientFundsForRent' : 'ProgramExecutionTemporarilyRestricted';
      return { [name]: { account_index: e.accountIndex } };
    }
    if (typeof e.index === 'number') return { DuplicateInstruction: e.index };
  }
  return String(err);
}

function toInstructionErrorJson(err: unknown): unknown {
  if (typeof err === 'number') return INSTRUCTION_ERRORS[err] ?? `InstructionError(${err})`;
  const custom = err as { code?: number; msg?: string };
  if (typeof custom.code === 'number') return { Custom: custom.code };
  return { BorshIoError: custom.msg ?? String(err) };
}

/**
 * Agave's display text of a transaction error given in its JSON form, as in
 * "Transaction simulation failed: Error processing Instruction 0: custom program error: 0x1".
 */
export function describeTransactionErrorJson(json: TransactionErrorJson): string {
  if (typeof json === 'string') return TRANSACTION_ERROR_TEXT[json] ?? json;
  const [name, value] = Object.entries(json)[0] ?? ['', undefined];
  switch (name) {
    case 'InstructionError': {
      const [index, inner] = value as [number, unknown];
      return `Error processing Instruction ${index}: ${describeInstructionErrorJson(inner)}`;
    }
    case 'InsufficientFundsForRent':
      return `Transaction results in an account (${(value as { account_index: number }).account_index}) with insufficient funds for rent`;
    case 'ProgramExecutionTemporarilyRestricted':
      return `Execution of the program referenced by account at index ${(value as { account_index: number }).account_index} is temporarily restricted.`;
    case 'DuplicateInstruction':
      return `Transaction contains a duplicate instruction (${String(value)}) that is not allowed`;
    default:
      return JSON.stringify(json);
  }
}

function describeInstructionErrorJson(inner: unknown): string {
  if (typeof inner === 'string') return INSTRUCTION_ERROR_TEXT[inner] ?? inner;
  const record = inner as Record<string, unknown>;
  if (typeof record.Custom === 'number') return `custom program error: 0x${record.Custom.toString(16)}`;
  if ('BorshIoError' in record) return `Failed to serialize or deserialize account data: ${String(record.BorshIoError)}`;
  return JSON.stringify(inner);
}
