/** Liveness and readiness for orchestrators. */
import type { FastifyInstance } from 'fastify';
import type { Services } from '../../services.js';

export function healthRoutes(app: FastifyInstance, services: Services): void {
  app.get('/healthz', { config: { auth: 'public' }, schema: { tags: ['operations'], summary: 'Alive' } }, async () => ({ status: 'ok' }));

  app.get('/readyz', { config: { auth: 'public' }, schema: { tags: ['operations'], summary: 'Ready: database, storage and renderer' } }, async (_request, reply) => {
    const checks = await services.readiness();
    const ready = Object.values(checks).every((c) => c === 'ok');
    return reply.code(ready ? 200 : 503).send({ status: ready ? 'ready' : 'not_ready', checks });
  });
}
