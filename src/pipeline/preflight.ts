/** The preflight simulation: on the first upstream of the route that can simulate, failing over to the next. */
import { fail, ok, slipwayError, type Result } from '../errors/error-catalogue';
import type { SimulationResult, Upstream } from '../upstreams/upstream';
import type { ValidatedTransaction } from '../validation/validate-transaction';

export async function preflight(simulators: readonly Upstream[], tx: ValidatedTransaction): Promise<Result<SimulationResult>> {
  const failures: string[] = [];
  for (const simulator of simulators) {
    try {
      return ok(await simulator.simulate(tx));
    } catch (error) {
      failures.push(`${simulator.name}: ${(error as Error).message}`);
    }
  }
  return fail(slipwayError('UPSTREAM_UNAVAILABLE', `the preflight simulation could not run: ${failures.join('; ')}`));
}
