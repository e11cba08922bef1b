/** Test helpers for the rendering tests: renderer options, a tripwire listener, process lookups; PDF reading from pdf-tools.ts. */
import { readdirSync, readFileSync } from 'node:fs';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import type { Config } from '../../../src/shared/config.js';
import { parseSettings } from '../../../src/config/settings.js';
import { createLogger } from '../../../src/shared/log.js';
import { createPdfRenderer, type PdfRenderer, type RendererDependencies } from '../../../src/rendering/pdf-renderer.js';
import { FAILURE_WINDOW_SECONDS } from '../../../src/rendering/render-fairness.js';
import { PRINT_MS_PER_PAGE } from '../../../src/rendering/render-limits.js';
import {
  REMOTE_RESOURCE_DOCUMENT_MAX_BYTES,
  REMOTE_RESOURCE_DOCUMENT_TIMEOUT_MS,
  REMOTE_RESOURCES_PER_DOCUMENT,
} from '../../../src/rendering/resources/remote-bounds.js';

/** The service's defaults, for the bounds tests leave as they are (the tests of the bounds set their own, low ones). */
const defaults = parseSettings({ PRESSROOM_CHROMIUM_PATH: process.env.PRESSROOM_CHROMIUM_PATH });

/**
 * Renderer options for tests. The limits are generous: on a busy 2-core machine even a one-line
 * template can take over 1.5 s to evaluate (seen), so a test that wants a runaway stopped quickly
 * sets its own short `templateTimeoutMs`.
 */
export function testOptions(overrides: Partial<Config['rendering']> = {}): Config['rendering'] {
  return {
    chromiumPath: defaults.PRESSROOM_CHROMIUM_PATH,
    concurrency: 2,
    queueLimit: 20,
    timeoutMs: 30_000,
    templateTimeoutMs: 10_000,
    asyncTimeoutMs: 300_000,
    printMsPerPage: PRINT_MS_PER_PAGE,
    templateOutputLimitBytes: 2 * 1024 * 1024,
    recycleAfterRenders: 10_000,
    maxDocumentBytes: defaults.PRESSROOM_MAX_DOCUMENT_BYTES,
    maxPages: defaults.PRESSROOM_MAX_PAGES,
    maxImagePixels: defaults.PRESSROOM_MAX_IMAGE_PIXELS,
    rendererMemoryMb: 2048,
    ...overrides,
  };
}

/**
 * The renderer's wiring for engine tests: the service's remote-resource bounds, and slots shared
 * without caps or failure budget (one test is one account; the fairness tests run the whole service).
 */
export function testDependencies(
  options: Config['rendering'],
  given: Partial<RendererDependencies> = {},
): RendererDependencies {
  return {
    remoteBounds: {
      maxPerDocument: REMOTE_RESOURCES_PER_DOCUMENT,
      documentMaxBytes: REMOTE_RESOURCE_DOCUMENT_MAX_BYTES,
      documentTimeoutMs: REMOTE_RESOURCE_DOCUMENT_TIMEOUT_MS,
    },
    fairness: {
      accountSlots: options.concurrency,
      previewSlots: options.concurrency,
      accountQueueLimit: options.queueLimit,
      accountPreviewQueueLimit: options.queueLimit,
      failureBudgetSeconds: Number.MAX_SAFE_INTEGER,
      failureWindowSeconds: FAILURE_WINDOW_SECONDS,
    },
    ...given,
  };
}

/** A renderer with test options and a silent logger (set TEST_LOG=debug to see it). */
export function testRenderer(
  overrides: Partial<Config['rendering']> = {},
  dependencies: Partial<RendererDependencies> = {},
): PdfRenderer {
  const options = testOptions(overrides);
  return createPdfRenderer(
    options,
    createLogger(process.env.TEST_LOG ?? 'silent'),
    testDependencies(options, dependencies),
  );
}

/**
 * `renderer.warmUp()`, tried once more if the launch failed: on an overloaded machine a page can
 * miss the renderer's own start-up deadlines (15–30 s), and the service, too, simply launches again
 * at the next render. A renderer that cannot start twice in a row still fails the test.
 */
export async function warmUpPatiently(renderer: PdfRenderer): Promise<void> {
  try {
    await renderer.warmUp();
  } catch (error) {
    if ((error as { code?: string }).code !== 'RENDER_FAILED') throw error;
    await renderer.warmUp();
  }
}

/** A test renderer, started and warmed up (see `warmUpPatiently`). */
export async function startTestRenderer(
  overrides: Partial<Config['rendering']> = {},
  dependencies: Partial<RendererDependencies> = {},
): Promise<PdfRenderer> {
  const renderer = testRenderer(overrides, dependencies);
  try {
    await warmUpPatiently(renderer);
  } catch (error) {
    await renderer.close();
    throw error;
  }
  return renderer;
}

export { pdfInfo, pdfOutlineTitles, pdfText, pdfTool } from './pdf-tools.js';

/** A TCP listener on every local address that records each connection attempt (it must see none). */
export async function openTripwire(): Promise<{ port: number; hits: () => number; close: () => Promise<void> }> {
  let hits = 0;
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    hits += 1;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.end('HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: 8\r\n\r\nTRIPWIRE');
  });
  // '::' is dual-stack: catches 127.0.0.1, [::1], [::ffff:127.0.0.1] and localhost alike.
  await new Promise<void>((resolve) => server.listen(0, '::', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    hits: () => hits,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** PIDs of live processes whose command line mentions `needle` (e.g. a profile directory). */
export function processesMentioning(needle: string): number[] {
  const found: number[] = [];
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(needle)) found.push(Number(pid));
    } catch {
      // exited meanwhile
    }
  }
  return found;
}

/** Child PIDs (any depth) of `root` whose command line contains `needle`. */
export function descendants(root: number, needle = ''): number[] {
  const parents = new Map<number, number>();
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      parents.set(Number(pid), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // exited
    }
  }
  const result: number[] = [];
  for (const pid of parents.keys()) {
    for (let p = parents.get(pid); p !== undefined && p > 1; p = parents.get(p)) {
      if (p !== root) continue;
      try {
        if (readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(needle)) result.push(pid);
      } catch {
        // exited
      }
      break;
    }
  }
  return result;
}
