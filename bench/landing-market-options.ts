/** `npm run bench:landing`'s flags, read once: `--quick`, `--loads 0.5,2`, `--seconds N`; anything else is refused. */

/** The market's loads, in block capacities: below, at, twice and four times what the blocks hold. */
export const LOADS = [0.5, 1, 2, 4];
/** The market's own bounds (docs/CONFIG.md, market): above 0, at most 16. */
const MAX_LOAD = 16;
const MIN_SECONDS = 5;
const MAX_SECONDS = 600;

export interface LandingOptions {
  readonly quick: boolean;
  readonly loads: readonly number[];
  readonly sendSeconds: number;
  readonly warmSeconds: number;
  readonly maxWaitSeconds: number;
}

/** The options `argv` (the arguments after the script) asks for, or what is wrong with them. */
export function parseLandingOptions(argv: readonly string[]): LandingOptions | string {
  let quick = false;
  let loadsText: string | undefined;
  let secondsText: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i]!;
    if (flag === '--quick') quick = true;
    else if (flag === '--loads' || flag === '--seconds') {
      const value = argv[++i];
      if (value === undefined || value.startsWith('--')) return `${flag} needs a value`;
      if (flag === '--loads') loadsText = value;
      else secondsText = value;
    } else return `unknown argument ${JSON.stringify(flag)}: bench:landing takes --quick, --loads L1,L2,… and --seconds N`;
  }
  const loads =
    loadsText === undefined ? (quick ? [2] : LOADS) : loadsText.split(',').map((text) => (text.trim() === '' ? NaN : Number(text)));
  if (loads.some((load) => !Number.isFinite(load) || load <= 0 || load > MAX_LOAD))
    return `--loads: numbers above 0 and at most ${MAX_LOAD}, comma-separated (got ${JSON.stringify(loadsText)})`;
  if (new Set(loads).size !== loads.length) return `--loads: each load once (got ${JSON.stringify(loadsText)})`;
  const sendSeconds = secondsText === undefined ? (quick ? 20 : 75) : Number(secondsText);
  if (!Number.isInteger(sendSeconds) || sendSeconds < MIN_SECONDS || sendSeconds > MAX_SECONDS)
    return `--seconds: a whole number from ${MIN_SECONDS} to ${MAX_SECONDS} (got ${JSON.stringify(secondsText)})`;
  return { quick, loads, sendSeconds, warmSeconds: quick ? 10 : 20, maxWaitSeconds: quick ? 30 : 60 };
}
