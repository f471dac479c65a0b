/**
 * A leader's buffer and scheduler, driven by hand (no clock, no ledger): the highest priority
 * goes first, the lowest is dropped when the buffer is full, what does not fit the block or an
 * account waits for the leader's next slot, the pacer spreads the block over the slot, a
 * validator far from leading keeps nothing, and the block is charged what was used.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LeaderScheduler, type Candidate, type DropReason } from '../../src/leader/leader-scheduler';
import { PriorityBuffer } from '../../src/leader/priority-buffer';

interface Tx extends Candidate {
  readonly name: string;
}

let seq = 0;
const tx = (name: string, priority: number, cost = 1_000, writeAccounts: string[] = [name]): Tx => ({
  name,
  key: name,
  priority: BigInt(priority),
  seq: seq++,
  cost,
  writeAccounts,
});

/** Two validators, A leading slots 0-3 and 8-11, B 4-7 and 12-15; C leads only from slot 100. */
function slotsUntilLeading(validator: string, slot: number): number {
  if (validator === 'C') return Math.max(0, 100 - slot);
  const leads = (s: number) => (Math.floor(s / 4) % 2 === 0 ? 'A' : 'B');
  for (let d = 0; ; d++) if (leads(slot + d) === validator) return d;
}

function scheduler(blockUnits = 10_000, accountUnits = blockUnits, capacity = 100) {
  const s = new LeaderScheduler<Tx>({ limits: { blockUnits, accountUnits }, slotMs: 400, bufferCapacity: capacity, slotsUntilLeading });
  const dropped: [string, DropReason][] = [];
  s.onDrop = (entry, reason) => dropped.push([entry.name, reason]);
  return { s, dropped };
}

/** Everything the leader executes at `now`, each settled at its asked cost. */
function drain(s: LeaderScheduler<Tx>, now: number, stale: (t: Tx) => 'expired' | 'alreadyProcessed' | null = () => null): string[] {
  const out: string[] = [];
  for (let t = s.next(now, stale); t !== undefined; t = s.next(now, stale)) {
    out.push(t.name);
    s.settle(t, t.cost);
  }
  return out;
}

describe('PriorityBuffer', () => {
  it('hands out the highest priority first, and of equal priorities the later arrival first (Agave orders by priority, then id)', () => {
    const b = new PriorityBuffer<Tx>(10);
    for (const t of [tx('low', 1), tx('high', 9), tx('mid-first', 5), tx('mid-later', 5)]) b.push(t);
    assert.deepEqual(
      [1, 2, 3, 4].map(() => b.popHighest()!.name),
      ['high', 'mid-later', 'mid-first', 'low'],
    );
  });

  it('when over capacity drops the lowest, which may be the one just pushed', () => {
    const b = new PriorityBuffer<Tx>(2);
    b.push(tx('a', 5));
    b.push(tx('b', 7));
    assert.deepEqual(
      b.push(tx('c', 6)).map((t) => t.name),
      ['a'],
    );
    assert.deepEqual(
      b.push(tx('d', 1)).map((t) => t.name),
      ['d'],
    );
    assert.equal(b.size, 2);
  });

  it('refuses a capacity that is not a positive integer', () => {
    assert.throws(() => new PriorityBuffer(0), /positive integer, not 0/);
  });
});

