/**
 * One timer for every connection of an endpoint: armed for the earliest deadline among
 * them, re-armed only when that deadline changes, never keeping the process alive.
 */
import { performance } from 'node:perf_hooks';

export class DeadlineTimer {
  private timer: NodeJS.Timeout | undefined;
  private at = Infinity;

  constructor(private readonly fire: () => void) {}

  /** Fires at `deadline` (performance.now() time); Infinity disarms. */
  arm(deadline: number): void {
    if (deadline === this.at) return;
    this.clear();
    this.at = deadline;
    if (deadline === Infinity) return;
    this.timer = setTimeout(
      () => {
        this.timer = undefined;
        this.at = Infinity;
        this.fire();
      },
      Math.max(0, deadline - performance.now()),
    );
    this.timer.unref();
  }

  clear(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    this.at = Infinity;
  }
}
