/**
 * Reads an engine's own tip floor (`tipFloorUrl`): one GET, bounded in time
 * (FETCH_TIMEOUT_MS, headers and body together) and size (MAX_ANSWER_BYTES, the rest unread),
 * no redirect followed, and the answer's shape checked (tip-floor-shape.ts). Every failure is
 * thrown with a reason that names the URL by its scheme and host only (it may carry a key).
 */
import { Pool } from 'undici';
import { urlLabel } from '../runtime/url-label';
import { parseTipFloorAnswer } from './tip-floor-shape';
import type { TipFloorEntry } from './tip-floor';

/** Jito's answer is about 300 bytes. */
const MAX_ANSWER_BYTES = 16 * 1024;
const FETCH_TIMEOUT_MS = 2_000;

export interface UpstreamTipFloor {
  fetch(): Promise<TipFloorEntry>;
  close(): Promise<void>;
}

export function createUpstreamTipFloor(url: string, timeoutMs = FETCH_TIMEOUT_MS): UpstreamTipFloor {
  const target = new URL(url);
  const label = urlLabel(url);
  const pool = new Pool(target.origin, { connections: 1 });
  const fail = (why: string) => new TipFloorReadError(`the tip floor at ${label}: ${why}`);
  return {
    async fetch() {
      let text: string;
      try {
        const response = await pool.request({
          path: `${target.pathname}${target.search}`,
          method: 'GET',
          headers: { accept: 'application/json' },
          headersTimeout: timeoutMs,
          bodyTimeout: timeoutMs,
          signal: AbortSignal.timeout(timeoutMs),
        });
        if (response.statusCode !== 200) {
          // Not read: dropped. A body destroyed unread emits an error, which must have a listener.
          response.body.on('error', () => {});
          response.body.destroy();
          throw fail(`HTTP ${response.statusCode}`);
        }
        text = await readCapped(response.body);
      } catch (error) {
        if (error instanceof TipFloorReadError) throw error;
        throw fail(timedOut(error) ? `no whole answer within ${timeoutMs} ms` : 'unreachable');
      }
      const entry = parseTipFloorAnswer(text);
      if ('invalid' in entry) throw fail(entry.invalid);
      return entry;
    },
    close: () => pool.close(),
  };

  async function readCapped(body: AsyncIterable<Buffer> & { destroy(): unknown }): Promise<string> {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of body) {
      size += chunk.length;
      if (size > MAX_ANSWER_BYTES) {
        body.destroy();
        throw fail(`the answer is larger than ${MAX_ANSWER_BYTES} bytes`);
      }
      chunks.push(chunk);
    }
    return Buffer.concat(chunks, size).toString('utf8');
  }
}

/** Why the engine's tip floor could not be had, already in words for the log. */
class TipFloorReadError extends Error {}

/** undici's HeadersTimeoutError and BodyTimeoutError, and the abort signal's TimeoutError. */
function timedOut(error: unknown): boolean {
  return error instanceof Error && /Timeout/.test(error.name);
}
