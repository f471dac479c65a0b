import type { TransactionErrorJson } from '../ledger/transaction-error';
import type { SlipwayError } from './error-catalogue';
import { slipwayError } from './error-catalogue';

export interface FailedSimulation {
  readonly err: TransactionErrorJson | null;
  readonly errText: string | null;
  readonly logs: string[];
  readonly unitsConsumed: number;
}

/** Agave's -32002 answer to a failed preflight, with its `data` fields, as clients decode it. */
export function preflightFailure(simulation: FailedSimulation): SlipwayError {
  return slipwayError('PREFLIGHT_FAILURE', `Transaction simulation failed: ${simulation.errText ?? String(simulation.err)}`, {
    accounts: null,
    err: simulation.err,
    innerInstructions: null,
    logs: simulation.logs,
    replacementBlockhash: null,
    returnData: null,
    unitsConsumed: simulation.unitsConsumed,
  });
}
