/**
 * `/v1/agent/*`: TemplateFox's AI authoring. Answered 501 (not 404) so clients can tell "not offered here" from "wrong URL";
 * after the API key, as TemplateFox does: without a valid key the answer is 401, like every other operation.
 */
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { AppError } from '../../../shared/errors.js';
import { errorResponses } from '../../schemas.js';

const MESSAGE =
  'AI template authoring (/v1/agent/*) needs a language model, which this self-hosted Pressroom service does not have; write templates with /v1/templates instead.';

const DESCRIPTION =
  'Not available in Pressroom: AI authoring needs a language model this self-hosted service does not have. Answers 501 NOT_IMPLEMENTED to a valid API key (401 without one); write templates with POST /v1/templates.';

/** TemplateFox's agent operations, listed in the OpenAPI document so their clients see why they fail. */
const DOCUMENTED = [
  {
    method: 'POST',
    url: '/v1/agent/templates',
    operationId: 'createAgentTemplate',
    summary: 'Create a template with AI (not available)',
  },
  {
    method: 'GET',
    url: '/v1/agent/jobs/:job_id',
    operationId: 'getAgentJob',
    summary: 'Get an AI authoring job (not available)',
  },
  {
    method: 'POST',
    url: '/v1/agent/templates/:template_id/revise',
    operationId: 'reviseAgentTemplate',
    summary: 'Revise a template with AI (not available)',
  },
] as const;

const notImplemented = async (): Promise<never> => {
  throw new AppError('NOT_IMPLEMENTED', MESSAGE);
};

/** Registers the 501 answer for every method under /v1/agent. */
export function agentRoutes(app: FastifyInstance): void {
  for (const { method, url, operationId, summary } of DOCUMENTED) {
    const params = url.includes(':job_id')
      ? Type.Object({ job_id: Type.String({ description: 'Agent job ID' }) })
      : url.includes(':template_id')
        ? Type.Object({ template_id: Type.String({ description: 'Template ID' }) })
        : undefined;
    app.route({
      method,
      url,
      config: { auth: 'api_key' },
      schema: {
        operationId,
        tags: ['Agent'],
        summary,
        description: DESCRIPTION,
        ...(params ? { params } : {}),
        response: errorResponses(401, 403, 429, 501),
      },
      handler: notImplemented,
    });
  }
  // Every other method and path under /v1/agent answers the same; not listed in the document.
  for (const url of ['/v1/agent', '/v1/agent/*']) {
    app.route({
      method: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'],
      url,
      config: { auth: 'api_key' },
      schema: { hide: true },
      handler: notImplemented,
    });
  }
}
