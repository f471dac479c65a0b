/** A refusal from the gateway, as a typed object: the code and message the server sent. */
export class SlipwayClientError extends Error {
  override readonly name = 'SlipwayClientError';

  constructor(
    /** The JSON-RPC code (docs/API.md#errors): -32602 invalid params, -32003 signature failure, -32097 rate limited, … */
    readonly code: number,
    message: string,
    /** The HTTP status it came with (200 for most JSON-RPC errors). */
    readonly httpStatus: number,
    /** The error's `data`, when the server sent one (preflight logs, retryAfterMs). */
    readonly data?: unknown,
    /** The request's `x-request-id`: quote it to the gateway's operator. */
    readonly requestId?: string,
  ) {
    super(message);
  }

  /** Whether nothing was submitted and the same request may simply be sent again later (rate limit, over capacity, a store down). */
  get retryable(): boolean {
    return this.code === -32097 || this.code === -32095 || this.code === -32094 || this.code === -32096;
  }
}
