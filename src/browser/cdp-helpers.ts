/** Small helpers for driving CDP sessions under deadlines. */
import { open, rm, type FileHandle } from 'node:fs/promises';
import type { CDPSession } from 'puppeteer-core';
import { spillWriteError, writeAll, type StreamSpill } from './pages/spill-file.js';

/** Settles like `promise`, or rejects with `signal.reason` as soon as the signal aborts. */
export function raceSignal<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    promise.catch(() => {});
    return Promise.reject(signal.reason);
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

/** An AbortSignal that aborts with `reason()` after `ms`; call `clear()` when done. */
export function timeoutSignal(ms: number, reason: () => unknown): { signal: AbortSignal; clear(): void } {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(reason()), Math.max(0, ms));
  return { signal: controller.signal, clear: () => clearTimeout(timer) };
}

/** Resolves with the first `event` for which `accept` returns true. */
export function waitForEvent<T>(
  session: CDPSession,
  event: string,
  accept: (payload: T) => boolean,
  signal: AbortSignal,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const handler = (payload: unknown) => {
      if (!accept(payload as T)) return;
      cleanup();
      resolve(payload as T);
    };
    const onAbort = () => {
      cleanup();
      reject(signal.reason);
    };
    const cleanup = () => {
      session.off(event as never, handler as never);
      signal.removeEventListener('abort', onAbort);
    };
    if (signal.aborted) {
      reject(signal.reason);
      return;
    }
    session.on(event as never, handler as never);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

// Large chunks keep a 5 MB report to one or two round trips; one chunk is ~11 MB as base64, far
// below the DevTools pipe's message bound (devtools-pipe.ts).
const STREAM_CHUNK_BYTES = 8 * 1024 * 1024;

const spillFailed = (error: unknown): never => {
  throw spillWriteError(error);
};

/** A stream as read: in memory, or spilled to the file at `path`. */
export type StreamedBytes = Buffer | { readonly path: string; readonly size: number };

/**
 * Reads a CDP IO stream (e.g. `Page.printToPDF` with `ReturnAsStream`) into one Buffer, counting the
 * bytes as they arrive: past `limit.maxBytes` it stops reading and throws `limit.tooLarge()`, so no
 * more than `maxBytes + 1` bytes are ever held. With `spill`, a stream that reaches `spill.aboveBytes`
 * goes to a file instead, and the answer is that file: then at most one chunk is held at a time. The
 * stream is closed either way (Chromium frees it).
 */
export async function readProtocolStream(
  session: CDPSession,
  handle: string,
  signal: AbortSignal,
  limit?: { maxBytes: number; tooLarge: () => Error },
  spill?: StreamSpill,
): Promise<StreamedBytes> {
  const chunks: Buffer[] = [];
  let total = 0;
  let file: FileHandle | undefined;
  /** Bytes in the spill file so far. */
  let spilled = 0;
  let complete = false;
  try {
    for (;;) {
      // Never ask for more than one byte past the bound: that byte is enough to know it was passed.
      const size = limit ? Math.min(STREAM_CHUNK_BYTES, limit.maxBytes - total + 1) : STREAM_CHUNK_BYTES;
      const { data, base64Encoded, eof } = await raceSignal(session.send('IO.read', { handle, size }), signal);
      const chunk = Buffer.from(data, base64Encoded ? 'base64' : 'utf8');
      total += chunk.length;
      if (limit && total > limit.maxBytes) throw limit.tooLarge();
      chunks.push(chunk);
      if (spill && !file && total >= spill.aboveBytes) file = await open(spill.path, 'w', 0o600).catch(spillFailed);
      if (file) {
        for (const piece of chunks.splice(0)) {
          await writeAll(file, piece, spilled).catch(spillFailed);
          spilled += piece.length;
        }
      }
      if (eof) break;
    }
    complete = true;
  } finally {
    // Fire and forget: nobody waits on the close, and it fails harmlessly if the page is gone.
    session.send('IO.close', { handle }).catch(() => {});
    await file?.close().catch(() => {});
    if (file && !complete) await rm(spill!.path, { force: true }).catch(() => {});
  }
  if (file) return { path: spill!.path, size: total };
  // One chunk (every PDF under STREAM_CHUNK_BYTES) is the PDF already: no copy.
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, total);
}

/**
 * `fn`'s source as a `Runtime.callFunctionOn` declaration of one argument, for a function that runs in
 * the page. tsx compiles with esbuild's keepNames, which wraps inner functions in a `__name(…)` helper
 * the page does not have: a no-op one is provided.
 */
export function pageFunction(fn: (arg: never) => unknown): string {
  return `function (arg) { const __name = (f) => f; return (${fn.toString()})(arg); }`;
}

/** What a page function called in an isolated world gave: its value, or the page's exception text. */
export type WorldCall = (
  fn: string,
  arg: unknown,
  options?: { awaitPromise?: boolean },
) => Promise<{ value?: unknown; error?: string }>;

/**
 * A world of our own in the page's frame (the document's scripts cannot see it), and a way to call a
 * `pageFunction` in it with one argument, its value returned by value.
 */
export async function isolatedWorld(
  session: CDPSession,
  world: { frameId: string; worldName: string; universalAccess?: boolean },
  signal: AbortSignal,
): Promise<WorldCall> {
  const { executionContextId } = await raceSignal(
    session.send('Page.createIsolatedWorld', {
      frameId: world.frameId,
      worldName: world.worldName,
      ...(world.universalAccess ? { grantUniveralAccess: true } : {}),
    }),
    signal,
  );
  return async (fn, arg, options = {}) => {
    const { result, exceptionDetails } = await raceSignal(
      session.send('Runtime.callFunctionOn', {
        executionContextId,
        functionDeclaration: fn,
        arguments: [{ value: arg }],
        awaitPromise: options.awaitPromise ?? false,
        returnByValue: true,
      }),
      signal,
    );
    if (exceptionDetails) return { error: exceptionDetails.exception?.description ?? exceptionDetails.text };
    return { value: result.value };
  };
}
