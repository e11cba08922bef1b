/**
 * The only code → HTTP status table, and the error handler that writes every error envelope:
 * coded `{error, message}`, or FastAPI's 422 `{detail: [{loc, msg, type}]}` for validation.
 * Causes are logged; clients get the safe message (never a stack trace).
 */
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { isDatabaseUnavailable } from '../db/retryable-errors.js';
import { AppError, DetailError, ValidationError, type ErrorCode, type ValidationIssue } from '../shared/errors.js';
import { AjvValidationError, ajvIssues } from './validation.js';
import { discardRequestBody, payloadTooLargeMessage } from './body-limits.js';

export const STATUS_BY_CODE: Record<ErrorCode, number> = {
  INVALID_REQUEST: 400,
  UNAUTHORIZED: 401,
  INSUFFICIENT_CREDITS: 402,
  FORBIDDEN: 403,
  LINK_EXPIRED: 403,
  LINK_INVALID: 403,
  NOT_FOUND: 404,
  TEMPLATE_NOT_FOUND: 404,
  JOB_NOT_FOUND: 404,
  BATCH_NOT_FOUND: 404,
  VERSION_NOT_FOUND: 404,
  ACCOUNT_NOT_FOUND: 404,
  API_KEY_NOT_FOUND: 404,
  FILE_NOT_FOUND: 404,
  S3_NOT_CONFIGURED: 404,
  CERTIFICATE_NOT_FOUND: 404,
  CERTIFICATE_EXISTS: 409,
  IDEMPOTENCY_KEY_IN_USE: 409,
  LAST_API_KEY: 409,
  VERSION_TAG_EXISTS: 409,
  ASSET_IN_USE: 409,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  IDEMPOTENCY_KEY_REUSED: 422,
  BALANCE_LIMIT_EXCEEDED: 422,
  TEMPLATE_SYNTAX_ERROR: 422,
  TEMPLATE_RENDER_ERROR: 422,
  TEMPLATE_TIMEOUT: 422,
  TEMPLATE_OUTPUT_TOO_LARGE: 422,
  DOCUMENT_TOO_LARGE: 422,
  DOCUMENT_TOO_LONG_FOR_SYNC: 422,
  PDF_TOO_COMPLEX: 422,
  XML_TOO_COMPLEX: 422,
  RATE_LIMITED: 429,
  INTERNAL_ERROR: 500,
  JOB_INTERRUPTED: 500,
  RENDER_FAILED: 500,
  PDFA_CONVERSION_FAILED: 500,
  PDF_TOOL_FAILED: 500,
  SIGNING_FAILED: 500,
  NOT_IMPLEMENTED: 501,
  STORAGE_ERROR: 502,
  S3_UPLOAD_FAILED: 502,
  TSA_FAILED: 502,
  SERVICE_UNAVAILABLE: 503,
  EINVOICE_RULES_MISSING: 503,
  EINVOICE_RULES_DAMAGED: 503,
  RENDERER_BUSY: 503,
  RENDER_TIMEOUT: 504,
  PDF_TOOL_TIMEOUT: 504,
  SIGNING_TIMEOUT: 504,
};

export function sendValidationError(reply: FastifyReply, issues: ValidationIssue[]): FastifyReply {
  return reply.code(422).send({ detail: issues });
}

export function sendCodedError(
  reply: FastifyReply,
  code: ErrorCode,
  message: string,
  extra?: Record<string, unknown>,
): FastifyReply {
  return reply.code(STATUS_BY_CODE[code]).send({ error: code, message, ...extra });
}

/** 413, with the connection closed after it: the rest of the body was thrown away, not parsed (http/body-limits.ts). */
function sendPayloadTooLarge(request: FastifyRequest, reply: FastifyReply): void {
  reply.header('connection', 'close');
  sendCodedError(reply, 'PAYLOAD_TOO_LARGE', payloadTooLargeMessage(request));
}

