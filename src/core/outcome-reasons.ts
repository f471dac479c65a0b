/**
 * The catalogue of outcome reasons: why a submission did not land (or landed and failed),
 * machine-readable. Every submission that ends without landing ends with one of these codes,
 * beside its reason in words; clients branch on the code, people read the words; docs/API.md
 * lists them. (Its companion, errors/error-catalogue.ts, is the catalogue of refusals: the
 * JSON-RPC code and HTTP status a refused request is answered with; errors/refusal-reasons.ts
 * gives each refusal its reason here.)
 *
 * The journal keeps the code and the words apart (its `reason_code` and `reason` columns, and
 * fields of their own in its log). Rows and log records written before it did carry no code:
 * their reason is `code: words`, or only words from before the codes existed, and
 * `splitReason` reads those.
 */
export const OUTCOME_REASONS = {
  failed_on_chain: 'it landed and its execution failed (the fee was charged): `err` says why',
  simulation_failed: "a simulation says it fails: the sendTransaction preflight, or a bundle's simulation before sending; nothing was sent",
  tip_below_minimum: 'the bundle pays the block engine less than its minimum tip; nothing was sent',
  blockhash_expired: 'its blockhash expired before it landed; sign it again with a new blockhash',
  engine_rejected: 'the block engine took the bundle or refused it whole, and says why it did not land',
  upstream_unreachable: 'no upstream took it (unreachable, refused or timed out): nothing reached the network',
  dropped_by_network: 'the route took it and says it will not be processed (for example: the fee payer cannot pay)',
  not_landed_unknown: 'not seen landed and no reason given, once rebroadcast stopped or the block engine stopped reporting it',
  held_by_policy: 'held by anti-MEV protection (no safe window of trusted leaders) and never sent before its blockhash expired',
  rate_limited: "refused: over the API key's rate limit; nothing was submitted",
  duplicate: 'refused: the same transaction or bundle was submitted before',
  invalid_request: 'refused at the edge: not a valid, signed transaction or well-formed request; nothing was submitted',
  not_permitted: 'refused: the API key may not do this (bundles are enabled per key)',
  unavailable: 'refused: the gateway could not take it now (overloaded, shutting down, a store or route missing); nothing was submitted',
} as const;

export type OutcomeReason = keyof typeof OUTCOME_REASONS;

const CODE = /^([a-z_]+): ([\s\S]*)$/;

/** Whether `value` is a code of the catalogue. */
export const isOutcomeReason = (value: string): value is OutcomeReason => Object.hasOwn(OUTCOME_REASONS, value);

/**
 * A reason journaled without a code of its own, taken apart: `code: words`, or words alone
 * from before the codes existed, read by the words (and the state).
 */
export function splitReason(reason: string | null, state: string): { code: OutcomeReason | null; words: string | null } {
  if (reason === null) return { code: state === 'failed' ? 'failed_on_chain' : null, words: null };
  const match = CODE.exec(reason);
  if (match !== null && isOutcomeReason(match[1]!)) return { code: match[1], words: match[2]! };
  return { code: legacyCode(reason, state), words: reason };
}

/** Reasons written before the codes: their words were fixed, so they say which code they are. */
function legacyCode(words: string, state: string): OutcomeReason | null {
  if (state === 'failed') return 'failed_on_chain';
  if (state === 'held') return 'held_by_policy';
  if (/^held by anti-MEV protection/.test(words)) return 'held_by_policy';
  if (/blockhash expired/.test(words)) return 'blockhash_expired';
  if (/^no upstream took it/.test(words)) return 'upstream_unreachable';
  if (/^the network dropped it/.test(words)) return 'dropped_by_network';
  if (/^(the bundle did not land|Bundle rejected)/.test(words)) return 'engine_rejected';
  if (state === 'expired') return 'not_landed_unknown';
  return null;
}
