/**
 * Request body limits by route, and a 413 that every client can read.
 *
 * Limits: the generation routes take PRESSROOM_BODY_LIMIT_BYTES (their `data` may be large), template
 * create and update TEMPLATE_BODY_LIMIT_BYTES, every PDF tool (`POST /v1/pdf-tools/…`, base64 PDFs) 4/3 of
 * PRESSROOM_PDF_TOOLS_MAX_INPUT_BYTES plus 1 MiB, and every other route (unknown ones too)
 * SMALL_BODY_LIMIT_BYTES. The table is here rather than in the route files so that one place
 * says which route may receive how much; a new route gets the small limit until it is listed.
 *
 * Why the answer waits for the body (nginx calls this lingering close): Fastify decides the 413 as
 * soon as Content-Length (or the count of bytes received) is over the limit, and Node closes the socket
 * right after writing the answer. The client is still sending, and a socket closed with unread bytes in
 * its receive buffer makes the kernel send a reset: the client's next write fails with EPIPE or
 * ECONNRESET and most clients give up there, without reading the answer that had already arrived.
 * Python's http.client (send everything, then read) never saw the 413; Node's http.request and fetch
 * lost it whenever the reset came first. So the rest of the body is read and thrown away (counted,
 * never buffered) and only then is the answer written, with `connection: close`: we never reuse a
 * connection whose body we did not parse. Reading is bounded: at most max(DISCARD_FLOOR_BYTES, 2 × the
 * route's limit) bytes and DISCARD_MAX_MS. Past a bound, or when the declared Content-Length is already
 * past it, the answer goes out at once, and a client still sending that much may see a reset instead.
 */
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance, FastifyRequest } from 'fastify';

/**
 * Template create and update: above the 3.2 million characters of text the template schema accepts
 * (html 2 M, css 1 M, header and footer 100 k each), with room for JSON escapes, fields and sample data.
 */
export const TEMPLATE_BODY_LIMIT_BYTES = 4 * 1024 * 1024;

/** Every other route (S3 settings, API keys, admin, unknown routes): their bodies are a few fields. */
export const SMALL_BODY_LIMIT_BYTES = 64 * 1024;

/** The PDF tools' body limit: their inputs in base64 (4/3 of the bytes) plus 1 MiB for the rest of the JSON. */
export function pdfToolsBodyLimitBytes(maxInputBytes: number): number {
  return Math.ceil((maxInputBytes * 4) / 3) + 1024 * 1024;
}

/** The byte limits, as config.http holds them. */
export interface BodyLimits {
  readonly bodyLimitBytes: number;
  readonly templateBodyLimitBytes: number;
  readonly smallBodyLimitBytes: number;
  readonly pdfToolsBodyLimitBytes: number;
}

type BodyLimitClass = 'generation' | 'template' | 'small' | 'pdfTools';

const CLASS_BY_ROUTE: Record<string, BodyLimitClass> = {
  'POST /v1/pdf/create': 'generation',
  'POST /v1/pdf/create-async': 'generation',
  // JSON rows; an uploaded rows file is bounded by the multipart reader instead (BATCH_UPLOAD_MAX_BYTES).
  'POST /v1/pdf/batches': 'generation',
  'POST /v1/image/create': 'generation',
  'POST /v1/templates/preview': 'generation',
  // An MCP message carries one tool call: a generation's data, a template's text or a PDF tool's input by URL.
  'POST /mcp': 'generation',
  'POST /v1/templates': 'template',
  'POST /v1/templates/fields': 'template',
  'PUT /v1/templates/:template_id': 'template',
  // An e-invoice file (XML or PDF) in base64, within the PDF tools' input bound.
  'POST /v1/einvoice/validate': 'pdfTools',
};

/** Each class's limit, and where it comes from (said in the 413). */
const LIMIT_BY_CLASS: Record<BodyLimitClass, { key: keyof BodyLimits; source: string }> = {
  generation: { key: 'bodyLimitBytes', source: 'the server sets this limit with PRESSROOM_BODY_LIMIT_BYTES' },
  template: { key: 'templateBodyLimitBytes', source: 'a fixed limit, above the largest template the API accepts' },
  small: { key: 'smallBodyLimitBytes', source: 'a fixed limit for requests of a few fields' },
  pdfTools: {
    key: 'pdfToolsBodyLimitBytes',
    source: 'the server sets this limit with PRESSROOM_PDF_TOOLS_MAX_INPUT_BYTES',
  },
};

