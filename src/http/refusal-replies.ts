/**
 * Every refusal the gateway answers, in the shape of its path, counted once here
 * (`slipway_refusals_total`, by kind): JSON-RPC errors on `/` and the Jito paths,
 * `{code, message}` on `/submit-batch`. The shapes themselves are web/json-rpc-envelope.ts's.
 */
import { ERROR_CATALOGUE, type SlipwayError } from '../errors/error-catalogue';
import { refusalsTotal } from '../metrics/metrics';
import { errorReply, errorResponse, retryHeaders, type JsonRpcId, type Reply } from '../web/json-rpc-envelope';

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

/** A refusal in the shape of the path: JSON-RPC on `/` and Jito paths, `{code, message}` on `/submit-batch`, counted. */
export function refuseOnPath(path: string | undefined, error: SlipwayError): Reply {
  countRefusal(error);
  const entry = ERROR_CATALOGUE[error.kind];
  const headers = retryHeaders(error);
  const body = path === '/submit-batch' ? { code: entry.code, message: error.message } : errorResponse(null, error);
  return { status: path === '/submit-batch' ? entry.batchHttp : entry.http, body, ...(headers === undefined ? {} : { headers }) };
}
