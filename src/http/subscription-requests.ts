/**
 * One WebSocket text frame of Solana's PubSub, parsed and checked before anything acts on
 * it (pure, no I/O): a JSON-RPC 2.0 request object with a method Slipway serves and
 * parameters of the right types. A signature is base58 of exactly 64 bytes, a subscription
 * id a positive integer. Anything else is a refusal naming what was wrong, with the
 * client's text cut short.
 */
import bs58 from 'bs58';
import { describeMethod, type JsonRpcId } from '../web/json-rpc-envelope';

export const COMMITMENT_RANK = { processed: 0, confirmed: 1, finalized: 2 } as const;
export type Commitment = keyof typeof COMMITMENT_RANK;

/** Which events a `submissionSubscribe` streams: one transaction's, one bundle's, or all of the key's; and from where. */
export interface SubmissionFilter {
  readonly signature?: string;
  readonly bundleId?: string;
  /** Resume after this event (the last one the client saw). */
  readonly lastEventId?: string;
}

export type SubscriptionRequest =
  | { readonly method: 'signatureSubscribe'; readonly id: JsonRpcId; readonly signature: string; readonly commitment: Commitment }
  | { readonly method: 'slotSubscribe'; readonly id: JsonRpcId }
  | { readonly method: 'submissionSubscribe'; readonly id: JsonRpcId; readonly filter: SubmissionFilter }
  | {
      readonly method: 'signatureUnsubscribe' | 'slotUnsubscribe' | 'submissionUnsubscribe';
      readonly id: JsonRpcId;
      readonly subscription: number;
    };

export interface SubscriptionRefusal {
  readonly id: JsonRpcId;
  readonly code: -32700 | -32600 | -32601 | -32602;
  readonly message: string;
}

const SIGNATURE_BYTES = 64;
/** Ids are echoed in every answer: a long one is refused rather than sent back. */
const MAX_ID_CHARS = 128;
/** A base58 signature of 64 bytes has 87 or 88 characters; longer text is refused unread. */
const MAX_SIGNATURE_CHARS = 88;

const refuse = (id: JsonRpcId, code: SubscriptionRefusal['code'], message: string): SubscriptionRefusal => ({ id, code, message });

/** The value's JSON type in words, for messages (never the value itself). */
function typeOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

export function parseSubscriptionRequest(text: string): SubscriptionRequest | SubscriptionRefusal {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return refuse(null, -32700, 'Parse error: the message is not JSON');
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    return refuse(null, -32600, `Invalid Request: expected a JSON-RPC 2.0 request object, got ${typeOf(parsed)}`);
  }
  const request = parsed as Record<string, unknown>;
  const rawId = request.id ?? null;
  if (rawId !== null && typeof rawId !== 'number' && typeof rawId !== 'string')
    return refuse(null, -32600, 'Invalid Request: id must be a number, a string or null');
  if (typeof rawId === 'string' && rawId.length > MAX_ID_CHARS)
    return refuse(null, -32600, `Invalid Request: a string id may have at most ${MAX_ID_CHARS} characters`);
  const id: JsonRpcId = rawId;
  if (request.jsonrpc !== '2.0') return refuse(id, -32600, 'Invalid Request: jsonrpc must be "2.0"');
  if (typeof request.method !== 'string')
    return refuse(id, -32600, `Invalid Request: method must be a string, got ${typeOf(request.method)}`);
  const params = request.params ?? [];
  if (!Array.isArray(params)) return refuse(id, -32602, `params must be an array, got ${typeOf(params)}`);
  switch (request.method) {
    case 'signatureSubscribe': {
      const [signature, config] = params as [unknown, unknown];
      if (typeof signature !== 'string')
        return refuse(id, -32602, `params[0] must be a transaction signature (base58 text), got ${typeOf(signature)}`);
      if (!isSignature(signature)) return refuse(id, -32602, 'params[0] is not a transaction signature: base58 text of 64 bytes');
      if (config !== undefined && config !== null && (typeof config !== 'object' || Array.isArray(config))) {
        return refuse(id, -32602, `params[1] must be an object such as {"commitment": "confirmed"}, got ${typeOf(config)}`);
      }
      const commitment = (config as { commitment?: unknown } | null | undefined)?.commitment ?? 'finalized';
      if (typeof commitment !== 'string' || !Object.hasOwn(COMMITMENT_RANK, commitment)) {
        return refuse(id, -32602, 'params[1].commitment must be "processed", "confirmed" or "finalized"');
      }
      return { method: 'signatureSubscribe', id, signature, commitment: commitment as Commitment };
    }
    case 'slotSubscribe':
      return { method: 'slotSubscribe', id };
    case 'submissionSubscribe':
      return parseSubmissionFilter(id, params);
    case 'signatureUnsubscribe':
    case 'slotUnsubscribe':
    case 'submissionUnsubscribe': {
      const subscription = params[0];
      if (typeof subscription !== 'number' || !Number.isSafeInteger(subscription) || subscription < 1) {
        return refuse(id, -32602, 'Invalid subscription id: params[0] must be the number a subscribe call answered');
      }
      return { method: request.method, id, subscription };
    }
    default:
      return refuse(
        id,
        -32601,
        `Method not found: ${describeMethod(request.method)}; this endpoint serves signatureSubscribe, signatureUnsubscribe, slotSubscribe, slotUnsubscribe, submissionSubscribe and submissionUnsubscribe`,
      );
  }
}