/** An oversized body is read and thrown away up to the larger of this and twice the route's limit… */
const DISCARD_FLOOR_BYTES = 32 * 1024 * 1024;
/** …and for at most this long (nginx's lingering_time is 30 s too). */
const DISCARD_MAX_MS = 30_000;

/** Every PDF tool takes its input as a PDF in base64: the tools' class, whatever tool is added next. */
const PDF_TOOLS_PREFIX = '/v1/pdf-tools/';

function classOf(method: string | string[] | undefined, url: string | undefined): BodyLimitClass {
  const methods = Array.isArray(method) ? method : [method ?? ''];
  for (const m of methods) {
    const found = CLASS_BY_ROUTE[`${m.toUpperCase()} ${url ?? ''}`];
    if (found) return found;
    if (m.toUpperCase() === 'POST' && url?.startsWith(PDF_TOOLS_PREFIX)) return 'pdfTools';
  }
  return 'small';
}

/** Gives every route registered after this call the body limit of its class (a route's own `bodyLimit` wins). */
export function registerBodyLimits(app: FastifyInstance, limits: BodyLimits): void {
  app.addHook('onRoute', (route) => {
    if (route.bodyLimit === undefined) route.bodyLimit = limits[LIMIT_BY_CLASS[classOf(route.method, route.url)].key];
  });
}

function readableSize(bytes: number): string {
  if (bytes % (1024 * 1024) === 0) return ` (${bytes / (1024 * 1024)} MiB)`;
  if (bytes % 1024 === 0) return ` (${bytes / 1024} KiB)`;
  return '';
}

/** The 413 message: the limit that applied to this route and where it comes from. */
export function payloadTooLargeMessage(request: FastifyRequest): string {
  const { method, url, bodyLimit } = request.routeOptions;
  const route = url ? `${request.method} ${url}` : 'this route';
  const { source } = LIMIT_BY_CLASS[classOf(method, url)];
  return `The request body is larger than the limit of ${bodyLimit} bytes${readableSize(bodyLimit)} for ${route}. Send a smaller body (${source}).`;
}

/** What discarding the rest of a body saw. */
export interface DiscardedBody {
  /** The body was read to its end: nothing of it is left on the connection. */
  complete: boolean;
  /** Declared or counted, the body is larger than the route's limit. */
  overLimit: boolean;
}

function declaredLength(raw: IncomingMessage): number | undefined {
  const header = raw.headers['content-length'];
  return header === undefined || !/^\d+$/.test(header) ? undefined : Number(header);
}

/** Reads what is left of `raw` and drops it; stops at its end, at `maxBytes` or `maxMs`, or when the client goes away. */
function drain(raw: IncomingMessage, maxBytes: number, maxMs: number): Promise<{ bytes: number; complete: boolean }> {
  return new Promise((resolve) => {
    if (raw.readableEnded) return resolve({ bytes: 0, complete: true });
    if (raw.destroyed) return resolve({ bytes: 0, complete: false });
    let bytes = 0;
    const finish = (complete: boolean) => {
      clearTimeout(timer);
      raw.off('data', onData).off('end', onEnd).off('close', onGone).off('error', onGone);
      resolve({ bytes, complete });
    };
    const onData = (chunk: Buffer) => {
      bytes += chunk.length;
      if (bytes > maxBytes) finish(false);
    };
    const onEnd = () => finish(true);
    const onGone = () => finish(false);
    const timer = setTimeout(() => finish(false), maxMs).unref();
    raw.on('data', onData).once('end', onEnd).once('close', onGone).once('error', onGone);
    raw.resume();
  });
}

/**
 * Reads the rest of the request body and throws it away, within the bounds above, so that an answer
 * written afterwards reaches the client; resolves when the answer may go out.
 */
export async function discardRequestBody(request: FastifyRequest): Promise<DiscardedBody> {
  const limit = request.routeOptions.bodyLimit;
  const maxBytes = Math.max(DISCARD_FLOOR_BYTES, 2 * limit);
  const declared = declaredLength(request.raw);
  if (declared !== undefined && declared > maxBytes) return { complete: false, overLimit: true };
  const { bytes, complete } = await drain(request.raw, maxBytes, DISCARD_MAX_MS);
  return { complete, overLimit: (declared ?? 0) > limit || bytes > limit };
}
