/**
 * Which validators may see a protected transaction. A policy lists identities (base58) to
 * deny, to allow, or both: with `allow`, only those are trusted; `deny` always wins. The
 * file form (docs/ANTI_MEV.md):
 *
 *   { "deny": ["<identity>", …], "allow": ["<identity>", …] }
 *
 * A source re-reads its file every `refreshMs`, so a change takes effect without a restart.
 * A file that is missing, unreadable or invalid makes the policy unknown, with the reason,
 * and so does one not read successfully for `staleMs`: protection then holds (fail closed).
 */
import fs from 'node:fs';
import bs58 from 'bs58';
import { z } from 'zod';

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

export function createFilePolicySource(file: string, options: { refreshMs?: number; staleMs?: number } = {}): PolicySource {
  const refreshMs = options.refreshMs ?? 5_000;
  const staleMs = options.staleMs ?? Math.max(3 * refreshMs, 30_000);
  let view: PolicyView = { known: false, reason: `the validator policy ${file} has not been read yet` };
  let readAt = 0;
  const read = () => {
    try {
      const policy = parseValidatorPolicy(JSON.parse(fs.readFileSync(file, 'utf8')));
      view = { known: true, policy };
      readAt = Date.now();
    } catch (error) {
      view = { known: false, reason: `the validator policy ${file} cannot be used: ${error instanceof Error ? error.message : String(error)}` };
    }
  };
  read();
  const timer = setInterval(read, refreshMs);
  timer.unref();
  return {
    current() {
      if (view.known && Date.now() - readAt > staleMs) return { known: false, reason: `the validator policy ${file} is stale (last read ${Date.now() - readAt} ms ago)` };
      return view;
    },
    close: () => clearInterval(timer),
  };
}