const FILTER_FIELDS = ['signature', 'bundleId', 'lastEventId'];

/** `submissionSubscribe`'s params: none or `{}` (all of the key's submissions), or `{signature}` or `{bundleId}`, each with an optional `lastEventId`. */
function parseSubmissionFilter(id: JsonRpcId, params: unknown[]): SubscriptionRequest | SubscriptionRefusal {
  if (params.length > 1) return refuse(id, -32602, 'params takes at most one object, such as {"signature": "…"}');
  const config = params[0] ?? {};
  if (typeof config !== 'object' || config === null || Array.isArray(config))
    return refuse(id, -32602, `params[0] must be an object such as {"signature": "…"} or {}, got ${typeOf(config)}`);
  const fields = config as Record<string, unknown>;
  const unknown = Object.keys(fields).find((field) => !FILTER_FIELDS.includes(field));
  if (unknown !== undefined)
    return refuse(id, -32602, `params[0].${unknown.slice(0, 40)} is not a filter: give signature, bundleId or lastEventId`);
  const { signature, bundleId, lastEventId } = fields;
  if (signature !== undefined && bundleId !== undefined) return refuse(id, -32602, 'params[0] takes a signature or a bundleId, not both');
  if (signature !== undefined && (typeof signature !== 'string' || !isSignature(signature)))
    return refuse(id, -32602, 'params[0].signature is not a transaction signature: base58 text of 64 bytes');
  if (bundleId !== undefined && (typeof bundleId !== 'string' || !/^[0-9a-f]{64}$/.test(bundleId)))
    return refuse(id, -32602, 'params[0].bundleId is not a bundle ID: 64 lowercase hex digits, as sendBundle answers');
  if (lastEventId !== undefined && (typeof lastEventId !== 'string' || !/^evt_[0-9a-f]{32}$/.test(lastEventId)))
    return refuse(id, -32602, 'params[0].lastEventId is not an event id: evt_ and 32 hex digits, as an event carries it');
  return {
    method: 'submissionSubscribe',
    id,
    filter: {
      ...(signature === undefined ? {} : { signature: signature as string }),
      ...(bundleId === undefined ? {} : { bundleId: bundleId as string }),
      ...(lastEventId === undefined ? {} : { lastEventId: lastEventId as string }),
    },
  };
}

export const isSubscriptionRefusal = (value: SubscriptionRequest | SubscriptionRefusal): value is SubscriptionRefusal => 'code' in value;

function isSignature(text: string): boolean {
  if (text.length > MAX_SIGNATURE_CHARS) return false;
  try {
    return bs58.decode(text).length === SIGNATURE_BYTES;
  } catch {
    return false;
  }
}
