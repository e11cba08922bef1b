/** Test helpers for the rendering tests: renderer options, a tripwire listener, process lookups; PDF reading from pdf-tools.ts. */
import { readdirSync, readFileSync } from 'node:fs';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import type { Config } from '../../src/config.js';
import { createLogger } from '../../src/shared/log.js';
import { createPdfRenderer, type PdfRenderer, type RendererDependencies } from '../../src/rendering/pdf-renderer.js';

/**
 * Renderer options for tests. The limits are generous: on a busy 2-core machine even a one-line
 * template can take over 1.5 s to evaluate (seen), so a test that wants a runaway stopped quickly
 * sets its own short `templateTimeoutMs`.
 */
export function testOptions(overrides: Partial<Config['rendering']> = {}): Config['rendering'] {
  return {
    chromiumPath: process.env.PRESSROOM_CHROMIUM_PATH ?? '/usr/bin/chromium',
    concurrency: 2,
    queueLimit: 20,
    timeoutMs: 30_000,
    templateTimeoutMs: 10_000,
    asyncTimeoutMs: 300_000,
    printMsPerPage: { tagged: 120, untagged: 50 },
    templateOutputLimitBytes: 2 * 1024 * 1024,
    recycleAfterRenders: 10_000,
    evaluator: 'compartment',
    // The service's defaults (config.ts); tests of the bounds set their own, low ones.
    maxDocumentBytes: 100 * 1024 * 1024,
    maxPages: 2000,
    maxImagePixels: 100_000_000,
    rendererMemoryMb: 2048,
    ...overrides,
  };
}

/** A renderer with test options and a silent logger (set TEST_LOG=debug to see it). */
export function testRenderer(overrides: Partial<Config['rendering']> = {}, dependencies: RendererDependencies = {}): PdfRenderer {
  return createPdfRenderer(testOptions(overrides), createLogger(process.env.TEST_LOG ?? 'silent'), dependencies);
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
export async function startTestRenderer(overrides: Partial<Config['rendering']> = {}, dependencies: RendererDependencies = {}): Promise<PdfRenderer> {
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
