import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Keypair } from '@solana/web3.js';
import type { LeaderTracker, LeaderView } from '../../src/upstreams/leader-tracker';
import { decideSend } from '../../src/protection/safe-window';
import { parseValidatorPolicy, type PolicySource, type PolicyView } from '../../src/protection/validator-policy';
import client from 'prom-client';
import '../../src/metrics/metrics';

const [good, bad, other] = [Keypair.generate(), Keypair.generate(), Keypair.generate()].map((k) => k.publicKey.toBase58()) as [
  string,
  string,
  string,
];
const tracker = (view: LeaderView): LeaderTracker => ({ upcoming: () => view, close: async () => {} });
const schedule = (...leaders: string[]): LeaderTracker => tracker({ known: true, window: { slot: 100, leaders } });
const policy = (view: PolicyView): PolicySource => ({ current: () => view, close: () => {} });
const denyBad = policy({ known: true, policy: parseValidatorPolicy({ deny: [bad] }) });

describe('safe window', () => {
  it('sends while every leader of the window is trusted, and holds naming the first that is not', () => {
    const window = [good, good, good, good, other, other, other, other];
    assert.deepEqual(decideSend(schedule(...window), denyBad), {
      send: true,
      gating: 'policy',
      slot: 100,
      windowSlots: 8,
      leaders: [good, other],
    });
    const later = [good, good, good, good, bad, bad, bad, bad];
    assert.deepEqual(decideSend(schedule(...later), denyBad), {
      send: false,
      reason: `the leader of slot 104, ${bad}, is not trusted by the validator policy`,
    });
  });

  it('fails closed: an unknown schedule or policy holds, saying why', () => {
    const unknownSchedule = tracker({
      known: false,
      reason: 'the leader schedule is stale (last slot seen 2500 ms ago): connection refused',
    });
    assert.deepEqual(decideSend(unknownSchedule, denyBad), {
      send: false,
      reason: 'the leader schedule is stale (last slot seen 2500 ms ago): connection refused',
    });
    const unreadable = policy({ known: false, reason: 'the validator policy /etc/p.json cannot be used: ENOENT' });
    assert.deepEqual(decideSend(schedule(good), unreadable), {
      send: false,
      reason: 'the validator policy /etc/p.json cannot be used: ENOENT',
    });
  });

  it('with no policy configured, sends and says no leader gating applied', () => {
    assert.deepEqual(decideSend(schedule(bad, bad), undefined), { send: true, gating: 'none', slot: 100, windowSlots: 2, leaders: [bad] });
    assert.deepEqual(decideSend(tracker({ known: false, reason: 'x' }), undefined), {
      send: true,
      gating: 'none',
      slot: null,
      windowSlots: 0,
      leaders: [],
    });
  });

  it('registers the hold metrics from the start', async () => {
    const names = (await client.register.getMetricsAsJSON()).map((m) => m.name);
    for (const name of [
      'slipway_protected_held_total',
      'slipway_protected_released_total',
      'slipway_protected_expired_while_held_total',
      'slipway_protected_hold_seconds',
    ]) {
      assert.ok(names.includes(name), name);
    }
  });
});
