/**
 * Liveness and readiness for orchestrators and load balancers (docs/operations.md):
 * - `GET /healthz`: the process answers HTTP (no dependency is checked, so a database outage never
 *   makes an orchestrator restart every process);
 * - `GET /readyz`: database, storage and browser ready → 200, else 503 with every check's state.
 */
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { isReady, type CheckResults } from '../../../ops/readiness.js';

const Readiness = Type.Object({
  status: Type.Union([Type.Literal('ready'), Type.Literal('not_ready')], {
    description: 'ready: every required check is ok',
  }),
  checks: Type.Record(Type.String(), Type.String(), {
    description:
      '`ok` (or `ok: …`, e.g. the active e-invoice rules pack); `degraded: …` (still ready: Redis, no e-invoice rules pack); `starting`; or `unavailable: <code>`',
  }),
});

/** Registers /healthz and /readyz (public). */
export function healthRoutes(app: FastifyInstance, deps: { readiness(): Promise<CheckResults> }): void {
  app.get(
    '/healthz',
    {
      config: { auth: 'public' },
      schema: {
        operationId: 'getHealth',
        tags: ['Operations'],
        summary: 'Liveness',
        description: 'The process answers HTTP; no dependency is checked.',
        response: { 200: Type.Object({ status: Type.Literal('ok', { description: 'Always ok' }) }) },
      },
    },
    async () => ({ status: 'ok' as const }),
  );

  app.get(
    '/readyz',
    {
      config: { auth: 'public' },
      schema: {
        operationId: 'getReadiness',
        tags: ['Operations'],
        summary: 'Readiness',
        description: "Database, storage and browser ready → 200; otherwise 503 with every check's state.",
        response: { 200: Readiness, 503: Readiness },
      },
    },
    async (_request, reply) => {
      const checks = await deps.readiness();
      const ready = isReady(checks);
      return reply
        .code(ready ? 200 : 503)
        .header('cache-control', 'no-store')
        .send({ status: ready ? 'ready' : 'not_ready', checks });
    },
  );
}
