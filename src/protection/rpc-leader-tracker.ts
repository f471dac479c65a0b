/**
 * The leader tracker over Solana RPC nodes: `getSlot` (processed) every `pollMs`, and
 * `getSlotLeaders` for the next LEADERS_AHEAD slots whenever the slot nears the end of what
 * is known. Knowledge older than `staleMs` (no answer from any node: a partition, a node
 * down) is reported unknown, with the last error: protection holds rather than guesses.
 */
import { JsonRpcClient } from '../upstreams/json-rpc-client';
import { resultOf } from '../upstreams/solana-rpc';
import type { LeaderTracker } from './leader-tracker';

/** Leaders fetched at once: about 10 minutes of mainnet slots would be 1,500; 256 keeps answers small and is refreshed well ahead. */
const LEADERS_AHEAD = 256;

export interface RpcLeaderTrackerOptions {
  readonly urls: readonly string[];
  readonly timeoutMs: number;
  /** How often the slot is asked for (mainnet slots are about 400 ms). */
  readonly pollMs?: number;
  /** How old the last good answer may be before the tracker says it does not know. */
  readonly staleMs?: number;
}

export function createRpcLeaderTracker(options: RpcLeaderTrackerOptions): LeaderTracker {
  const client = new JsonRpcClient({ urls: options.urls, timeoutMs: options.timeoutMs });
  const pollMs = options.pollMs ?? 200;
  const staleMs = options.staleMs ?? 2_000;
  let slot: number | undefined;
  let slotAt = 0;
  /** Leaders from `firstSlot` on. */
  let firstSlot = 0;
  let leaders: string[] = [];
  let lastError = 'no answer yet from the RPC nodes';
  let polling = false;

  const poll = async () => {
    if (polling) return;
    polling = true;
    try {
      const current = resultOf<number>(await client.call('getSlot', [{ commitment: 'processed' }]), 'getSlot');
      if (current < firstSlot || current + LEADERS_AHEAD / 2 > firstSlot + leaders.length) {
        leaders = resultOf<string[]>(await client.call('getSlotLeaders', [current, LEADERS_AHEAD]), 'getSlotLeaders');
        firstSlot = current;
      }
      slot = current;
      slotAt = Date.now();
    } catch (error) {
      lastError = error instanceof Error ? error.message : String(error);
    } finally {
      polling = false;
    }
  };
  void poll();
  const timer = setInterval(() => void poll(), pollMs);
  timer.unref();

  return {
    upcoming(slots) {
      if (slot === undefined) return { known: false, reason: `the leader schedule is unknown: ${lastError}` };
      const age = Date.now() - slotAt;
      if (age > staleMs) return { known: false, reason: `the leader schedule is stale (last slot seen ${age} ms ago): ${lastError}` };
      const from = slot - firstSlot;
      if (from < 0 || from + slots > leaders.length) return { known: false, reason: `the leaders of slots ${slot}–${slot + slots - 1} are not known yet` };
      return { known: true, window: { slot, leaders: leaders.slice(from, from + slots) } };
    },
    async close() {
      clearInterval(timer);
      await client.close();
    },
  };
}
