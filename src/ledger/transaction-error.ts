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
  AddressLookupTableNotFound: 'Transaction loads an address table account that doesn\'t exist',
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
  return { json: name, text: TRANSACTION_ERROR_TEXT[name] ?? name };
}

/** Converts the value of LiteSVM's `FailedTransactionMetadata.err()`. */
export function describeTransactionError(err: unknown): DescribedError {
  if (typeof err === 'number') {
    return describeFieldlessError(TRANSACTION_ERRORS[err] ?? `TransactionError(${err})`);
  }
  if (err !== null && typeof err === 'object') {
    const e = err as { index?: number; accountIndex?: number; err?: () => unknown };
    if (typeof e.err === 'function' && typeof e.index === 'number') {
      const inner = describeInstructionError(e.err());
      return { json: { InstructionError: [e.index, inner.json] }, text: `Error processing Instruction ${e.index}: ${inner.text}` };
    }
    if (typeof e.accountIndex === 'number') {
      const name = err.constructor.name.includes('Rent') ? 'InsufficientFundsForRent' : 'ProgramExecutionTemporarilyRestricted';
      const text =
        name === 'InsufficientFundsForRent'
          ? `Transaction results in an account (${e.accountIndex}) with insufficient funds for rent`
          : `Execution of the program referenced by account at index ${e.accountIndex} is temporarily restricted.`;
      return { json: { [name]: { account_index: e.accountIndex } }, text };
    }
    if (typeof e.index === 'number') {
      return { json: { DuplicateInstruction: e.index }, text: `Transaction contains a duplicate instruction (${e.index}) that is not allowed` };
    }
  }
  return { json: String(err), text: String(err) };
}

function describeInstructionError(err: unknown): { json: unknown; text: string } {
  if (typeof err === 'number') {
    const name = INSTRUCTION_ERRORS[err] ?? `InstructionError(${err})`;
    return { json: name, text: INSTRUCTION_ERROR_TEXT[name] ?? name };
  }
  const custom = err as { code?: number; toString(): string };
  if (typeof custom.code === 'number') {
    return { json: { Custom: custom.code }, text: `custom program error: 0x${custom.code.toString(16)}` };
  }
  return { json: { BorshIoError: String(err) }, text: `Failed to serialize or deserialize account data: ${String(err)}` };
}
