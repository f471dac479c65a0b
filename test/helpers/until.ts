import assert from 'node:assert/strict';

/** Reads `read()` (awaited) every 10 ms until `done` holds of it, and returns it; fails with the last value after `timeoutMs`. */
export async function until<T>(read: () => T | Promise<T>, done: (value: T) => boolean, timeoutMs = 5_000): Promise<T> {
  const started = Date.now();
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    assert.ok(Date.now() - started < timeoutMs, `not reached within ${timeoutMs} ms: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
