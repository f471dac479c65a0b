/**
 * One status view for everything submitted through Slipway, answered from the journal
 * plus the upstreams: `getSignatureStatuses` in Solana's shape, `getBundleStatuses` and
 * `getInflightBundleStatuses` in Jito's, and `getSubmissionStatuses`, Slipway's own, which
 * also says why something did not land.
 */
import bs58 from 'bs58';
import type { OutcomeReason } from '../core/outcome-reasons';
import { quote } from '../errors/client-text';
import type { Journal, JournalEntry } from '../stores/journal';
import type { SignatureStatusView } from '../upstreams/upstream';
import type { RecentRefusals } from './recent-refusals';
import type { Router } from './router';
import { describeRefusal, describeSubmission } from './describe-submission';

const MAX_SIGNATURES = 256;
const MAX_BUNDLE_IDS = 5;
const MAX_SUBMISSION_IDS = 256;

export type StatusAnswer = { readonly result: unknown } | { readonly invalid: string };

export interface StatusView {
  getSignatureStatuses(params: readonly unknown[]): Promise<StatusAnswer>;
  getBundleStatuses(params: readonly unknown[]): Promise<StatusAnswer>;
  /** Any bundle's status (its ID is public); why it failed only for the caller's own. */
  getInflightBundleStatuses(params: readonly unknown[], keyId: string): Promise<StatusAnswer>;
  /** Only the caller's own submissions are shown; others read as null. */
  getSubmissionStatuses(params: readonly unknown[], keyId: string): Promise<StatusAnswer>;
  /** One submission (by signature or bundle ID), as getSubmissionStatuses shows it, or null. */
  getSubmission(params: readonly unknown[], keyId: string): Promise<StatusAnswer>;
}

/** A transaction's ID: 64 bytes in base58 (64 to 88 characters). */
const isSignature = (id: string) => id.length >= 64 && id.length <= 88 && bs58.decodeUnsafe(id)?.length === 64;
/** A bundle's ID: its SHA-256 in hex, as the block engine and core/bundle-id.ts write it. */
const isBundleId = (id: string) => /^[0-9a-f]{64}$/i.test(id);

const ENTRIES = {
  signatures: { what: 'base58 signature strings', fits: isSignature, one: 'a base58 signature (64 bytes)' },
  bundleIds: { what: 'bundle ID strings', fits: isBundleId, one: 'a bundle ID (64 hex digits)' },
  either: { what: 'signatures or bundle IDs', fits: (id: string) => isSignature(id) || isBundleId(id), one: 'a signature or a bundle ID' },
} as const;

/** params[0] as a list of at most `max` IDs of one kind, or why it is not one; a config after it must be an object. */
function idList(method: string, params: readonly unknown[], max: number, kind: keyof typeof ENTRIES): string[] | string {
  const { what, fits, one } = ENTRIES[kind];
  const of = `Invalid params: ${method}'s`;
  const value = params[0];
  if (!Array.isArray(value) || value.some((v) => typeof v !== 'string')) return `${of} params[0] must be an array of ${what}`;
  if (value.length > max) return `${of} params[0] has ${value.length} entries; at most ${max}`;
  const wrong = (value as string[]).findIndex((id) => !fits(id));
  if (wrong >= 0) return `${of} params[0][${wrong}] is not ${one}: ${quote(value[wrong])}`;
  if (params.length > 2) return `Invalid params: ${method} takes at most 2 params [ids, config?]; got ${params.length}`;
  const config = params[1];
  if (config !== undefined && config !== null && (typeof config !== 'object' || Array.isArray(config)))
    return `${of} params[1] (config) must be a configuration object; got ${quote(config)}`;
  return value as string[];
}

