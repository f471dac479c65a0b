import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createLedgerLeaderTracker, type LeaderTracker, type LeaderView } from '../../src/upstreams/leader-tracker';
import { createRpcLeaderTracker } from '../../src/upstreams/rpc-leader-tracker';
import { startCluster, type Cluster } from '../helpers/cluster';
import { until } from '../helpers/until';

/** Waits until the tracker does (or does not) know the next 12 leaders. */
const untilKnown = (tracker: LeaderTracker, known: boolean): Promise<LeaderView> =>
  until(
    () => tracker.upcoming(12),
    (view) => view.known === known,
  );

describe('leader tracker', () => {
  let cluster: Cluster;
  before(async () => {
    cluster = await startCluster(2, 50);
  });
  after(() => cluster.close());

  it('over RPC: follows the slot and knows the next leaders, as the cluster schedules them', async () => {
    const tracker = createRpcLeaderTracker({ urls: [cluster.nodes[0]!.url], timeoutMs: 500, pollMs: 20 });
    try {
      const view = await untilKnown(tracker, true);
      assert.ok(view.known);
      const { slot, leaders } = view.window;
      assert.ok(Math.abs(cluster.ledger.currentSlot - slot) <= 3, `slot ${slot} against the cluster's ${cluster.ledger.currentSlot}`);
      // At least the 12 asked for; more when slots may have passed since the slot was seen.
      assert.ok(leaders.length >= 12);
      assert.deepEqual(leaders, cluster.ledger.schedule.leaders(slot, leaders.length));
      // Slots go on (50 ms each): the tracker follows, and fetches leaders again past its range.
      await new Promise((resolve) => setTimeout(resolve, 400));
      const later = tracker.upcoming(12);
      assert.ok(later.known && later.window.slot > slot, 'the slot moved on');
      assert.ok(later.known);
      assert.deepEqual(later.window.leaders, cluster.ledger.schedule.leaders(later.window.slot, later.window.leaders.length));
    } finally {
      await tracker.close();
    }
  });

  it('over RPC: lengthens the window by the slots that may have passed since the slot was seen', async () => {
    const node = cluster.nodes[1]!;
    const tracker = createRpcLeaderTracker({ urls: [node.url], timeoutMs: 100, pollMs: 20, staleMs: 5_000 });
    try {
      // Let it measure the cluster's slot time (50 ms) over a few slots.
      await new Promise((resolve) => setTimeout(resolve, 400));
      node.fault('error');
      await new Promise((resolve) => setTimeout(resolve, 500));
      const view = tracker.upcoming(8);
      assert.ok(view.known, 'not stale yet');
      // Half a second without news is about 10 slots of 50 ms: the window covers them too.
      assert.ok(view.window.leaders.length >= 8 + 8, `window of ${view.window.leaders.length} slots`);
      const now = cluster.ledger.currentSlot;
      assert.ok(
        view.window.slot + view.window.leaders.length > now + 7,
        `the window (${view.window.slot} + ${view.window.leaders.length} slots) reaches past the cluster's current slot ${now} by the 8 asked for`,
      );
    } finally {
      node.fault('none');
      await tracker.close();
    }
  });

  it('over RPC: says it does not know when the nodes stop answering (fail closed), and recovers', async () => {
    const node = cluster.nodes[1]!;
    const tracker = createRpcLeaderTracker({ urls: [node.url], timeoutMs: 100, pollMs: 20, staleMs: 300 });
    try {
      await untilKnown(tracker, true);
      node.fault('error');
      const view = await untilKnown(tracker, false);
      assert.ok(!view.known && /stale/.test(view.reason) && /HTTP 503/.test(view.reason), JSON.stringify(view));
      node.fault('none');
      await untilKnown(tracker, true);
    } finally {
      node.fault('none');
      await tracker.close();
    }
  });

  it('over RPC: unknown from the start says why', async () => {
    const tracker = createRpcLeaderTracker({ urls: ['http://127.0.0.1:9'], timeoutMs: 100, pollMs: 20 });
    try {
      await new Promise((resolve) => setTimeout(resolve, 150));
      const view = tracker.upcoming(8);
      assert.ok(!view.known && /unknown/.test(view.reason) && /connection refused/.test(view.reason), JSON.stringify(view));
    } finally {
      await tracker.close();
    }
  });

  it('on the embedded ledger: the ledger’s own schedule', async () => {
    const tracker = createLedgerLeaderTracker(cluster.ledger);
    const view = tracker.upcoming(8);
    assert.ok(view.known);
    assert.deepEqual(view.window.leaders, cluster.ledger.schedule.leaders(view.window.slot, 8));
    await tracker.close();
  });
});
