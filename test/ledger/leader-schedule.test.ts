import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Keypair } from '@solana/web3.js';
import { defaultValidatorIdentities, LeaderSchedule, SLOTS_PER_EPOCH, SLOTS_PER_LEADER } from '../../src/ledger/leader-schedule';
import { LocalLedger } from '../../src/ledger/local-ledger';
import { resolveConfig } from '../../src/config/config';
import { parseConfigFile } from '../../src/config/config-file';
import { rpc } from '../helpers/rpc';
import { useGateway } from '../helpers/use-gateway';

describe('the embedded ledger’s leader schedule, through the gateway', () => {
  const ctx = useGateway({ readMethods: '*' }); // the embedded ledger's own read side, beyond what the gateway forwards by default
  const identities = defaultValidatorIdentities();

  it('names a default validator for every slot, the same one for 4 consecutive slots, each about as often', async () => {
    const slot = await ctx.connection.getSlot();
    const start = slot - (slot % SLOTS_PER_LEADER);
    const leaders = await ctx.connection.getSlotLeaders(start, 4_000);
    assert.equal(leaders.length, 4_000);
    const counts = new Map<string, number>();
    for (let i = 0; i < leaders.length; i++) {
      const leader = leaders[i]!.toBase58();
      assert.ok(identities.includes(leader), `slot ${start + i}: ${leader} is not one of the schedule's validators`);
      if (i % SLOTS_PER_LEADER !== 0) assert.equal(leader, leaders[i - 1]!.toBase58(), `slot ${start + i} changes leader mid-group`);
      counts.set(leader, (counts.get(leader) ?? 0) + 1);
    }
    assert.equal(counts.size, identities.length, 'every validator leads some slots');
    for (const [leader, count] of counts)
      assert.ok(count > 250 && count < 750, `${leader} leads ${count} of 4,000 slots (about 500 expected)`);
    const again = await ctx.connection.getSlotLeaders(start + 1_000, 8);
    assert.deepEqual(
      again.map((k) => k.toBase58()),
      leaders.slice(1_000, 1_008).map((k) => k.toBase58()),
      'the same slot has the same leader every time',
    );
  });

  it('answers getLeaderSchedule, getSlotLeader and getEpochInfo consistently with getSlotLeaders', async () => {
    const info = await ctx.connection.getEpochInfo();
    assert.equal(info.slotsInEpoch, SLOTS_PER_EPOCH);
    assert.equal(info.epoch * SLOTS_PER_EPOCH + info.slotIndex, info.absoluteSlot);
    const schedule = await ctx.connection.getLeaderSchedule();
    let covered = 0;
    for (const [identity, slots] of Object.entries(schedule)) {
      assert.ok(identities.includes(identity));
      covered += slots.length;
    }
    assert.equal(covered, SLOTS_PER_EPOCH, 'every slot of the epoch has exactly one leader');
    const epochStart = info.absoluteSlot - info.slotIndex;
    const sample = await ctx.connection.getSlotLeaders(epochStart + 4_000, 16);
    for (const [i, leader] of sample.entries()) assert.ok(schedule[leader.toBase58()]!.includes(4_000 + i));
    const one = identities[3]!;
    const filtered = (await rpc(ctx.gw.url, ctx.gw.key, 'getLeaderSchedule', [null, { identity: one }])).body.result;
    assert.deepEqual(Object.keys(filtered), [one]);
    assert.deepEqual(filtered[one], schedule[one]);
    const far = (await rpc(ctx.gw.url, ctx.gw.key, 'getLeaderSchedule', [info.absoluteSlot + 3 * SLOTS_PER_EPOCH])).body;
    assert.equal(far.result, null, 'a node knows the current and the next epoch only');
    const slot = await ctx.connection.getSlot();
    const leader = (await rpc(ctx.gw.url, ctx.gw.key, 'getSlotLeader', [])).body.result;
    const around = (await ctx.connection.getSlotLeaders(slot, 8)).map((k) => k.toBase58());
    assert.ok(around.includes(leader), 'getSlotLeader names the leader of the current slot');
  });

  it('refuses a getSlotLeaders limit above 5,000 and a bad start slot, as Agave does', async () => {
    const tooMany = await rpc(ctx.gw.url, ctx.gw.key, 'getSlotLeaders', [0, 5_001]);
    assert.equal(tooMany.body.error.code, -32602);
    assert.equal(tooMany.body.error.message, 'Invalid limit; max 5000');
    const badStart = await rpc(ctx.gw.url, ctx.gw.key, 'getSlotLeaders', [-1, 10]);
    assert.equal(badStart.body.error.code, -32602);
  });
});

describe('a configured leader schedule', () => {
  const mine = [Keypair.generate(), Keypair.generate()].map((k) => k.publicKey.toBase58());
  const ctx = useGateway({ ledgerLeaders: mine.join(','), readMethods: '*' });

  it('is what the gateway’s embedded ledger answers (ledgerLeaders / SLIPWAY_LEDGER_LEADERS)', async () => {
    const leaders = new Set((await ctx.connection.getSlotLeaders(await ctx.connection.getSlot(), 400)).map((k) => k.toBase58()));
    assert.deepEqual([...leaders].sort(), [...mine].sort());
  });

  it('stops start-up on a bad identity, naming the setting', () => {
    assert.throws(
      () => resolveConfig({ ledgerLeaders: `${mine[0]},nope!` }, {}),
      /ledgerLeaders: validator identity "nope!" is not base58/,
    );
    assert.throws(
      () => resolveConfig({}, { SLIPWAY_LEDGER_LEADERS: `${mine[0]},${mine[0]}` }),
      /ledgerLeaders: validator identities must be distinct/,
    );
    assert.deepEqual(parseConfigFile({ ledgerLeaders: mine }, 'test').settings.ledgerLeaders, mine.join(','));
    assert.throws(() => parseConfigFile({ ledgerLeaders: [] }, 'test'), /ledgerLeaders/);
  });

  it('uses exactly the configured identities, and says what is wrong with a bad one', () => {
    const mine = [Keypair.generate(), Keypair.generate(), Keypair.generate()].map((k) => k.publicKey.toBase58());
    const ledger = LocalLedger.open({ slotMs: 400, leaders: mine });
    const leaders = new Set(ledger.schedule.leaders(ledger.currentSlot, 1_200));
    assert.deepEqual([...leaders].sort(), [...mine].sort());
    assert.throws(() => new LeaderSchedule([]), /at least one validator/);
    assert.throws(() => new LeaderSchedule(['not base58!']), /not base58/);
    assert.throws(() => new LeaderSchedule(['11111111']), /not 32 bytes/);
    assert.throws(() => new LeaderSchedule([mine[0]!, mine[0]!]), /distinct/);
  });

  it('draws a different order in each epoch', () => {
    const schedule = new LeaderSchedule();
    const first = schedule.leaders(0, 400).join();
    const next = schedule.leaders(SLOTS_PER_EPOCH, 400).join();
    assert.notEqual(first, next);
  });
});
