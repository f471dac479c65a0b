/**
 * Who may read the operator's pages (`/metrics`, `/dashboard`): with a token configured,
 * whoever presents it as `Authorization: Bearer TOKEN` (or `?token=TOKEN`, for a browser);
 * without one, clients on this machine only (a loopback address). API keys do not open them: a client's key says nothing about the operator.
 *
 * A reverse proxy on the same machine (nginx or Caddy for TLS, as docs/DEPLOY.md suggests)
 * makes every client look local. Proxies say so with `Forwarded`, `X-Forwarded-For` or
 * `X-Real-IP`: without a token, a request carrying one is refused, whatever its address.
 */
import crypto from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';

/**
 * Paths without an API key: the health check (for load balancers) and the operator's pages
 * (with the access below). They are never shed nor counted as requests in flight (admission.ts).
 */
export const OPERATOR_PATHS: ReadonlySet<string> = new Set(['/health', '/metrics', '/dashboard', '/dashboard/events']);

export interface Refusal {
  readonly status: 401 | 403;
  readonly message: string;
}

/** Headers a reverse proxy adds to say whom it forwards for. */
const PROXY_HEADERS = ['forwarded', 'x-forwarded-for', 'x-real-ip'] as const;

const digest = (text: string) => crypto.createHash('sha256').update(text).digest();

export function operatorAccess(setting: string, token: string): (request: IncomingMessage) => Refusal | null {
  const expected = token === '' ? null : digest(token);
  return (request) => {
    if (expected === null) {
      const proxy = PROXY_HEADERS.find((name) => request.headers[name] !== undefined);
      if (proxy !== undefined) {
        return {
          status: 403,
          message: `this page is served to clients on the gateway's own machine only, and this request came through a proxy (it carries ${proxy}); set ${setting} and send it as "Authorization: Bearer <token>" to read it through one`,
        };
      }
      if (isLoopback(request.socket.remoteAddress)) return null;
      return {
        status: 403,
        message: `this page is served to clients on the gateway's own machine only; set ${setting} and send it as "Authorization: Bearer <token>" to read it from elsewhere`,
      };
    }
    const header = request.headers.authorization;
    // A browser opening a page cannot send a header: the token may come as ?token= too (never logged).
    const presented =
      typeof header === 'string' && header.startsWith('Bearer ')
        ? header.slice('Bearer '.length)
        : (new URL(request.url ?? '/', 'http://slipway').searchParams.get('token') ?? undefined);
    // Hashes of equal length, compared in constant time: the token's length is not told either.
    if (presented !== undefined && crypto.timingSafeEqual(digest(presented), expected)) return null;
    return { status: 401, message: `send the ${setting} configured on the gateway as "Authorization: Bearer <token>"` };
  };
}

function isLoopback(address: string | undefined): boolean {
  if (address === undefined) return false;
  return address === '::1' || address.startsWith('127.') || address.startsWith('::ffff:127.');
}

/** The access above as a route's `onRequest` hook: refused requests get `{code, message}` with 401 or 403. */
export function operatorGuard(setting: string, token: string) {
  const access = operatorAccess(setting, token);
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const refused = access(request.raw);
    if (refused !== null) return reply.code(refused.status).send({ code: refused.status, message: refused.message });
  };
}
