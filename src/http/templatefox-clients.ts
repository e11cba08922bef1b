/**
 * TemplateFox's Go SDK decodes every answer into its model with `DisallowUnknownFields` (the
 * openapi-generator Go client it is generated with): one property its model does not list fails the
 * whole call. Read from the SDK's source (`model_create_pdf_response.go`, `model_job_status_response.go`,
 * `model_account_info_response.go`). Pressroom adds a few properties to TemplateFox's answers — a
 * document's `warnings`, a job's `version`, the account's `account_id` and `plan` — so for a client that
 * identifies itself as that generator's Go client (`User-Agent: OpenAPI-Generator/<version>/go`, the
 * SDK's default) these answers keep to TemplateFox's properties; warnings still reach it in the
 * `X-Pressroom-Warnings` headers. Every other client (TemplateFox's Python, Java, TypeScript SDKs, its
 * MCP server and n8n node, which ignore properties they do not know) gets the whole answer.
 */
import type { FastifyRequest } from 'fastify';

const STRICT_GENERATED_CLIENT = /^OpenAPI-Generator\/[^/\s]+\/go\b/i;

/** True for a client that fails on any property TemplateFox's answer does not have. */
export function wantsTemplateFoxPropertiesOnly(request: Pick<FastifyRequest, 'headers'>): boolean {
  return STRICT_GENERATED_CLIENT.test(request.headers['user-agent'] ?? '');
}

/** `body` without Pressroom's `additions` when the client wants TemplateFox's properties only. */
export function templateFoxShape<T extends object, K extends keyof T>(
  request: Pick<FastifyRequest, 'headers'>,
  body: T,
  additions: readonly K[],
): T {
  if (!wantsTemplateFoxPropertiesOnly(request)) return body;
  const copy = { ...body };
  for (const key of additions) delete copy[key];
  return copy;
}
