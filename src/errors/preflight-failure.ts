import type { SimulationResult } from '../core/rpc-types';
import type { SlipwayError } from './error-catalogue';
import { slipwayError } from './error-catalogue';

/** What a failed simulation reports, from any upstream (or the ledger's own outcome). */
export type FailedSimulation = Pick<SimulationResult, 'err' | 'errText' | 'logs' | 'unitsConsumed'>;

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
