/**
 * `GET /dashboard` (the page) and `GET /dashboard/events` (its server-sent events), for the
 * operator: served to this machine only, or to whoever has dashboardToken (as a bearer
 * token, or `?token=` so that a browser can open it).
 */
import type { ServerResponse } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { operatorGuard } from '../web/operator-access';
import type { DashboardFeed } from './dashboard-feed';
import { DASHBOARD_HEADERS, DASHBOARD_PAGE } from './dashboard-page';

export function registerDashboard(app: FastifyInstance, feed: DashboardFeed, token: string): void {
  const guard = operatorGuard('dashboardToken', token);
  const streams = new Set<ServerResponse>();
  // Event streams never end by themselves: end them, or closing the server would wait for ever.
  app.addHook('preClose', async () => {
    for (const stream of streams) stream.end();
  });

  app.get('/dashboard', { onRequest: guard }, async (_request, reply) => {
    return reply.type('text/html; charset=utf-8').header('cache-control', 'no-store').headers(DASHBOARD_HEADERS).send(DASHBOARD_PAGE);
  });

  app.get('/dashboard/events', { onRequest: guard }, async (request, reply) => {
    // HEAD: the stream's headers, and no stream (it would never end).
    if (request.method === 'HEAD') return reply.type('text/event-stream').header('cache-control', 'no-store').send();
    reply.hijack();
    const stream = reply.raw;
    stream.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store', connection: 'keep-alive' });
    const send = (event: string, data: unknown) => stream.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
    const { history, tables, unsubscribe } = feed.subscribe((point, latest) => send('update', { point, tables: latest }));
    send('init', { history, tables });
    streams.add(stream);
    stream.once('close', () => {
      unsubscribe();
      streams.delete(stream);
    });
  });
}