/**
 * Answers a refused body only once its rest has been read and thrown away, so that a client still
 * sending it can read the answer (http/body-limits.ts). A body in a media type no route takes is a 413
 * when it is over the route's limit too, so an oversized body always gets the same answer.
 */
async function answerRefusedBody(error: FastifyError, request: FastifyRequest, reply: FastifyReply): Promise<void> {
  const body = await discardRequestBody(request);
  if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE' || body.overLimit) return sendPayloadTooLarge(request, reply);
  if (!body.complete) reply.header('connection', 'close');
  sendCodedError(reply, 'UNSUPPORTED_MEDIA_TYPE', 'Send the request body as application/json.');
}

/** Client-safe extras from AppError details (template line numbers, retry hints). */
function publicDetails(error: AppError): Record<string, unknown> | undefined {
  const details = error.details;
  if (!details) return undefined;
  const out: Record<string, unknown> = {};
  // Template errors (and the header/footer bound): which part (html, css, header, footer), line and column, as fields (issue 13).
  if (typeof details.part === 'string') out.part = details.part;
  if (details.line !== undefined) out.line = details.line;
  if (details.column !== undefined) out.column = details.column;
  // DOCUMENT_TOO_LARGE: which bound (bytes, pages, image_pixels, memory, layers, header_footer), for clients that branch on it.
  if (typeof details.bound === 'string') out.bound = details.bound;
  return Object.keys(out).length > 0 ? out : undefined;
}

export function errorHandler(
  error: FastifyError | Error,
  request: FastifyRequest,
  reply: FastifyReply,
): FastifyReply | Promise<void> {
  if (error instanceof AjvValidationError) return sendValidationError(reply, ajvIssues(error.errors, error.httpPart));
  if (error instanceof ValidationError) return sendValidationError(reply, error.issues);
  if (error instanceof DetailError) return reply.code(error.status).send({ detail: error.message });
  if (error instanceof AppError) {
    const status = STATUS_BY_CODE[error.code];
    if (status >= 500) request.log.error({ err: error, cause: error.cause }, error.message);
    else request.log.info({ code: error.code }, error.message);
    const retryAfter = error.details?.retryAfterSeconds;
    if (retryAfter !== undefined) reply.header('retry-after', String(retryAfter));
    return sendCodedError(reply, error.code, error.message, publicDetails(error));
  }
  const fastifyError = error as FastifyError;
  switch (fastifyError.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return answerRefusedBody(fastifyError, request, reply);
    case 'FST_ERR_BAD_URL':
      // Before routing (frameworkErrors in app.ts): a path Fastify cannot decode, answered in our shape.
      return sendCodedError(
        reply,
        'INVALID_REQUEST',
        'The address is not a valid URL: each % in it must be followed by two hexadecimal digits (a % itself is written %25).',
      );
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return sendValidationError(reply, [{ loc: ['body'], msg: 'Field required', type: 'missing' }]);
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return sendValidationError(reply, [
        { loc: ['body'], msg: `JSON decode error: ${error.message}`, type: 'json_invalid' },
      ]);
    default:
      break;
  }
  if (error instanceof SyntaxError && (fastifyError.statusCode === 400 || /JSON/.test(error.message))) {
    return sendValidationError(reply, [
      { loc: ['body'], msg: `JSON decode error: ${error.message}`, type: 'json_invalid' },
    ]);
  }
  if (isDatabaseUnavailable(error)) {
    request.log.error({ err: error }, 'database unavailable');
    reply.header('retry-after', '5');
    return sendCodedError(reply, 'SERVICE_UNAVAILABLE', 'The database is unavailable; retry in a few seconds.');
  }
  if (typeof fastifyError.statusCode === 'number' && fastifyError.statusCode >= 400 && fastifyError.statusCode < 500) {
    return sendCodedError(reply, 'INVALID_REQUEST', error.message);
  }
  request.log.error({ err: error }, 'unhandled error');
  return sendCodedError(
    reply,
    'INTERNAL_ERROR',
    `An internal error occurred. Quote request id ${request.id} when reporting it.`,
  );
}
