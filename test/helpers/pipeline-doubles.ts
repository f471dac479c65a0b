/**
 * In-memory doubles for building a SubmissionPipeline, Router or LandingTracker directly:
 * a journal that keeps entries in an array, and an upstream that counts what it is asked
 * and answers as told. Transactions are real (signed with real keys, parsed by the
 * validator): only the network and the disk are stood in for.
 */
import { splitReason, type OutcomeReason } from '../../src/core/outcome-reasons';
import { Keypair, SystemProgram, Transaction } from '@solana/web3.js';
import type { RpcAnswer, SendOptions, SignatureStatusView, SimulationResult } from '../../src/core/rpc-types';
import type { TransactionErrorJson } from '../../src/core/transaction-error';
import { HoldQueue } from '../../src/pipeline/hold-queue';
import { RecentTransactions } from '../../src/pipeline/recent-transactions';
import { createRouter, type Router } from '../../src/pipeline/router';
import { createSubmissionPipeline } from '../../src/pipeline/submission-pipeline';
import type { SubmissionPipeline } from '../../src/pipeline/submission-shapes';
import { LandingTracker } from '../../src/pipeline/landing-tracker';
import { SafeWindow } from '../../src/protection/safe-window';
import type { Journal, JournalEntry, LandingGroup, NewSubmission, StateChange } from '../../src/stores/journal';
import type { BundleSendResult, Upstream } from '../../src/upstreams/upstream';
import { validateTransaction, type ValidatedTransaction } from '../../src/validation/validate-transaction';

/** A journal in an array: what the pipeline recorded, and the state changes applied to it. */
export interface MemoryJournal extends Journal {
  readonly entries: JournalEntry[];
}

export function memoryJournal(): MemoryJournal {
  const entries: JournalEntry[] = [];
  const newestFirst = () => [...entries].reverse();
  const mutable = (seq: number, position: number) => {
    const entry = entries.find((e) => e.seq === seq);
    return entry === undefined
      ? undefined
      : (entry.transactions[position] as { -readonly [K in keyof JournalEntry['transactions'][number]]: unknown });
  };
  return {
    entries,
    async record(submission: NewSubmission) {
      const seq = entries.length + 1;
      const now = Date.now();
      entries.push({
        seq,
        kind: submission.kind,
        keyId: submission.keyId,
        antiMev: submission.antiMev,
        bundleId: submission.bundleId,
        routes: submission.routes,
        createdAt: now,
        updatedAt: now,
        transactions: submission.transactions.map((tx, position) => ({
          position,
          signature: tx.signature,
          wire: tx.wire,
          state: tx.state,
          slot: null,
          ...readBack(tx, tx.state),
          error: null,
          attempts: 0,
          landedAt: null,
          slotsToLand: null,
          sends: [],
        })),
      });
      return seq;
    },
    async update(changes: readonly StateChange[]) {
      for (const change of changes) {
        const tx = mutable(change.seq, change.position);
        if (tx === undefined) continue;
        tx.state = change.state;
        if ('slot' in change) tx.slot = (change as { slot?: number | null }).slot ?? null;
        if (change.reason !== undefined) Object.assign(tx, readBack(change, change.state));
        if (change.landedAt !== undefined) tx.landedAt = change.landedAt;
        if (change.slotsToLand !== undefined) tx.slotsToLand = change.slotsToLand;
      }
    },
    async recordSends() {},
    async countAttempts(items) {
      for (const item of items) {
        const tx = mutable(item.seq, item.position);
        if (tx !== undefined) tx.attempts = (tx.attempts as number) + 1;
      }
    },
    async after(seq) {
      return entries.filter((e) => e.seq > seq);
    },
    async since(sinceMs) {
      return entries.filter((e) => e.createdAt >= sinceMs);
    },
    async unfinished() {
      return entries.filter((e) => e.transactions.some((t) => t.state === 'forwarded' || t.state === 'held'));
    },
    async find(id) {
      return newestFirst().filter((e) => e.bundleId === id || e.transactions.some((t) => t.signature === id));
    },
    async list() {
      return newestFirst();
    },
    async lastSeq() {
      return entries.length;
    },
    async landingGroups(query) {
      // As the journals' GROUP BY counts them.
      const groups = new Map<string, { group: LandingGroup; seqs: Set<number> }>();
      for (const e of entries.filter((e) => e.createdAt >= query.sinceMs && (query.keyId === undefined || e.keyId === query.keyId))) {
        for (const tx of e.transactions) {
          const fields = {
            kind: e.kind,
            keyId: e.keyId,
            route: e.routes.join('+'),
            state: tx.state,
            msToLand: tx.landedAt === null ? null : tx.landedAt - e.createdAt,
            slotsToLand: tx.slotsToLand,
          };
          const key = JSON.stringify(fields);
          const found = groups.get(key) ?? { group: { ...fields, transactions: 0, submissions: 0 }, seqs: new Set<number>() };
          found.seqs.add(e.seq);
          found.group = { ...found.group, transactions: found.group.transactions + 1, submissions: found.seqs.size };
          groups.set(key, found);
        }
      }
      return [...groups.values()].map((g) => g.group);
    },
    async outcomes(query) {
      return newestFirst()
        .filter((e) => e.createdAt >= query.sinceMs)
        .flatMap((e) =>
          e.transactions.map((tx) => ({
            seq: e.seq,
            position: tx.position,
            kind: e.kind,
            keyId: e.keyId,
            route: e.routes.join('+'),
            createdAt: e.createdAt,
            signature: tx.signature,
            wire: tx.wire,
            state: tx.state,
            slot: tx.slot,
            slotsToLand: tx.slotsToLand,
          })),
        )
        .slice(0, query.limit);
    },
    async close() {},
  };
}

