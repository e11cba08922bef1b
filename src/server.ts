/**
 * `pressroom serve`: builds the services and the HTTP app, listens, and shuts down in order on
 * SIGTERM/SIGINT: stop accepting and claiming → let in-flight jobs finish within
 * `PRESSROOM_SHUTDOWN_GRACE_MS`, hand the rest back to the queue → release resources in reverse.
 * Workers run here for roles `all` (default) and `worker`; `--role api` runs none. A worker listens on
 * PORT too, for /healthz, /readyz and /metrics only. Every role renders (api: sync generations,
 * worker: jobs), so every role starts the browser before it takes work: /readyz turns ready once
 * Chromium is up, and a browser that cannot start stops the process (exit 1, the reason on stderr and
 * in the log) instead of leaving it "starting" forever with every generation failing.
 */
import { setFlagsFromString } from 'node:v8';
import type { Config } from './shared/config.js';
import { buildApp, buildOpsApp } from './http/app.js';
import { ChromiumStartError } from './browser/chromium-start-error.js';
import { createServices, type Role } from './services.js';
import { isAppError } from './shared/errors.js';
import { createLogger } from './shared/log.js';
import { VERSION } from './version.js';

/**
 * V8 picks how far its heap may grow before the next full collection. For this process, once V8 has
 * shrunk the heap, it picks a factor close to 1 and runs a full collection every few dozen documents,
 * because each document passes large protocol strings (the base64 PDF) through the heap: Node's CPU
 * per document rose by half; with a factor of 4 it did not (the run, `npm run bench:memory` with
 * `--trace-gc`: docs/performance-log/2026-11-23-first-benchmarks.md). V8 reads the flag whenever it
 * recomputes the limit, so setting it at start works; `node --heap-growing-percent=N` on the command line wins.
 */
const HEAP_GROWING_PERCENT = 300;

function tuneHeapGrowth(): void {
  if (process.execArgv.some((arg) => arg.startsWith('--heap-growing-percent'))) return;
  setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
}

/** `warnings`: what start-up found wrong but not fatal (former settings still set, variables that are not settings), logged first. */
export async function runServer(config: Config, role: Role, warnings: readonly string[] = []): Promise<void> {
  tuneHeapGrowth();
  const logger = createLogger(config.logLevel);
  for (const warning of warnings) logger.warn(warning);
  const services = await createServices(config, { logger, role });
  const app = role === 'worker' ? await buildOpsApp(services) : await buildApp(services, { version: VERSION });
  await app.listen({ port: config.http.port, host: config.http.host });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.http.port;

  let stopping: Promise<void> | undefined;
  const stop = (signal: string) => {
    stopping ??= (async () => {
      logger.info({ signal }, 'shutting down');
      const deadline = setTimeout(() => {
        logger.error('shutdown deadline passed; exiting');
        process.exit(1);
      }, config.jobs.shutdownGraceMs + 10_000);
      deadline.unref();
      try {
        // Stop accepting and stop claiming together; in-flight jobs get shutdownGraceMs, then are released.
        await Promise.all([app.close(), services.stopWorkers()]);
        await services.close();
      } finally {
        clearTimeout(deadline);
      }
      logger.info('stopped');
    })();
    return stopping;
  };
  // Registered before the browser starts, so a SIGTERM during the warm-up also ends Chromium.
  process.once('SIGTERM', () => void stop('SIGTERM').then(() => process.exit(0)));
  process.once('SIGINT', () => void stop('SIGINT').then(() => process.exit(0)));

  try {
    await services.renderer.warmUp();
  } catch (error) {
    if (stopping) return; // the warm-up was cut short by a signal; stop() exits
    if (!isBrowserMisconfigured(error)) {
      // The browser started but its pages were slow to open (a busy machine): not a configuration
      // problem. The renderer opens them again on the first render; /readyz says when it is ready.
      logger.warn({ err: error }, 'the browser warm-up did not finish; pages are opened again on the first render');
    } else {
      const message = browserStartFailure(config.rendering.chromiumPath, error);
      logger.fatal({ err: error }, message);
      process.stderr.write(`pressroom: ${message}\n`);
      await stop('browser did not start');
      process.exit(1);
    }
  }
  if (stopping) return;
  if (role !== 'api') services.startWorkers();
  logger.info(
    { role, port, database: config.database.dialect, storage: config.storage.url.split(':')[0], version: VERSION },
    'pressroom started',
  );
}

/** True when the browser itself could not be started (missing, not executable, not a Chromium that starts). */
function isBrowserMisconfigured(error: unknown): boolean {
  for (
    let e: unknown = error, depth = 0;
    e !== undefined && e !== null && depth < 10;
    e = (e as { cause?: unknown }).cause, depth++
  ) {
    if (e instanceof ChromiumStartError) return true;
  }
  return false;
}

/** What an operator reads when the browser did not start: the variable, its value, what is wrong, the fix. */
function browserStartFailure(chromiumPath: string, error: unknown): string {
  const causes: unknown[] = [];
  for (
    let e: unknown = error;
    e !== undefined && e !== null && causes.length < 10;
    e = (e as { cause?: unknown }).cause
  )
    causes.push(e);
  const start = causes.find((e): e is ChromiumStartError => e instanceof ChromiumStartError);
  const setting = `PRESSROOM_CHROMIUM_PATH=${chromiumPath}`;
  const install =
    "install Debian's chromium (apt-get install chromium) or set PRESSROOM_CHROMIUM_PATH to the browser's path";
  if (!start) {
    const innermost = causes.at(-1);
    return `the browser did not start (${setting}): ${innermost instanceof Error ? innermost.message : String(innermost)}; check that it is Chromium and runs here, or ${install}`;
  }
  if (start.problem === 'launch_failed') {
    return `${setting}: ${start.message}; ${install}, and check that \`${chromiumPath} --headless --version\` runs as this user`;
  }
  return `${setting}: ${start.message}; ${install}`;
}
