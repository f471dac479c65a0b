/**
 * What state the machine was in during a run, so that a figure can be judged against the
 * day it was taken: the commit measured, one bare libsodium ed25519 verification (µs, this
 * process, distinct signed messages), and the share of CPU time the host stole over the run.
 */
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import sodium from 'sodium-native';
import { machineTicks } from './proc-cpu';

const ROOT = path.resolve(__dirname, '../..');

/** The full hash of HEAD, and whether the working tree had changes (a run of uncommitted code names no commit truly). */
export function commitMeasured(): { commit: string; dirty: boolean } {
  const git = (...args: string[]) => execFileSync('git', args, { cwd: ROOT, encoding: 'utf8' }).trim();
  return { commit: git('rev-parse', 'HEAD'), dirty: git('status', '--porcelain', '--untracked-files=no') !== '' };
}

/** One bare libsodium verification (crypto_sign_verify_detached) of a transfer-sized message, in µs: the floor Slipway's verification is held against. */
export function libsodiumVerifyMicros(count = 5_000): number {
  const messages = Array.from({ length: count }, (_, i) => {
    const publicKey = Buffer.alloc(sodium.crypto_sign_PUBLICKEYBYTES);
    const secretKey = Buffer.alloc(sodium.crypto_sign_SECRETKEYBYTES);
    sodium.crypto_sign_keypair(publicKey, secretKey);
    const message = Buffer.alloc(215, i % 251); // a legacy transfer's message is about this long
    message.writeUInt32LE(i, 0);
    const signature = Buffer.alloc(sodium.crypto_sign_BYTES);
    sodium.crypto_sign_detached(signature, message, secretKey);
    return { publicKey, message, signature };
  });
  for (const m of messages.slice(0, 500)) sodium.crypto_sign_verify_detached(m.signature, m.message, m.publicKey); // warm
  const started = performance.now();
  let valid = 0;
  for (const m of messages) if (sodium.crypto_sign_verify_detached(m.signature, m.message, m.publicKey)) valid++;
  const micros = ((performance.now() - started) * 1000) / count;
  if (valid !== count) throw new Error('libsodium refused a valid signature');
  return micros;
}

/** Starts counting the host's steal; `stop()` gives the share of all CPU time it took meanwhile (0 to 1). */
export function watchSteal(): { stop(): number } {
  const before = machineTicks();
  return {
    stop() {
      const after = machineTicks();
      const total = after.total - before.total;
      return total === 0 ? 0 : (after.steal - before.steal) / total;
    },
  };
}