describe('LeaderScheduler', () => {
  it("packs the leader's transactions highest priority first until the block is full, and holds the rest for its next slot", () => {
    const { s } = scheduler(3_500);
    s.beginSlot(0, 'A', 0);
    for (const [name, p] of [
      ['p1', 1],
      ['p4', 4],
      ['p2', 2],
      ['p3', 3],
    ] as const)
      s.receive('A', tx(name, p), 0);
    assert.deepEqual(drain(s, 10_000), ['p4', 'p3', 'p2']);
    assert.equal(s.stats.units, 3_000);
    assert.equal(s.stats.held.WouldExceedBlockMaxLimit, 1, 'p1 (1,000) would pass the 500 left');
    assert.equal(s.buffered('A'), 1);
    s.beginSlot(1, 'A', 10_000);
    assert.deepEqual(drain(s, 20_000), ['p1']);
  });

  it("under twice the block's load drops the lowest priorities first when the buffer is full", () => {
    const { s, dropped } = scheduler(5_000, 5_000, 5);
    s.beginSlot(0, 'A', 0);
    for (let p = 1; p <= 10; p++) s.receive('A', tx(`p${p}`, p), 0);
    assert.deepEqual(
      dropped.map(([name]) => name),
      ['p1', 'p2', 'p3', 'p4', 'p5'],
    );
    assert.ok(dropped.every(([, reason]) => reason === 'bufferFull'));
    assert.deepEqual(drain(s, 10_000), ['p10', 'p9', 'p8', 'p7', 'p6']);
    assert.equal(s.stats.dropped.bufferFull, 5);
  });

  it("holds what would pass an account's limit and packs lower priorities writing other accounts meanwhile", () => {
    const { s } = scheduler(10_000, 2_000);
    s.beginSlot(0, 'A', 0);
    s.receive('A', tx('hot1', 9, 1_000, ['hot']), 0);
    s.receive('A', tx('hot2', 8, 1_000, ['hot']), 0);
    s.receive('A', tx('hot3', 7, 1_000, ['hot']), 0);
    s.receive('A', tx('cold', 1, 1_000, ['cold']), 0);
    assert.deepEqual(drain(s, 10_000), ['hot1', 'hot2', 'cold']);
    assert.equal(s.stats.held.WouldExceedAccountMaxLimit, 1);
  });

  it('paces the block over the slot less 50 ms: by half of 350 ms half the block is scheduled', () => {
    const { s } = scheduler(3_500);
    s.beginSlot(0, 'A', 1_000);
    for (let i = 0; i < 10; i++) s.receive('A', tx(`t${i}`, 10 - i, 350), 0);
    assert.deepEqual(drain(s, 1_000), []);
    // 175 ms in: 10 units a millisecond, 1,750 units: five of 350.
    assert.equal(drain(s, 1_175).length, 5);
    assert.equal(drain(s, 1_350).length, 5);
  });

  it('drops a transaction whose blockhash expired or that was processed, instead of scheduling it', () => {
    const { s, dropped } = scheduler();
    s.beginSlot(0, 'A', 0);
    s.receive('A', tx('old', 9), 0);
    s.receive('A', tx('seen', 8), 0);
    s.receive('A', tx('fresh', 1), 0);
    const stale = (t: Tx) => (t.name === 'old' ? 'expired' : t.name === 'seen' ? 'alreadyProcessed' : null);
    assert.deepEqual(drain(s, 1_000, stale), ['fresh']);
    assert.deepEqual(dropped, [
      ['old', 'expired'],
      ['seen', 'alreadyProcessed'],
    ]);
  });

  it("clears a leader's buffer when its window ends and it is more than 20 slots from leading again, and a validator that far keeps nothing it receives", () => {
    const { s, dropped } = scheduler();
    s.beginSlot(0, 'A', 0);
    s.receive('B', tx('for-B', 5), 0);
    s.receive('C', tx('for-C', 5), 0);
    assert.deepEqual(dropped, [['for-C', 'notLeaderSoon']]);
    // B leads from slot 4; A's next window (8) is 4 slots away, so nothing is cleared.
    s.beginSlot(4, 'B', 1_000);
    assert.equal(s.buffered('B'), 1);
    assert.deepEqual(drain(s, 2_000), ['for-B']);
  });

  it("drops the previous leader's unpacked transactions when its next window is beyond 20 slots", () => {
    const far = (validator: string, slot: number) => (validator === 'A' ? (slot < 4 ? 0 : 28) : slot < 4 ? 4 - slot : 0);
    const s = new LeaderScheduler<Tx>({ limits: { blockUnits: 1_000, accountUnits: 1_000 }, slotMs: 400, slotsUntilLeading: far });
    const dropped: string[] = [];
    s.onDrop = (entry, reason) => dropped.push(`${entry.name}:${reason}`);
    s.beginSlot(3, 'A', 0);
    s.receive('A', tx('fits', 2), 3);
    s.receive('A', tx('waits', 1), 3);
    assert.deepEqual(drain(s, 1_000), ['fits']);
    s.beginSlot(4, 'B', 1_000);
    assert.deepEqual(dropped, ['waits:windowEnded']);
    assert.equal(s.buffered('A'), 0);
  });

  it('buffers a copy of the same transaction once per validator', () => {
    const { s } = scheduler();
    s.beginSlot(0, 'A', 0);
    const t = tx('once', 5);
    s.receive('A', t, 0);
    s.receive('A', { ...t, seq: seq++ }, 0);
    assert.equal(s.buffered('A'), 1);
    assert.deepEqual(drain(s, 1_000), ['once']);
  });

  it('charges the block what a transaction used, and nothing for one not committed', () => {
    const { s } = scheduler(2_000);
    s.beginSlot(0, 'A', 0);
    for (const name of ['a', 'b', 'c', 'd']) s.receive('A', tx(name, 1, 1_000), 0);
    const a = s.next(1_000, () => null)!;
    s.settle(a, 400);
    const b = s.next(1_000, () => null)!;
    s.settle(b, null);
    assert.equal(s.stats.units, 400);
    const c = s.next(1_000, () => null)!;
    s.settle(c, 1_000);
    assert.equal(
      s.next(1_000, () => null),
      undefined,
      'd (1,000) does not fit in the 600 left',
    );
    assert.equal(s.stats.units, 1_400);
  });
});
