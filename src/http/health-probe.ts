/**
 * What `GET /health` answers: whether the reads upstream answers, asked at most once a
 * second however many health checks arrive. `/health` is unauthenticated and never shed, so
 * an upstream call per request would let anyone flood the operator's RPC node through it
 * (and open the circuit breaker that sends share); concurrent checks share one probe.
 */
export type Health = { readonly ok: true; readonly slot: number } | { readonly ok: false; readonly reason: string };

/** A probe's answer is reused for this long. */
export const HEALTH_PROBE_MS = 1_000;

export function createHealthProbe(getSlot: () => Promise<number>, now: () => number = Date.now): () => Promise<Health> {
  let last: { at: number; health: Health } | undefined;
  let probing: Promise<Health> | undefined;
  return () => {
    if (last !== undefined && now() - last.at < HEALTH_PROBE_MS) return Promise.resolve(last.health);
    probing ??= getSlot()
      .then(
        (slot): Health => ({ ok: true, slot }),
        (error: unknown): Health => ({
          ok: false,
          reason: `the reads upstream cannot be reached: ${error instanceof Error ? error.message : String(error)}`,
        }),
      )
      .then((health) => {
        last = { at: now(), health };
        probing = undefined;
        return health;
      });
    return probing;
  };
}
