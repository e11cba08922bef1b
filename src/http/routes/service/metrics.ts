/**
 * `GET /metrics`: Prometheus text format (docs/operations.md lists every metric). Public on the API
 * port unless `PRESSROOM_METRICS_TOKEN` is set; then it needs `Authorization: Bearer <token>`.
 */
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Metrics } from '../../../ops/metrics.js';
import { safeEqual } from '../../../shared/crypto.js';
import { AppError } from '../../../shared/errors.js';
import { errorResponses, mediaResponse } from '../../schemas.js';

/** Registers /metrics. */
export function metricsRoutes(app: FastifyInstance, deps: { metrics: Metrics; token: string | undefined }): void {
  app.get(
    '/metrics',
    {
      config: { auth: 'public' },
      schema: {
        operationId: 'getMetrics',
        tags: ['Operations'],
        summary: 'Prometheus metrics of this process',
        description:
          'Text exposition format 0.0.4. Needs `Authorization: Bearer $PRESSROOM_METRICS_TOKEN` when that variable is set.',
        response: {
          200: mediaResponse('Prometheus text exposition', {
            'text/plain': Type.String({ description: 'Metrics, one sample per line' }),
          }),
          ...errorResponses(401),
        },
      },
    },
    async (request, reply) => {
      if (deps.token !== undefined) {
        const match = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.authorization ?? '');
        if (!match?.[1] || !safeEqual(match[1], deps.token)) {
          throw new AppError('UNAUTHORIZED', 'GET /metrics needs Authorization: Bearer <PRESSROOM_METRICS_TOKEN>.');
        }
      }
      const { contentType, body } = await deps.metrics.scrape();
      return reply.header('content-type', contentType).header('cache-control', 'no-store').send(body);
    },
  );
}
