/**
 * The tip floor a client reads (`GET /api/v1/bundles/tip_floor` and its stream): Slipway's
 * own (tip-floor.ts, from the bundles it saw land), or, with `tipFloorUrl`, the engine's own,
 * read at most once per REFRESH_MS however many clients ask (they share one read and its
 * answer), and Slipway's own whenever the engine's cannot be read or is not Jito's shape
 * (logged, at most once per read). Nothing here throws to the caller.
 */
import type { TipFloor, TipFloorEntry } from './tip-floor';
import type { UpstreamTipFloor } from './upstream-tip-floor';

const REFRESH_MS = 1_000;

export interface TipFloorReader {
  /** The entry at `nowMs`, or null when none is known (nothing landed in the window, and no engine answered). */
  current(nowMs: number): Promise<TipFloorEntry | null>;
  close(): Promise<void>;
}

/** Slipway's own tip floor. */
export function ownTipFloor(floor: TipFloor): TipFloorReader {
  return { current: async (nowMs) => floor.entry(nowMs), close: async () => {} };
}

/** The engine's tip floor, Slipway's own when it cannot be had. */
export function passedThroughTipFloor(
  own: TipFloor,
  upstream: UpstreamTipFloor,
  warn: (message: string) => void,
  now: () => number = () => Date.now(),
): TipFloorReader {
  let readAt = -Infinity;
  let reading: Promise<TipFloorEntry | null> | undefined;
  const read = async (): Promise<TipFloorEntry | null> => {
    try {
      return await upstream.fetch();
    } catch (error) {
      warn(`${(error as Error).message}; answering Slipway's own tip floor`);
      return null;
    }
  };
  return {
    async current(nowMs) {
      if (reading === undefined || now() - readAt >= REFRESH_MS) {
        readAt = now();
        reading = read();
      }
      return (await reading) ?? own.entry(nowMs);
    },
    close: () => upstream.close(),
  };
}
