import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { HashSlots } from '../../src/runtime/hash-slots';

/** A small deterministic generator, so that a failure can be replayed. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

describe('hash slots (a multimap on flat arrays)', () => {
  for (const [hashes, label] of [
    [4, 'a few hashes (long shared runs)'],
    [2 ** 32, 'any 32-bit hash'],
  ] as const) {
    it(`agrees with a Map of arrays over random adds and removes: ${label}`, () => {
      const next = random(hashes === 4 ? 7 : 11);
      const slots = new HashSlots<{ id: number }>();
      const model = new Map<number, { id: number }[]>();
      const live: { hash: number; value: { id: number } }[] = [];
      let id = 0;
      // Grow well past the first size, shrink back, grow again: every resize and wrap-around is crossed.
      for (let round = 0; round < 3; round++) {
        const peak = round === 1 ? 3_000 : 600;
        for (let step = 0; step < 6_000; step++) {
          const adding = live.length < peak * next() * 2 || live.length === 0;
          if (adding) {
            // Of the four, 0xffffffff lives in the last slot: its run wraps around to the first.
            const hash = hashes === 4 ? [0, 0x1000_0001, 0x2000_0002, 0xffff_ffff][Math.floor(next() * 4)]! : Math.floor(next() * hashes);
            const value = { id: id++ };
            slots.add(hash, value);
            model.set(hash >>> 0, [...(model.get(hash >>> 0) ?? []), value]);
            live.push({ hash, value });
          } else {
            const [gone] = live.splice(Math.floor(next() * live.length), 1);
            assert.equal(slots.remove(gone!.hash, gone!.value), true);
            model.set(
              gone!.hash >>> 0,
              model.get(gone!.hash >>> 0)!.filter((v) => v !== gone!.value),
            );
            assert.equal(slots.remove(gone!.hash, gone!.value), false, 'a value removed is not found again');
          }
          if (step % 97 === 0) {
            for (const [hash, values] of model) {
              assert.deepEqual(slots.all(hash), values, `hash ${hash}: the values in the order added`);
              const last = values.at(-1);
              if (last !== undefined)
                assert.equal(
                  slots.find(hash, (v) => v.id === last.id),
                  last,
                );
            }
          }
        }
        assert.equal(slots.size, live.length);
      }
      for (const { hash, value } of live.splice(0)) assert.equal(slots.remove(hash, value), true);
      assert.equal(slots.size, 0);
      for (const hash of model.keys()) assert.deepEqual(slots.all(hash), []);
    });
  }

  it('tells apart values under one hash, and removes only the one named', () => {
    const slots = new HashSlots<string>();
    slots.add(5, 'a');
    slots.add(5, 'b');
    slots.add(6, 'c');
    assert.equal(
      slots.find(5, (v) => v === 'b'),
      'b',
    );
    assert.equal(
      slots.find(5, (v) => v === 'c'),
      undefined,
      'a value under another hash is not found under this one',
    );
    assert.equal(slots.remove(5, 'c'), false);
    assert.equal(slots.remove(5, 'a'), true);
    assert.deepEqual(slots.all(5), ['b']);
    assert.deepEqual(slots.all(6), ['c']);
  });
});
