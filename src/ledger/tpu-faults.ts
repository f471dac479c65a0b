/**
 * Faults the local cluster's TPUs can be told to inject, for every validator or one, so
 * that a TPU sender can be watched failing over:
 *
 * - `refuse`: a new connection is refused during its handshake (CONNECTION_REFUSED);
 * - `drop`: transactions are taken (their streams acknowledged) and never executed;
 * - `stall`: every datagram of established connections is dropped (a stalled leader: the
 *   sender's connection idles out);
 * - `retry`: a new connection is sent a Retry first and must prove its address;
 * - `starve`: connections, new and open, are given no more stream credit (a saturated
 *   leader giving an unstaked sender none, as Agave's QoS does); they stay open, and the
 *   credit comes back when the fault is cleared.
 *
 * `rate` (0..1, default 1) is the share of connections refused or transactions dropped;
 * `stall`, `retry` and `starve` take no rate. At start: `--tpu-fault MODE[:RATE][@VALIDATOR],…`; at
 * run time: `POST /_faults {"tpu": {"mode": "stall", "validator": "ID"}}` (without
 * `validator`: every validator, replacing the per-validator ones; `{"mode": "none"}` clears).
 */
export const TPU_FAULT_MODES = ['none', 'refuse', 'drop', 'stall', 'retry', 'starve'] as const;
export type TpuFaultMode = (typeof TPU_FAULT_MODES)[number];

export interface TpuFaultSetting {
  readonly mode: TpuFaultMode;
  readonly rate: number;
  /** One validator's identity; absent: every validator. */
  readonly validator?: string;
}

const NONE: TpuFaultSetting = { mode: 'none', rate: 1 };

export class TpuFaults {
  private all: TpuFaultSetting = NONE;
  private readonly byValidator = new Map<string, TpuFaultSetting>();
  private readonly listeners: (() => void)[] = [];

  constructor(private readonly random: () => number = Math.random) {}

  /** What `GET /_faults` shows: the setting for every validator, and those for one. */
  get current(): { all: TpuFaultSetting; validators: Record<string, TpuFaultSetting> } {
    return {
      all: this.all,
      validators: Object.fromEntries([...this.byValidator].map(([validator, { mode, rate }]) => [validator, { mode, rate }])),
    };
  }

  set(setting: TpuFaultSetting): void {
    const { mode, rate } = setting;
    if (setting.validator === undefined) {
      this.all = { mode, rate };
      this.byValidator.clear();
    } else {
      this.byValidator.set(setting.validator, { mode, rate });
    }
    for (const listener of this.listeners) listener();
  }

  /** Called after every change (the listeners apply `stall` and `starve` to their connections at once). */
  onChange(listener: () => void): void {
    this.listeners.push(listener);
  }

  modeOf(validator: string): TpuFaultMode {
    return (this.byValidator.get(validator) ?? this.all).mode;
  }

  /** Whether this new connection to `validator` is refused. */
  refuses(validator: string): boolean {
    return this.draws(validator, 'refuse');
  }

  /** Whether this transaction received by `validator` is dropped. */
  drops(validator: string): boolean {
    return this.draws(validator, 'drop');
  }

  private draws(validator: string, mode: TpuFaultMode): boolean {
    const setting = this.byValidator.get(validator) ?? this.all;
    return setting.mode === mode && this.random() < setting.rate;
  }
}

/**
 * Parses one TPU fault, as `MODE[:RATE][@VALIDATOR]` (the flag) or
 * `{mode, rate?, validator?}` (the `/_faults` body), or explains what is wrong.
 */
export function parseTpuFaultSetting(value: unknown, validators: readonly string[]): TpuFaultSetting | string {
  let mode: unknown;
  let rate: unknown = 1;
  let validator: unknown;
  if (typeof value === 'string') {
    const [head, at] = value.split('@');
    const [m, r] = head!.split(':');
    mode = m;
    if (r !== undefined) rate = Number(r);
    validator = at;
  } else if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    ({ mode, rate = 1, validator } = value as { mode?: unknown; rate?: unknown; validator?: unknown });
  } else {
    return 'a TPU fault is MODE[:RATE][@VALIDATOR] or {"mode", "rate", "validator"}';
  }
  if (!TPU_FAULT_MODES.includes(mode as TpuFaultMode)) return `TPU fault mode must be one of ${TPU_FAULT_MODES.join(', ')}`;
  if (typeof rate !== 'number' || !(rate >= 0 && rate <= 1)) return 'TPU fault rate must be a number from 0 to 1';
  if (rate !== 1 && (mode === 'stall' || mode === 'retry' || mode === 'starve'))
    return `TPU fault ${mode} takes no rate (only refuse and drop do)`;
  if (validator !== undefined && (typeof validator !== 'string' || !validators.includes(validator)))
    return `TPU fault validator must be one of the leader schedule's identities`;
  return validator === undefined ? { mode: mode as TpuFaultMode, rate } : { mode: mode as TpuFaultMode, rate, validator };
}
