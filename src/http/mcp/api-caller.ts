/**
 * The MCP tools' one way into the service: the public API itself, called in-process with the caller's
 * API key (`app.inject`). So a tool call is authenticated, counted, rate-limited, validated and charged
 * exactly as the API call it stands for, and its refusals are the API's own. Every POST carries an
 * Idempotency-Key of its own: without one a charge stands only once the answer has left on the HTTP
 * connection (pdf.ts, settleWhenAnswered), and an in-process call has none; with one it stands once the
 * document is delivered, which is what the tool answers.
 */
import { randomUUID } from 'node:crypto';
import type { OutgoingHttpHeaders } from 'node:http';
import type { FastifyInstance } from 'fastify';

/** An API answer: status, parsed JSON (or the raw bytes), and its headers. */
export interface ApiAnswer {
  status: number;
  body: unknown;
  bytes: Buffer;
  headers: OutgoingHttpHeaders;
}

export type ApiCaller = (
  method: 'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH',
  path: string,
  body?: unknown,
) => Promise<ApiAnswer>;

/** Calls the API of `app` as the holder of `apiKey`. */
export function apiCallerFor(app: FastifyInstance, apiKey: string): ApiCaller {
  return async (method, path, body) => {
    const response = await app.inject({
      method,
      url: path,
      headers: {
        'x-api-key': apiKey,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...(method === 'POST' ? { 'idempotency-key': `mcp-${randomUUID()}` } : {}),
      },
      ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
    });
    const bytes = response.rawPayload;
    const type = String(response.headers['content-type'] ?? '');
    const parsed =
      type.includes('application/json') && bytes.length > 0 ? JSON.parse(bytes.toString('utf8')) : undefined;
    return { status: response.statusCode, body: parsed, bytes, headers: response.headers };
  };
}
