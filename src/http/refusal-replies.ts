/**
 * Every refusal the gateway answers, in the shape of its path, counted once here
 * (`slipway_refusals_total`, by kind): JSON-RPC errors on `/` and the Jito JSON-RPC paths,
 * `{code, message}` with an HTTP status on the paths that are not JSON-RPC (`/submit-batch`,
 * the tip floor's). The shapes themselves are web/json-rpc-envelope.ts's.
 */
import { ERROR_CATALOGUE, type SlipwayError } from '../errors/error-catalogue';
import { refusalsTotal } from '../metrics/metrics';
import { errorReply, errorResponse, retryHeaders, type JsonRpcId, type Reply } from '../web/json-rpc-envelope';
import { TIP_FLOOR_PATH, TIP_STREAM_PATH } from './tip-floor-paths';

/** Paths whose refusals are `{code, message}` with the catalogue's `batchHttp` status, not JSON-RPC. */
const PLAIN_PATHS = new Set(['/submit-batch', TIP_FLOOR_PATH, TIP_STREAM_PATH]);

/** Counts a refusal the envelope answered by itself (createJsonRpcEndpoint's `refused`). */
export const countRefusal = (error: SlipwayError): void => {
  refusalsTotal.inc({ kind: error.kind });
};

/** A JSON-RPC error object for one request, counted. */
export function countedErrorResponse(id: JsonRpcId, error: SlipwayError): ReturnType<typeof errorResponse> {
  countRefusal(error);
  return errorResponse(id, error);
}

/** A JSON-RPC refusal of one request with its HTTP status and Retry-After, counted. */
export function refuseJsonRpc(id: JsonRpcId, error: SlipwayError): Reply {
  countRefusal(error);
  return errorReply(id, error);
}

/** A refusal in the shape of the path: JSON-RPC on `/` and Jito's JSON-RPC paths, `{code, message}` on the others, counted. */
export function refuseOnPath(path: string | undefined, error: SlipwayError): Reply {
  countRefusal(error);
  const entry = ERROR_CATALOGUE[error.kind];
  const headers = retryHeaders(error);
  const plain = path !== undefined && PLAIN_PATHS.has(path);
  const body = plain ? { code: entry.code, message: error.message } : errorResponse(null, error);
  return { status: plain ? entry.batchHttp : entry.http, body, ...(headers === undefined ? {} : { headers }) };
}
