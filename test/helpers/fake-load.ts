import type { ThreadLoad } from '../../src/runtime/thread-load';

/** A thread load the test sets and samples by hand. */
export interface FakeLoad extends ThreadLoad {
  busy: number;
  latest: number;
  /** Runs one sample (as the 50 ms timer would). */
  sample(times?: number): void;
}

export function fakeLoad(busy = 0): FakeLoad {
  const listeners: (() => void)[] = [];
  return {
    busy,
    latest: busy,
    onSample: (listener) => void listeners.push(listener),
    sample(times = 1) {
      for (let i = 0; i < times; i++) for (const listener of listeners) listener();
    },
    close: () => {},
  };
}
