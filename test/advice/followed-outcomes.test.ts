/**
 * Whether an outcome landed within k is known only once it is known for every transaction
 * received with it (k + 3 slots after): a landing is not counted before the misses beside it
 * could be.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { landedWithin, type Followed } from '../../src/advice/followed-outcomes';

const SLOT_MS = 400;
const outcome = (state: Followed['state'], slotsToLand: number | null): Followed =>
  ({
    signature: 's',
    createdAt: 0,
    state,
    slot: null,
    slotsToLand,
    bundle: false,
    paid: 0,
    accounts: [],
    rank: 0,
    feeLamports: 0,
  }) as unknown as Followed;

describe('followed outcomes', () => {
  it('counts a quick landing only once a miss received with it would be known too (k + 3 slots after)', () => {
    const landed = outcome('landed', 1);
    assert.equal(landedWithin(landed, 8, 2 * SLOT_MS, SLOT_MS), null, 'landed in a slot, but a miss beside it is not known yet');
    assert.equal(landedWithin(landed, 8, 11 * SLOT_MS, SLOT_MS), null);
    assert.equal(landedWithin(landed, 8, 11 * SLOT_MS + 1, SLOT_MS), true);
    assert.equal(landedWithin(outcome('landed', 9), 8, 12 * SLOT_MS, SLOT_MS), false, 'landed, but after 8 slots');
    assert.equal(landedWithin(outcome('forwarded', null), 8, 12 * SLOT_MS, SLOT_MS), false, 'still unfinished after k + 3');
    assert.equal(landedWithin(outcome('expired', null), 8, SLOT_MS, SLOT_MS), null, 'a refusal or expiry waits as a landing does');
    assert.equal(landedWithin(outcome('expired', null), 8, 12 * SLOT_MS, SLOT_MS), false);
  });
});