export function createStatusView(journal: Journal, router: Router, refusals: RecentRefusals): StatusView {
  const context = async () => ({ slot: await router.getSlot().catch(() => 0) });
  /**
   * The entry a public view reads: one where the transaction or bundle is settled (landed or
   * failed on chain) if there is one, else the newest. Landed bytes are public: anyone may
   * send them again once the duplicate window has passed, and the newer, unsettled entry
   * must not hide what happened.
   */
  const publicEntry = async (id: string) => {
    const entries = await journal.find(id);
    const settled = entries.find((entry) => {
      const tx = entry.bundleId === id ? entry.transactions[0] : entry.transactions.find((t) => t.signature === id);
      return tx?.state === 'landed' || tx?.state === 'failed';
    });
    return settled ?? entries[0];
  };
  /** The caller's own newest entry: another key sending the same bytes never takes over what a key sees of its submission. */
  const ownEntry = async (id: string, keyId: string) => (await journal.find(id)).find((entry) => entry.keyId === keyId);

  async function upstreamStatuses(signatures: string[]): Promise<(SignatureStatusView | null)[]> {
    try {
      return await router.reads.getSignatureStatuses(signatures);
    } catch {
      return signatures.map(() => null);
    }
  }

  return {
    async getSignatureStatuses(params) {
      const signatures = idList('getSignatureStatuses', params, MAX_SIGNATURES, 'signatures');
      if (typeof signatures === 'string') return { invalid: signatures };
      const live = await upstreamStatuses(signatures);
      const value = await Promise.all(
        signatures.map(async (signature, i) => {
          const status = live[i] ?? (await journaledStatus(signature));
          return status === null ? null : { ...status, status: status.err === null ? { Ok: null } : { Err: status.err } };
        }),
      );
      return { result: { context: await context(), value } };
    },

    async getBundleStatuses(params) {
      const ids = idList('getBundleStatuses', params, MAX_BUNDLE_IDS, 'bundleIds');
      if (typeof ids === 'string') return { invalid: ids };
      const value = await Promise.all(
        ids.map(async (bundleId) => {
          const entry = await publicEntry(bundleId);
          if (entry === undefined || entry.bundleId !== bundleId) return null;
          const { status, slot } = await bundleStatus(entry, router);
          if (status !== 'Landed') return null;
          const signatures = entry.transactions.map((tx) => tx.signature);
          const first = (await upstreamStatuses([signatures[0]!]))[0];
          return {
            bundle_id: bundleId,
            transactions: signatures,
            slot,
            confirmation_status: first?.confirmationStatus ?? 'finalized',
            err: { Ok: null },
          };
        }),
      );
      return { result: { context: await context(), value } };
    },

    async getInflightBundleStatuses(params, keyId) {
      const ids = idList('getInflightBundleStatuses', params, MAX_BUNDLE_IDS, 'bundleIds');
      if (typeof ids === 'string') return { invalid: ids };
      const value = await Promise.all(
        ids.map(async (bundleId) => {
          const entry = await publicEntry(bundleId);
          if (entry === undefined || entry.bundleId !== bundleId) return { bundle_id: bundleId, status: 'Invalid', landed_slot: null };
          const { status, slot, reason, reasonCode } = await bundleStatus(entry, router);
          // `err` and `reason_code` are not in Jito's shape: they say why a bundle failed, to the key that sent it.
          return status === 'Failed' && entry.keyId === keyId
            ? { bundle_id: bundleId, status, landed_slot: null, err: reason, reason_code: reasonCode }
            : { bundle_id: bundleId, status, landed_slot: slot };
        }),
      );
      return { result: { context: await context(), value } };
    },

    async getSubmissionStatuses(params, keyId) {
      const ids = idList('getSubmissionStatuses', params, MAX_SUBMISSION_IDS, 'either');
      if (typeof ids === 'string') return { invalid: ids };
      const value = await Promise.all(
        ids.map(async (id) => {
          const entry = await ownEntry(id, keyId);
          if (entry === undefined) {
            const refusal = refusals.get(keyId, id);
            return refusal === undefined ? null : describeRefusal(id, refusal);
          }
          return describeSubmission(id, entry);
        }),
      );
      return { result: { context: await context(), value } };
    },

    async getSubmission(params, keyId) {
      if (typeof params[0] !== 'string') return { invalid: 'params[0] must be a signature or bundle ID string' };
      const answer = await this.getSubmissionStatuses([[params[0]]], keyId);
      if (!('result' in answer)) return answer;
      const { context: at, value } = answer.result as { context: unknown; value: unknown[] };
      return { result: { context: at, value: value[0] } };
    },
  };

  /** A status from the journal, for a signature the upstream no longer (or never) reports. */
  async function journaledStatus(signature: string): Promise<SignatureStatusView | null> {
    const entry = await publicEntry(signature);
    const tx = entry?.transactions.find((t) => t.signature === signature);
    if (tx === undefined || tx.slot === null || (tx.state !== 'landed' && tx.state !== 'failed')) return null;
    const err = tx.state === 'failed' ? ((tx.error ?? tx.reason ?? 'failed') as SignatureStatusView['err']) : null;
    return { slot: tx.slot, confirmations: null, err, confirmationStatus: 'finalized' };
  }
}

/** A bundle's state: final ones from the journal, the others as its route reports them now. */
async function bundleStatus(
  entry: JournalEntry,
  router: Router,
): Promise<{ status: 'Pending' | 'Failed' | 'Landed'; slot: number | null; reason: string | null; reasonCode: OutcomeReason | null }> {
  const first = entry.transactions[0]!;
  if (first.state === 'landed') return { status: 'Landed', slot: first.slot, reason: null, reasonCode: null };
  if (first.state === 'rejected' || first.state === 'expired' || first.state === 'failed')
    return { status: 'Failed', slot: null, reason: first.reason, reasonCode: first.reasonCode };
  const upstream = router.byName(entry.routes[0] ?? '');
  const live = await upstream?.getBundleStatuses([entry.bundleId!]).catch(() => undefined);
  const status = live?.[0];
  if (status?.status === 'Landed') return { status: 'Landed', slot: status.landedSlot, reason: null, reasonCode: null };
  // The engine reports it failed; the tracker journals it so at its next round.
  if (status?.status === 'Failed') return { status: 'Failed', slot: null, reason: status.reason, reasonCode: 'engine_rejected' };
  return { status: 'Pending', slot: null, reason: null, reasonCode: null };
}
