/** The states a submitted transaction goes through (stores/journal/journal.ts says when each is entered); metrics count by them. */
export type TransactionState = 'held' | 'forwarded' | 'landed' | 'failed' | 'expired' | 'rejected';

/** Every state, in the order the journal log numbers them (new ones go at the end). */
export const TRANSACTION_STATES: readonly TransactionState[] = ['forwarded', 'landed', 'failed', 'expired', 'rejected', 'held'];
