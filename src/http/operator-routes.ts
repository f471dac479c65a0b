/**
 * What the operator reads: `GET /metrics` (Prometheus's text), the live dashboard, and
 * `GET /health` (200 with the slot when the gateway can reach the network; 503 with why
 * when it cannot, or when its keys are stale). operator-access.ts says who may read the first two.
 */
import type { FastifyInstance } from 'fastify';
import type { Authenticator } from '../auth/authenticator';
import type { DashboardFeed } from '../dashboard/dashboard-feed';
import { registerDashboard } from '../dashboard/dashboard-routes';
import { metricsRegistry } from '../metrics/metrics';
import { operatorGuard } from '../web/operator-access';
import { createHealthProbe } from './health-probe';

export interface OperatorRoutesOptions {
  readonly authenticator: Authenticator;
  /** The reads upstream's slot, asked by the health probe (at most once a second, shared). */
  readonly router: { getSlot(): Promise<number> };
  /** Who may read /metrics besides clients on this machine (operator-access.ts); empty: no one. */
  readonly metricsToken: string;
  /** The live dashboard's feed, and who may open it besides this machine. */
  readonly dashboard?: { readonly feed: DashboardFeed; readonly token: string };
}

export function registerOperatorRoutes(app: FastifyInstance, options: OperatorRoutesOptions): void {
  app.get('/metrics', { onRequest: operatorGuard('metricsToken', options.metricsToken) }, async (_request, reply) =>
    reply.type(metricsRegistry.contentType).send(await metricsRegistry.metrics()),
  );

  if (options.dashboard !== undefined) registerDashboard(app, options.dashboard.feed, options.dashboard.token);

  const health = createHealthProbe(() => options.router.getSlot());
  app.get('/health', async (_request, reply) => {
    const keys = options.authenticator.unavailable();
    if (keys !== null) return reply.code(503).send({ status: 'unavailable', message: keys });
    const now = await health();
    return now.ok ? { status: 'ok', slot: now.slot } : reply.code(503).send({ status: 'unavailable', message: now.reason });
  });
}
