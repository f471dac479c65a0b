/**
 * Which validators may see a protected transaction. A policy lists identities (base58) to
 * deny, to allow, or both: with `allow`, only those are trusted; `deny` always wins. The
 * file form (docs/ANTI_MEV.md):
 *
 *   { "deny": ["<identity>", …], "allow": ["<identity>", …] }
 *
 * A source reads its policy again every `refreshMs` (a file, a URL, or a Yellowstone Shield
 * account: shield-policy.ts), so a change takes effect without a restart. A policy that is
 * missing or invalid makes it unknown at once, with the reason; one that cannot be fetched
 * (a network error) keeps the last good policy until it is `staleMs` old, then it too is
 * unknown: protection then holds (fail closed).
 */
import fs from 'node:fs';
import bs58 from 'bs58';
import { z } from 'zod';
import { urlLabel } from '../runtime/url-label';

export interface ValidatorPolicy {
  allows(identity: string): boolean;
}

export type PolicyView = { readonly known: true; readonly policy: ValidatorPolicy } | { readonly known: false; readonly reason: string };

export interface PolicySource {
  current(): PolicyView;
  close(): void;
}

const identity = z.string().refine((value) => {
  try {
    return bs58.decode(value).length === 32;
  } catch {
    return false;
  }
}, 'must be a validator identity: a base58 public key of 32 bytes');
const policySchema = z.strictObject({ deny: z.array(identity).optional(), allow: z.array(identity).optional() });

/** A policy from its JSON form; throws with the field that is wrong. */
export function parseValidatorPolicy(raw: unknown): ValidatorPolicy {
  const parsed = policySchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new Error(`${issue.path.length === 0 ? '(top level)' : issue.path.join('.')}: ${issue.message}`);
  }
  const deny = new Set(parsed.data.deny ?? []);
  const allow = parsed.data.allow === undefined ? undefined : new Set(parsed.data.allow);
  return { allows: (id) => !deny.has(id) && (allow === undefined || allow.has(id)) };
}

/**
 * A policy read by `load` now and every `refreshMs` after (one read at a time). `what`
 * names it in reasons ("the validator policy /etc/p.json"). A load that throws makes the
 * policy unknown with its message, unless it is a PolicyFetchError and a policy is known;
 * one that has not succeeded for `staleMs` makes it stale.
 */
/** A failure to fetch (not a bad policy): the last good policy stays in force until stale. */
export class PolicyFetchError extends Error {}

export function createPolicySource(
  what: string,
  load: () => ValidatorPolicy | Promise<ValidatorPolicy>,
  options: { refreshMs?: number; staleMs?: number } = {},
): PolicySource {
  const refreshMs = options.refreshMs ?? 5_000;
  const staleMs = options.staleMs ?? Math.max(3 * refreshMs, 30_000);
  let view: PolicyView = { known: false, reason: `${what} has not been read yet` };
  let readAt = 0;
  let reading = false;
  const succeed = (policy: ValidatorPolicy) => {
    view = { known: true, policy };
    readAt = Date.now();
  };
  const failed = (error: unknown) => {
    if (error instanceof PolicyFetchError && view.known) return;
    view = { known: false, reason: `${what} cannot be used: ${error instanceof Error ? error.message : String(error)}` };
  };
  const read = () => {
    if (reading) return;
    try {
      const loaded = load();
      if (!(loaded instanceof Promise)) return succeed(loaded);
      reading = true;
      loaded.then(succeed, failed).finally(() => (reading = false));
    } catch (error) {
      failed(error);
    }
  };
  read();
  const timer = setInterval(read, refreshMs);
  timer.unref();
  return {
    current() {
      if (view.known && Date.now() - readAt > staleMs)
        return { known: false, reason: `${what} is stale (last read ${Date.now() - readAt} ms ago)` };
      return view;
    },
    close: () => clearInterval(timer),
  };
}

export function createFilePolicySource(file: string, options: { refreshMs?: number; staleMs?: number } = {}): PolicySource {
  return createPolicySource(`the validator policy ${file}`, () => parseValidatorPolicy(JSON.parse(fs.readFileSync(file, 'utf8'))), options);
}

/** The same JSON served over http(s); an answer other than 200, or a body that is not the format, makes it unknown. */
export function createUrlPolicySource(
  url: string,
  options: { refreshMs?: number; staleMs?: number; timeoutMs?: number } = {},
): PolicySource {
  const timeoutMs = options.timeoutMs ?? 5_000;
  return createPolicySource(
    `the validator policy at ${urlLabel(url)}`,
    async () => {
      let body: string;
      try {
        const response = await fetch(url, { signal: AbortSignal.timeout(timeoutMs), headers: { accept: 'application/json' } });
        if (response.status !== 200) throw new Error(`HTTP ${response.status}`);
        body = await response.text();
      } catch (error) {
        throw new PolicyFetchError(error instanceof Error ? error.message : String(error));
      }
      return parseValidatorPolicy(JSON.parse(body));
    },
    options,
  );
}
