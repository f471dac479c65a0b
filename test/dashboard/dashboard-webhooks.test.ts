/** The dashboard's keys table says how each key's webhook fares: off, on with what waits, failing, or paused and what to do. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { describeWebhook } from '../../src/dashboard/dashboard-feed';

const state = { pending: 3, pausedAt: null, failingSince: null, lastError: null };

describe("the dashboard's webhook column", () => {
  it('says off without a webhook, and on with what waits', () => {
    assert.equal(describeWebhook(null, undefined), 'off');
    assert.equal(describeWebhook('https://hooks.example/x', undefined), 'on, 0 waiting');
    assert.equal(describeWebhook('https://hooks.example/x', state), 'on, 3 waiting');
  });

  it('says since when it fails and why, and when it is paused, how to resume it', () => {
    const failing = { ...state, failingSince: Date.UTC(2026, 10, 28, 11, 0), lastError: 'the receiver answered 503' };
    assert.equal(
      describeWebhook('https://hooks.example/x', failing),
      'failing since 2026-11-28T11:00:00.000Z (3 waiting): the receiver answered 503',
    );
    assert.equal(
      describeWebhook('https://hooks.example/x', { ...failing, pausedAt: Date.UTC(2026, 10, 29) }),
      'PAUSED (3 waiting): the receiver answered 503; set the webhook again to resume',
    );
  });
});
