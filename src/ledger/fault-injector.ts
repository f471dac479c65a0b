/**
 * Faults the standalone ledger node can be told to inject, so that tests (and developers)
 * can watch Slipway's routes fail over, time out and retry against a real socket:
 *
 * - `refuse`: the connection is reset as soon as a request arrives (ECONNRESET);
 * - `error`: HTTP 503 with a plain-text body;
 * - `hang`: the request is read and never answered (until the fault is cleared);
 * - `garbage`: HTTP 200 with bytes that are not JSON;
 * - `half`: HTTP 200 announcing a JSON body, half of it sent, then the connection closed;
 * - `unhealthy`: HTTP 200 with a JSON-RPC error inside (-32005, "Node is unhealthy", as an
 *   Agave node that has fallen behind answers);
 * - `slow`: HTTP 200 headers at once, then the body one byte every 100 ms;
 * - `drop`: sends (sendTransaction, sendBundle) are answered with success and not executed.
 *
 * `rate` (0..1, default 1) is the share of requests affected. Set at start with
 * `--fault MODE[:RATE]`, or at run time with `POST /_faults {"mode": "hang", "rate": 0.5}`
 * (`{"mode": "none"}` clears it; `GET /_faults` reads it).
 */
export const FAULT_MODES = ['none', 'refuse', 'error', 'hang', 'garbage', 'half', 'unhealthy', 'slow', 'drop'] as const;
export type FaultMode = (typeof FAULT_MODES)[number];

export interface FaultSetting {
  readonly mode: FaultMode;
  readonly rate: number;
}

export class FaultInjector {
  private setting: FaultSetting = { mode: 'none', rate: 1 };
  /** Requests held by `hang`, released (destroyed) when the fault changes or the node stops. */
  private readonly hanging = new Set<() => void>();

  constructor(private readonly random: () => number = Math.random) {}

  get current(): FaultSetting {
    return this.setting;
  }

  set(setting: FaultSetting): void {
    this.setting = setting;
    this.releaseHanging();
  }

  /** The transport fault (all but drop) that applies to this request, or 'none'. */
  drawTransportFault(): Exclude<FaultMode, 'drop'> {
    const { mode, rate } = this.setting;
    if (mode === 'none' || mode === 'drop') return 'none';
    return this.random() < rate ? mode : 'none';
  }

  /** Whether this send is to be answered and not executed. */
  shouldDrop(): boolean {
    return this.setting.mode === 'drop' && this.random() < this.setting.rate;
  }

  hold(release: () => void): void {
    this.hanging.add(release);
  }

  releaseHanging(): void {
    for (const release of this.hanging) release();
    this.hanging.clear();
  }
}

/** Parses `MODE[:RATE]` as given to `--fault`, or explains what is wrong. */
export function parseFaultSetting(value: unknown): FaultSetting | string {
  let mode: unknown;
  let rate: unknown = 1;
  if (typeof value === 'string') {
    const [m, r] = value.split(':');
    mode = m;
    if (r !== undefined) rate = Number(r);
  } else if (value !== null && typeof value === 'object') {
    ({ mode, rate = 1 } = value as { mode?: unknown; rate?: unknown });
  }
  if (!FAULT_MODES.includes(mode as FaultMode)) return `fault mode must be one of ${FAULT_MODES.join(', ')}`;
  if (typeof rate !== 'number' || !(rate >= 0 && rate <= 1)) return 'fault rate must be a number from 0 to 1';
  return { mode: mode as FaultMode, rate };
}
