/**
 * A webhook URL, checked where it is given (`keys set --webhook`) and again where it is
 * used: http or https, a host, no credentials, and no address that only the gateway's own
 * network reaches (loopback, private, link-local, carrier-grade NAT, unique-local,
 * multicast, reserved), unless the operator allows them (`webhookAllowPrivate`). A name is
 * checked by what it resolves to when a delivery connects (webhook-delivery.ts), so that a
 * name that later resolves elsewhere (DNS rebinding) cannot make Slipway call inside.
 */
import net from 'node:net';
import ipaddr from 'ipaddr.js';

const MAX_URL_LENGTH = 2048;

/** Parses a webhook URL; throws an Error whose message says what is wrong with it. */
export function parseWebhookUrl(raw: string, allowPrivate: boolean): URL {
  if (raw.length > MAX_URL_LENGTH) throw new Error(`the webhook URL is longer than ${MAX_URL_LENGTH} characters`);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new Error(`the webhook URL ${JSON.stringify(raw.slice(0, 200))} is not a URL (say https://host/path)`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new Error(`the webhook URL must be http or https (got ${url.protocol.replace(/:$/, '')})`);
  if (url.username !== '' || url.password !== '')
    throw new Error('the webhook URL must not carry a user name or password (events are signed with the webhook secret instead)');
  if (url.hash !== '' || raw.includes('#')) throw new Error('the webhook URL must not have a #fragment');
  if (url.port === '0') throw new Error('the webhook URL names port 0, which nothing listens on');
  // Brackets of an IPv6 literal, and the root's trailing dot (`localhost.` is localhost) off.
  const host = url.hostname.replace(/^\[|\]$/g, '').replace(/\.$/, '');
  if (host === '') throw new Error('the webhook URL has no host');
  if (!allowPrivate) {
    if (net.isIP(host) !== 0) {
      const why = privateRange(host);
      if (why !== null) throw new Error(privateRefusal(host, why));
    } else if (host === 'localhost' || host.endsWith('.localhost')) {
      throw new Error(privateRefusal(host, 'loopback'));
    }
  }
  return url;
}

/** The range an address is in when it is not a public unicast address ('loopback', 'private', …), or null when it is public. */
export function privateRange(address: string): string | null {
  if (!ipaddr.isValid(address)) return 'invalid';
  const parsed = ipaddr.process(address);
  const range = parsed.range();
  if (range !== 'unicast') return range;
  // ::a.b.c.d, the deprecated IPv4-compatible form (RFC 4291 §2.5.5.1), which ipaddr.js calls unicast: no public receiver has one.
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).parts.slice(0, 6).every((part) => part === 0)) return 'ipv4Compatible';
  return null;
}

export function privateRefusal(host: string, range: string): string {
  return `the webhook's host ${host} is a non-public (${range}) address, which Slipway does not call unless the operator allows it (setting webhookAllowPrivate, flag --webhook-allow-private true)`;
}
