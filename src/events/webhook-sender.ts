/**
 * One delivery of one event to a webhook: a POST of its JSON, signed by the Standard
 * Webhooks convention (`webhook-id`, `webhook-timestamp`, `webhook-signature`: HMAC-SHA256
 * of `id.timestamp.body` with the key's `whsec_` secret, by the npm package
 * `standardwebhooks`), answered within the timeout with a 2xx status. Redirects are not
 * followed (a 3xx is a failure), and the connection goes only to the addresses the name
 * resolves to that are public, unless private ones are allowed (webhook-url.ts): the check
 * is on the address connected to, so a name cannot be rebound to an inside address between
 * the check and the call.
 */
import dns from 'node:dns';
import type { LookupFunction } from 'node:net';
import { Webhook as Signer } from 'standardwebhooks';
import { Agent, request, type Dispatcher } from 'undici';
import { parseWebhookUrl, privateRange, privateRefusal } from './webhook-url';

export interface WebhookTarget {
  readonly url: string;
  readonly secret: string;
}

export interface SendResult {
  /** Null when the receiver took it; otherwise why not, in words. */
  readonly error: string | null;
}

export interface WebhookSender {
  send(target: WebhookTarget, id: string, payload: string, now: Date): Promise<SendResult>;
  close(): Promise<void>;
}

const MAX_ERROR_BODY = 200;

export function createWebhookSender(options: { allowPrivate: boolean; timeoutMs: number }): WebhookSender {
  const lookup: LookupFunction = (hostname, lookupOptions, callback) => {
    dns.lookup(hostname, { ...lookupOptions, all: true }, (error, addresses) => {
      if (error !== null) return callback(error, '', 0);
      const refused = options.allowPrivate ? undefined : addresses.find((a) => privateRange(a.address) !== null);
      if (refused !== undefined)
        return callback(
          Object.assign(new Error(privateRefusal(`${hostname} (${refused.address})`, privateRange(refused.address)!))),
          '',
          0,
        );
      if (lookupOptions.all === true) return (callback as unknown as (e: null, a: dns.LookupAddress[]) => void)(null, addresses);
      const first = addresses[0]!;
      callback(null, first.address, first.family);
    });
  };
  const agent = new Agent({
    connect: { lookup, timeout: options.timeoutMs },
    headersTimeout: options.timeoutMs,
    bodyTimeout: options.timeoutMs,
    keepAliveTimeout: 30_000,
    connections: 8,
  });
  const signers = new Map<string, Signer>();
  const signerFor = (secret: string): Signer => {
    let signer = signers.get(secret);
    if (signer === undefined) {
      signer = new Signer(secret);
      signers.set(secret, signer);
    }
    return signer;
  };

  return {
    async send(target, id, payload, now) {
      let url: URL;
      try {
        url = parseWebhookUrl(target.url, options.allowPrivate);
      } catch (error) {
        return { error: (error as Error).message };
      }
      const timestamp = Math.floor(now.getTime() / 1000);
      const headers = {
        'content-type': 'application/json',
        'user-agent': 'Slipway-Webhooks/1',
        'webhook-id': id,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': signerFor(target.secret).sign(id, new Date(timestamp * 1000), payload),
      };
      try {
        const answer = await request(url, {
          method: 'POST',
          body: payload,
          headers,
          dispatcher: agent,
          signal: AbortSignal.timeout(options.timeoutMs),
        });
        if (answer.statusCode >= 200 && answer.statusCode < 300) {
          await answer.body.dump({ limit: 64 * 1024 }).catch(() => undefined);
          return { error: null };
        }
        const text = await readStart(answer.body, MAX_ERROR_BODY);
        return { error: `the receiver answered ${answer.statusCode}${text === '' ? '' : `: ${text}`}` };
      } catch (error) {
        return { error: describeFailure(error, options.timeoutMs) };
      }
    },
    async close() {
      await agent.close();
    },
  };
}

/**
 * The first `chars` characters of an error answer's body, for the reason shown; the rest is
 * not read (the connection is closed), so that a receiver pouring out a body that never ends
 * costs neither memory nor the time-out.
 */
async function readStart(body: Dispatcher.ResponseData['body'], chars: number): Promise<string> {
  let text = '';
  try {
    for await (const chunk of body) {
      text += (chunk as Buffer).toString('utf8');
      if (text.length >= chars) break;
    }
  } catch {
    // What was read before the body failed is reason enough.
  } finally {
    body.destroy();
  }
  return text.slice(0, chars);
}

function describeFailure(error: unknown, timeoutMs: number): string {
  const e = error as { name?: string; code?: string; message?: string; cause?: { code?: string; message?: string } };
  if (e.name === 'TimeoutError' || e.code === 'UND_ERR_HEADERS_TIMEOUT' || e.code === 'UND_ERR_BODY_TIMEOUT')
    return `no answer within ${timeoutMs} ms`;
  const cause = e.cause?.message ?? e.message ?? String(error);
  const code = e.cause?.code ?? e.code;
  return `could not deliver: ${code !== undefined && !cause.includes(code) ? `${code} ` : ''}${cause}`;
}
