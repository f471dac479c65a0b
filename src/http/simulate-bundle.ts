/**
 * The gateway's `simulateBundle` (on `/` and `/api/v1/bundles`), in Jito-Solana's shape:
 * for keys with the bundle permission, counted as a read against the key's rate. The
 * request is parsed and each transaction checked at the edge (encoding, size, sanitize; its
 * signatures are the simulator's to check, as Jito-Solana reports a bad one in the summary),
 * then simulated where the router finds a simulator; the answer is the simulator's.
 */
import { quote } from '../errors/client-text';
import { fail, ok, slipwayError, type Result } from '../errors/error-catalogue';
import type { Router } from '../pipeline/router';
import type { ApiKeyRecord } from '../stores/key-store';
import { bundleSimulationParams, parseBundleSimulationRequest } from '../validation/bundle-simulation-request';
import { validateTransaction } from '../validation/validate-transaction';
import type { RpcAnswer } from '../core/rpc-types';

export async function simulateBundle(router: Router, params: readonly unknown[], key: ApiKeyRecord): Promise<Result<RpcAnswer>> {
  if (!key.bundle)
    return fail(
      slipwayError(
        'FORBIDDEN',
        `API key ${key.id} may not call simulateBundle: bundles are enabled per key (bin/slipway keys set ${key.id} --bundle on)`,
      ),
    );
  const misfit = shapeProblem(params);
  if (misfit !== null) return fail(slipwayError('INVALID_PARAMS', misfit));
  const request = parseBundleSimulationRequest(params);
  if (typeof request === 'string') return fail(slipwayError('INVALID_PARAMS', request));
  const signatures: string[] = [];
  for (const [index, encoded] of request.encodedTransactions.entries()) {
    // Counted from 1, as sendBundle counts its transactions.
    const checked = validateTransaction(encoded, `transaction ${index + 1} (params[0].encodedTransactions[${index}])`, undefined, {
      encoding: request.encoding,
      verifySignatures: false,
    });
    if (!checked.ok) return checked;
    if (signatures.includes(checked.value.signature))
      return fail(slipwayError('INVALID_PARAMS', `the bundle contains transaction ${checked.value.signature} twice`));
    signatures.push(checked.value.signature);
  }
  const { answer, tried } = await router.simulateBundle(bundleSimulationParams(request));
  if (answer === undefined)
    return fail(
      slipwayError(
        'ROUTE_NOT_CONFIGURED',
        `simulateBundle is not available on this gateway: none of its upstreams for bundles and reads (${tried.join(', ')}) simulates bundles; an embedded ledger or a Jito-Solana RPC node does (block engines do not)`,
      ),
    );
  return ok(answer);
}

/** Jito-Solana's RpcSimulateBundleConfig fields (camelCase), and the request object's one. */
const CONFIG_FIELDS = new Set([
  'preExecutionAccountsConfigs',
  'postExecutionAccountsConfigs',
  'transactionEncoding',
  'simulationBank',
  'skipSigVerify',
  'replaceRecentBlockhash',
]);
const REQUEST_FIELDS = new Set(['encodedTransactions']);

/** Too many params, or a field neither object knows (a misspelt one would be ignored, silently): why, or null. */
function shapeProblem(params: readonly unknown[]): string | null {
  if (params.length > 2) return `simulateBundle takes at most 2 params [{"encodedTransactions": [...]}, config?]; got ${params.length}`;
  const [request, config] = params;
  const unknownIn = (value: unknown, known: Set<string>) =>
    value !== null && typeof value === 'object' && !Array.isArray(value) ? Object.keys(value).find((name) => !known.has(name)) : undefined;
  const inRequest = unknownIn(request, REQUEST_FIELDS);
  if (inRequest !== undefined) return `params[0] has an unknown field ${quote(inRequest)}: it takes encodedTransactions only`;
  const inConfig = unknownIn(config, CONFIG_FIELDS);
  if (inConfig !== undefined) return `params[1] has an unknown field ${quote(inConfig)}: it takes ${[...CONFIG_FIELDS].join(', ')}`;
  return null;
}
