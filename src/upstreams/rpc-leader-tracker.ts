/**
 * The leader tracker over Solana RPC nodes: `getSlot` (processed) every `pollMs`, and
 * `getSlotLeaders` for the next LEADERS_AHEAD slots whenever the slot nears the end of what
 * is known. Knowledge older than `staleMs` (no answer from any node: a partition, a node
 * down) is reported unknown, with the last error: protection holds rather than guesses.
 *
 * Between polls the chain moves on: the window asked for is lengthened by the slots that
 * may have passed since the slot was seen (its age over the slot time measured from the
 * last polls), so that it still covers every slot a transaction sent now could land in.
 */
import { JsonRpcClient } from './json-rpc-client';
import { resultOf } from './solana-rpc';
import type { LeaderTracker } from './leader-tracker';

/** Leaders fetched at once: about 10 minutes of mainnet slots would be 1,500; 256 keeps answers small and is refreshed well ahead. */
const LEADERS_AHEAD = 256;
/** Mainnet's slot time, assumed until polls have measured this cluster's. */
const DEFAULT_SLOT_MS = 400;
/** Polls kept to measure the slot time. */
const SLOT_SAMPLES = 16;
/** The operator's own nodes answering the gateway's own questions: a leader schedule runs to megabytes. */
const MAX_ANSWER_BYTES = 256 * 1024 * 1024;
/** The measured slot time is taken this much shorter (see slotTime). */
const SLOT_TIME_MARGIN = 0.75;

export interface RpcLeaderTrackerOptions {
  readonly urls: readonly string[];
  readonly timeoutMs: number;
  /** How often the slot is asked for (mainnet slots are about 400 ms). */
  readonly pollMs?: number;
  /** How old the last good answer may be before the tracker says it does not know. */
  readonly staleMs?: number;
}

export function createRpcLeaderTracker(options: RpcLeaderTrackerOptions): LeaderTracker {
  const client = new JsonRpcClient({
    name: 'leader-schedule',
    urls: options.urls,
    timeoutMs: options.timeoutMs,
    maxAnswerBytes: MAX_ANSWER_BYTES,
  });
  const pollMs = options.pollMs ?? 200;
  const staleMs = options.staleMs ?? 2_000;
  let slot: number | undefined;
  let slotAt = 0;
  /** Leaders from `firstSlot` on. */
  let firstSlot = 0;
  let leaders: string[] = [];
  let lastError = 'no answer yet from the RPC nodes';
  let polling = false;
  const samples: { slot: number; at: number }[] = [];
  /**
   * Milliseconds per slot over the kept polls (the default until the slot has moved a few
   * times), erring short: slots come unevenly (a late leader, then a quick one), and a
   * window too long only holds a transaction a little longer, where one too short could
   * send it into an untrusted leader's slot.
   */
  const slotTime = () => {
    const first = samples[0];
    const last = samples[samples.length - 1];
    if (first === undefined || last === undefined || last.slot - first.slot < 4) return DEFAULT_SLOT_MS * SLOT_TIME_MARGIN;
    return ((last.at - first.at) / (last.slot - first.slot)) * SLOT_TIME_MARGIN;
  };

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
      samples.push({ slot, at: slotAt });
      if (samples.length > SLOT_SAMPLES) samples.shift();
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
      const length = slots + Math.ceil(age / slotTime());
      const from = slot - firstSlot;
      if (from < 0 || from + length > leaders.length)
        return { known: false, reason: `the leaders of slots ${slot}–${slot + length - 1} are not known yet` };
      return { known: true, window: { slot, leaders: leaders.slice(from, from + length) } };
    },
    async close() {
      clearInterval(timer);
      await client.close();
    },
  };
}
