/**
 * One HTTP attempt of a webhook: POST the stored body through the outbound guard. Success is a 2xx and
 * nothing else: redirects are not followed (a 3xx is a failure: an answer is not an instruction to send
 * the payload elsewhere), and the whole attempt, connect to last byte, has one deadline.
 */
import { request, type Dispatcher } from 'undici';
import { findOutboundBlockedError } from '../net/outbound-blocked-error.js';

/** What happened to one attempt. `error` is for the operator's log and the delivery row. */
export type SendOutcome = { ok: true; status: number } | { ok: false; status: number | null; error: string };

/** Longest response body we read (and discard): receivers should answer quickly and briefly. */
const RESPONSE_LIMIT_BYTES = 64 * 1024;

/** Makes one attempt; never throws (every failure is an outcome). */
export async function sendWebhook(
  dispatcher: Dispatcher,
  input: { url: string; headers: Record<string, string>; body: string; timeoutMs: number },
): Promise<SendOutcome> {
  const signal = AbortSignal.timeout(input.timeoutMs);
  try {
    // undici's request() never follows redirects (that takes an interceptor we do not install).
    const response = await request(input.url, {
      method: 'POST',
      headers: input.headers,
      body: input.body,
      dispatcher,
      signal,
    });
    await response.body.dump({ limit: RESPONSE_LIMIT_BYTES }).catch(() => undefined);
    if (response.statusCode >= 200 && response.statusCode < 300) return { ok: true, status: response.statusCode };
    return { ok: false, status: response.statusCode, error: `receiver answered HTTP ${response.statusCode}` };
  } catch (error) {
    const blocked = findOutboundBlockedError(error);
    if (blocked) return { ok: false, status: null, error: `refused by the outbound guard: ${blocked.reason}` };
    if (signal.aborted) return { ok: false, status: null, error: `no answer within ${input.timeoutMs} ms` };
    const e = error as Error & { code?: string; cause?: { code?: string; message?: string } };
    return {
      ok: false,
      status: null,
      error: `connection failed: ${e.code ?? e.cause?.code ?? ''} ${e.message}`.replace(/\s+/g, ' ').trim(),
    };
  }
}