/** How the upstream answers; each can be changed while a test runs. */
export interface UpstreamBehaviour {
  /** The preflight's error (null: it would succeed). */
  simulateErr: TransactionErrorJson | null;
  /** A status for every signature it was sent (null: not landed). */
  landedSlot: number | null;
}

/** An upstream that counts what it is asked. */
export interface CountingUpstream extends Upstream {
  readonly behaviour: UpstreamBehaviour;
  readonly sent: ValidatedTransaction[];
  readonly simulated: ValidatedTransaction[];
  readonly bundles: string[];
}

export function countingUpstream(name = 'node', kind: Upstream['kind'] = 'rpc'): CountingUpstream {
  const behaviour: UpstreamBehaviour = { simulateErr: null, landedSlot: null };
  const sent: ValidatedTransaction[] = [];
  const simulated: ValidatedTransaction[] = [];
  const bundles: string[] = [];
  return {
    name,
    kind,
    protected: kind !== 'rpc',
    simulates: kind !== 'jito',
    tracked: true,
    behaviour,
    sent,
    simulated,
    bundles,
    async getSlot() {
      return 100;
    },
    async simulate(tx): Promise<SimulationResult> {
      simulated.push(tx);
      const err = behaviour.simulateErr;
      return { err, errText: err === null ? null : JSON.stringify(err), logs: [], unitsConsumed: 150, slot: 100 };
    },
    async sendTransaction(tx, _options: SendOptions) {
      sent.push(tx);
      return { dropped: null };
    },
    async admitBundle() {
      return null;
    },
    async sendBundle(bundleId): Promise<BundleSendResult> {
      bundles.push(bundleId);
      return { accepted: true };
    },
    async call(): Promise<RpcAnswer | undefined> {
      return undefined;
    },
    async getSignatureStatuses(signatures): Promise<(SignatureStatusView | null)[]> {
      const sentSignatures = new Set(sent.map((tx) => tx.signature));
      return signatures.map((s) =>
        behaviour.landedSlot !== null && sentSignatures.has(s)
          ? { slot: behaviour.landedSlot, confirmations: null, err: null, confirmationStatus: 'finalized' }
          : null,
      );
    },
    async getBundleStatuses(ids) {
      return ids.map(() => ({ status: 'Pending' as const, landedSlot: null, reason: null }));
    },
    async isBlockhashValid() {
      return true;
    },
    async close() {},
  };
}

/** A signed transfer, validated as the gateway validates what it receives. */
export function signedTransfer(lamports = 1_000): ValidatedTransaction {
  const payer = Keypair.generate();
  const tx = new Transaction({ feePayer: payer.publicKey, recentBlockhash: Keypair.generate().publicKey.toBase58() }).add(
    SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: Keypair.generate().publicKey, lamports }),
  );
  tx.sign(payer);
  const validated = validateTransaction(tx.serialize().toString('base64'), '');
  if (!validated.ok) throw new Error(validated.error.message);
  return validated.value;
}

export interface PipelineUnderTest {
  readonly pipeline: SubmissionPipeline;
  readonly router: Router;
  readonly journal: MemoryJournal;
  readonly tracker: LandingTracker;
  readonly holds: HoldQueue;
  readonly upstreams: CountingUpstream[];
}

/** A pipeline over `upstreams` (every route goes to all of them; reads to the first), with nothing protected. */
export function pipelineOver(upstreams: CountingUpstream[] = [countingUpstream()]): PipelineUnderTest {
  const names = upstreams.map((u) => u.name);
  const router = createRouter(new Map(upstreams.map((u) => [u.name, u])), {
    sendTransaction: names,
    submitBatch: names,
    sendBundle: names,
    antiMev: [],
    reads: names[0]!,
  });
  const journal = memoryJournal();
  const logError = (error: unknown) => {
    throw error;
  };
  const window = new SafeWindow({ upcoming: () => ({ known: false, reason: 'not used' }), close: async () => {} }, undefined);
  const tracker = new LandingTracker({
    journal,
    reads: router.reads,
    intervalMs: 20,
    maxAttempts: 5,
    capacity: 1_000,
    slotMs: 400,
    logError,
  });
  const holds = new HoldQueue({
    window,
    journal,
    tracker,
    reads: router.reads,
    checkMs: 1_000,
    expiryCheckMs: 1_000,
    maxHoldMs: 10_000,
    logError,
  });
  const pipeline = createSubmissionPipeline({
    router,
    journal,
    recent: new RecentTransactions(120_000, 10_000),
    tracker,
    duplicateTtlMs: 120_000,
    simulateBundles: true,
    initialSeq: 0,
    protection: { window, holds },
  });
  return { pipeline, router, journal, tracker, holds, upstreams };
}

/** As the SQL journals read a reason back (stores/journal/journal-rows.ts): the code and words written, or without a code, as a failure on chain for a failed transaction. */
function readBack(why: { reasonCode?: OutcomeReason | null; reason?: string | null }, state: string) {
  if (why.reasonCode !== undefined && why.reasonCode !== null) return { reason: why.reason ?? null, reasonCode: why.reasonCode };
  const { code, words } = splitReason(why.reason ?? null, state);
  return { reason: words, reasonCode: code };
}
