/**
 * A background loop of rounds: one timer, never two rounds at once (a tick while one runs
 * is skipped), and a stop that waits for the round in progress.
 */
export class RoundLoop {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;

  constructor(
    private readonly round: () => Promise<void>,
    private readonly intervalMs: number,
  ) {}

  start(): void {
    if (this.timer !== undefined) return;
    this.timer = setInterval(() => void this.run(), this.intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
  }

  /** A round now, or the one already running. */
  run(): Promise<void> {
    this.running ??= this.round().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }
}
