/**
 * Webhook URLs that reach the gateway's own network in odd spellings: IPv4 in decimal,
 * hexadecimal, octal and short forms, with a trailing dot, percent-encoded or in full-width
 * digits, and IPv6 forms that carry an IPv4 address (mapped, translated, NAT64, 6to4, and
 * the deprecated IPv4-compatible ::a.b.c.d). Each is refused without webhookAllowPrivate.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseWebhookUrl } from '../../src/events/webhook-url';

describe('webhook URLs in odd spellings', () => {
  for (const url of [
    'http://2130706433/',
    'http://0x7f.1/',
    'http://127.1/',
    'http://0177.0.0.1/',
    'http://0/',
    'http://127.0.0.1./',
    'http://%31%32%37.0.0.1/',
    'http://１２７.0.0.1/',
    'http://LOCALHOST/',
    'http://localhost%2e/',
    'http://[::]/',
    'http://[0:0:0:0:0:ffff:a9fe:a9fe]/',
    'http://[::ffff:0:7f00:1]/',
    'http://[64:ff9b::127.0.0.1]/',
    'http://[2002:7f00:1::]/',
    'http://[::127.0.0.1]/',
    'http://[::a9fe:a9fe]/',
  ])
    it(`refuses ${url}`, () => {
      assert.throws(() => parseWebhookUrl(url, false), /address, which Slipway does not call unless the operator allows it/);
    });

  it('takes a public address and a name', () => {
    assert.equal(parseWebhookUrl('https://93.184.215.14/hook', false).hostname, '93.184.215.14');
    assert.equal(parseWebhookUrl('https://[2606:4700::1111]/hook', false).hostname, '[2606:4700::1111]');
    assert.equal(parseWebhookUrl('https://hooks.example.com/hook', false).hostname, 'hooks.example.com');
  });
});
