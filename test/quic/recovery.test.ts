/**
 * Loss recovery's arithmetic (recovery.ts) on inputs a long-lived, busy connection reaches:
 * persistent congestion (RFC 9002 §7.6) over a very long list of lost packets.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isPersistentCongestion, RttEstimator, type SentPacket } from '../../src/quic/recovery';

const lost = (count: number, spanMs: number): SentPacket[] =>
  Array.from({ length: count }, (_, i) => ({
    packetNumber: i,
    timeSent: ((count - i) * spanMs) / count,
    size: 1200,
    ackEliciting: true,
    inFlight: true,
    items: [],
  }));

describe('persistent congestion', () => {
  it('is judged over 500,000 lost packets without a RangeError (no argument spread), first to last sent', () => {
    const rtt = new RttEstimator();
    rtt.update(10, 0);
    // 10 ms smoothed, 5 ms variance: the duration is (10 + 20 + 25) × 3 = 165 ms.
    assert.equal(isPersistentCongestion(lost(500_000, 1_000), rtt, 25), true);
    assert.equal(isPersistentCongestion(lost(500_000, 100), rtt, 25), false);
  });
});
