/**
 * The decision anti-MEV protection makes before every send of a protected transaction:
 * send now, or hold, and why. A transaction sent now lands within the safe window (the
 * current slot and the next `windowSlots - 1`: the setting `safeWindowSlots`, whose default
 * is declared once in config/settings.ts), so every leader of that window must be trusted by
 * the policy. Anything not known (the schedule, the policy) holds: protection fails closed.
 * With no policy configured there is nothing to gate on, and the decision says so, for the
 * evidence.
 */
import type { SendEvidence } from '../stores/journal';
import type { SendOptions } from '../core/rpc-types';
import type { LeaderTracker } from '../upstreams/leader-tracker';
import type { PolicySource } from './validator-policy';
import { DEFAULT_SETTINGS } from '../config/settings';

/** The setting's default, read from its one declaration rather than written again here. */
const DEFAULT_WINDOW_SLOTS = DEFAULT_SETTINGS.safeWindowSlots;

export type GateDecision =
  | {
      readonly send: true;
      /** 'policy': every leader of the window is trusted; 'none': no policy is configured. */
      readonly gating: 'policy' | 'none';
      /** The window it is sent in: the current slot and the distinct leaders from it on (when known). */
      readonly slot: number | null;
      /** The slots the window spans from `slot` (0 when the schedule is not known). */
      readonly windowSlots: number;
      readonly leaders: readonly string[];
    }
  | { readonly send: false; readonly reason: string };

export function decideSend(tracker: LeaderTracker, policy: PolicySource | undefined, windowSlots = DEFAULT_WINDOW_SLOTS): GateDecision {
  const view = tracker.upcoming(windowSlots);
  if (policy === undefined) {
    return view.known
      ? {
          send: true,
          gating: 'none',
          slot: view.window.slot,
          windowSlots: view.window.leaders.length,
          leaders: distinct(view.window.leaders),
        }
      : { send: true, gating: 'none', slot: null, windowSlots: 0, leaders: [] };
  }
  const current = policy.current();
  if (!current.known) return { send: false, reason: current.reason };
  if (!view.known) return { send: false, reason: view.reason };
  const { slot, leaders } = view.window;
  const untrusted = leaders.findIndex((leader) => !current.policy.allows(leader));
  if (untrusted >= 0) {
    return { send: false, reason: `the leader of slot ${slot + untrusted}, ${leaders[untrusted]}, is not trusted by the validator policy` };
  }
  return { send: true, gating: 'policy', slot, windowSlots: leaders.length, leaders: distinct(leaders) };
}

function distinct(leaders: readonly string[]): string[] {
  return [...new Set(leaders)];
}

export type SendDecision = Extract<GateDecision, { send: true }>;

/**
 * The send options of a protected transaction sent in `decision`'s window: routes that pick
 * leaders (the TPU) send only to the window's leaders — every one trusted, under a policy.
 */
export function windowOptions<O extends SendOptions>(options: O, decision: SendDecision): O {
  return decision.leaders.length === 0 ? options : { ...options, leaders: decision.leaders };
}

/** The decision bound to this gateway's leader tracker, policy and window size, and the evidence a send leaves. */
export class SafeWindow {
  constructor(
    readonly leaders: LeaderTracker,
    readonly policy: PolicySource | undefined,
    readonly windowSlots = DEFAULT_WINDOW_SLOTS,
  ) {}

  decide(): GateDecision {
    return decideSend(this.leaders, this.policy, this.windowSlots);
  }

  evidence(
    decision: SendDecision,
    route: readonly string[],
    attempt: number,
    heldMs: number,
    heldReason: string | null,
    contacted?: SendEvidence['contacted'],
  ): SendEvidence {
    return {
      ...(contacted === undefined || contacted.length === 0 ? {} : { contacted }),
      at: Date.now(),
      attempt,
      route,
      gating: decision.gating,
      slot: decision.slot,
      windowSlots: decision.windowSlots,
      leaders: decision.leaders,
      heldMs,
      heldReason,
    };
  }

  async close(): Promise<void> {
    this.policy?.close();
    await this.leaders.close();
  }
}
