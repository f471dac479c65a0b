/**
 * An engine's tip floor answer, checked before it is passed on: Jito's shape (a JSON array
 * whose first element holds `time` and the six figures in SOL), nothing else. The entry passed
 * on is rebuilt with exactly Jito's seven fields in Jito's order, so an upstream's extra
 * fields, or a field that is not what it says, never reach a client. Pure: text in, entry or
 * reason out.
 */
import type { TipFloorEntry } from './tip-floor';

const FIGURES = [
  'landed_tips_25th_percentile',
  'landed_tips_50th_percentile',
  'landed_tips_75th_percentile',
  'landed_tips_95th_percentile',
  'landed_tips_99th_percentile',
  'ema_landed_tips_50th_percentile',
] as const;
/** Longer than any ISO 8601 time: a `time` past it is not one. */
const MAX_TIME_CHARS = 40;
/** More SOL than exists: a figure above it is not a tip. */
const MAX_SOL = 1e9;

/** The entry an engine's tip floor answer holds, or why it holds none (for the operator's log). */
export function parseTipFloorAnswer(text: string): TipFloorEntry | { readonly invalid: string } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { invalid: 'the answer is not JSON' };
  }
  if (!Array.isArray(value)) return { invalid: 'the answer is not a JSON array' };
  const first: unknown = value[0];
  if (first === null || typeof first !== 'object' || Array.isArray(first)) return { invalid: 'the array holds no entry object' };
  const entry = first as Record<string, unknown>;
  const { time } = entry;
  if (typeof time !== 'string' || time.length > MAX_TIME_CHARS || Number.isNaN(Date.parse(time)))
    return { invalid: 'the entry has no time in ISO 8601' };
  const figures: number[] = [];
  for (const name of FIGURES) {
    const figure = entry[name];
    if (typeof figure !== 'number' || !Number.isFinite(figure) || figure < 0 || figure > MAX_SOL)
      return { invalid: `the entry's ${name} is not an amount of SOL` };
    figures.push(figure);
  }
  const [p25, p50, p75, p95, p99, ema] = figures as [number, number, number, number, number, number];
  return {
    time,
    landed_tips_25th_percentile: p25,
    landed_tips_50th_percentile: p50,
    landed_tips_75th_percentile: p75,
    landed_tips_95th_percentile: p95,
    landed_tips_99th_percentile: p99,
    ema_landed_tips_50th_percentile: ema,
  };
}
