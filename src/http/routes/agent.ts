/** `/v1/agent/*`: TemplateFox's AI authoring. Answered 501 (not 404) so clients can tell "not offered here" from "wrong URL". */
import type { FastifyInstance } from 'fastify';
import { AppError } from '../../shared/errors.js';
import { errorResponses } from '../schemas.js';

const MESSAGE = 'AI template authoring (/v1/agent/*) needs a language model, which this self-hosted Pressroom service does not have; write templates with /v1/templates instead.';

/** Registers the 501 answer for every method under /v1/agent. */
export function agentRoutes(app: FastifyInstance): void {
  for (const url of ['/v1/agent', '/v1/agent/*']) {
    app.route({
      method: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'],
      url,
      schema: { tags: ['agent'], summary: 'AI authoring (not available)', response: errorResponses(501) },
      handler: async () => {
        throw new AppError('NOT_IMPLEMENTED', MESSAGE);
      },
    });
  }
}
