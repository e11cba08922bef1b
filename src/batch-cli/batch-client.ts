/**
 * The batch API as the command uses it (docs/batches.md), over HTTP with Node's fetch, never the
 * service's own modules. Answers are read within a size bound. A 429 or 503 is waited out as its
 * `Retry-After` says; reads and the cancel are also retried across a dropped connection or a
 * gateway error (a restarting service), the creation is not (it could make two batches).
 */
import { openAsBlob } from 'node:fs';
import type { RowsBody } from './rows/rows-file.js';

/** Largest answer read: a page of 1000 items with their links and errors is well under it. */
const MAX_ANSWER_BYTES = 32 * 1024 * 1024;
/** Tries of one request before its failure is the command's. */
const MAX_ATTEMPTS = 6;
/** Longest wait honoured from a Retry-After, and the back-off's ceiling. */
const MAX_WAIT_MS = 60_000;

/** A batch as `GET /v1/pdf/batches/{id}` answers it (the fields the command reads). */
export interface BatchState {
  batch_id: string;
  status:
    | 'pending'
    | 'processing'
    | 'cancelling'
    | 'assembling'
    | 'completed'
    | 'completed_with_errors'
    | 'failed'
    | 'cancelled';
  total: number;
  completed: number;
  failed: number;
  cancelled: number;
  estimated_seconds_left: number | null;
  result: { url?: string; filename?: string } | null;
}

/** One item of `GET /v1/pdf/batches/{id}/items`. */
export interface BatchItem {
  index: number;
  status: 'pending' | 'processing' | 'completed' | 'failed' | 'cancelled';
  filename: string | null;
  url: string | null;
  error: unknown;
}

export interface ItemsPage {
  items: BatchItem[];
  total: number;
}

/** The service answered with an error status; `body` is its JSON ({error, message} or {detail}) or text. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: unknown,
  ) {
    super(`HTTP ${status}`);
  }
}

/** The service could not be reached, or answered something that is not the batch API. */
export class ServiceUnreachableError extends Error {}

/** A batch's options besides its rows. */
export interface BatchRequest {
  templateId: string;
  version: string | undefined;
  output: 'links' | 'zip' | 'merged';
  rows: RowsBody;
}

export type BatchClient = ReturnType<typeof createBatchClient>;

/** A client for the service at `baseUrl` with `apiKey` (sent only to it, never to a download link). */
export function createBatchClient(options: { baseUrl: string; apiKey: string }) {
  const base = options.baseUrl.replace(/\/+$/, '');
  const call = async (
    method: string,
    path: string,
    body: (() => Promise<Blob | FormData>) | undefined,
    retryDrops: boolean,
  ): Promise<unknown> => {
    for (let attempt = 1; ; attempt++) {
      let response: Response;
      try {
        response = await fetch(`${base}${path}`, {
          method,
          headers: { 'x-api-key': options.apiKey, accept: 'application/json' },
          body: body ? await body() : undefined,
        });
      } catch (error) {
        if (!retryDrops || attempt >= MAX_ATTEMPTS)
          throw new ServiceUnreachableError(`${method} ${base}${path}: ${causeOf(error)}`);
        await sleep(backoffMs(attempt));
        continue;
      }
      const answer = await readAnswer(response);
      if (response.ok) return answer;
      const waitable =
        response.status === 429 ||
        response.status === 503 ||
        (retryDrops && (response.status === 502 || response.status === 504));
      if (!waitable || attempt >= MAX_ATTEMPTS) throw new ApiError(response.status, answer);
      await sleep(retryAfterMs(response) ?? backoffMs(attempt));
    }
  };
  return {
    /** `POST /v1/pdf/batches`: the rows as a multipart upload, or as JSON `items`. */
    async createBatch(request: BatchRequest): Promise<{ batch_id: string; total: number }> {
      return (await call('POST', '/v1/pdf/batches', () => batchBody(request), false)) as {
        batch_id: string;
        total: number;
      };
    },
    async getBatch(batchId: string): Promise<BatchState> {
      return (await call('GET', `/v1/pdf/batches/${encodeURIComponent(batchId)}`, undefined, true)) as BatchState;
    },
    async listItems(
      batchId: string,
      query: { status: BatchItem['status']; offset: number; limit: number },
    ): Promise<ItemsPage> {
      const search = new URLSearchParams({
        status: query.status,
        offset: String(query.offset),
        limit: String(query.limit),
      });
      return (await call(
        'GET',
        `/v1/pdf/batches/${encodeURIComponent(batchId)}/items?${search}`,
        undefined,
        true,
      )) as ItemsPage;
    },
    async cancel(batchId: string): Promise<BatchState> {
      return (await call(
        'POST',
        `/v1/pdf/batches/${encodeURIComponent(batchId)}/cancel`,
        undefined,
        true,
      )) as BatchState;
    },
  };
}

async function batchBody(request: BatchRequest): Promise<Blob | FormData> {
  const { rows } = request;
  if (rows.kind === 'items') {
    return new Blob(
      [
        JSON.stringify({
          template_id: request.templateId,
          version: request.version,
          output: request.output,
          items: rows.items,
        }),
      ],
      { type: 'application/json' },
    );
  }
  const form = new FormData();
  form.set('template_id', request.templateId);
  if (request.version !== undefined) form.set('version', request.version);
  form.set('output', request.output);
  // A file-backed Blob: the upload streams from disk, however large the rows file.
  form.set('rows', await openAsBlob(rows.path, { type: rows.mediaType }), rows.fileName);
  return form;
}

/** The answer's JSON (or text), read up to MAX_ANSWER_BYTES. */
async function readAnswer(response: Response): Promise<unknown> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  if (response.body) {
    for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
      size += chunk.byteLength;
      if (size > MAX_ANSWER_BYTES)
        throw new ServiceUnreachableError(
          `an answer from ${response.url} is larger than ${MAX_ANSWER_BYTES} bytes: is --url a Pressroom service?`,
        );
      chunks.push(chunk);
    }
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if ((response.headers.get('content-type') ?? '').includes('application/json')) {
    try {
      return JSON.parse(text);
    } catch {
      // fall through: shown as text
    }
  }
  if (response.ok)
    throw new ServiceUnreachableError(
      `${response.url} answered ${response.status} without JSON: is --url a Pressroom service?`,
    );
  return text.slice(0, 2000);
}

function retryAfterMs(response: Response): number | undefined {
  const seconds = Number(response.headers.get('retry-after'));
  return Number.isFinite(seconds) && seconds >= 0 ? Math.min(seconds * 1000, MAX_WAIT_MS) : undefined;
}

function backoffMs(attempt: number): number {
  return Math.min(1000 * 2 ** (attempt - 1), MAX_WAIT_MS);
}

/** A network error's own words (fetch wraps them in "fetch failed"). */
export function causeOf(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (error as Error).message ?? String(error);
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
