/**
 * Starts one headless Chromium with the flags that make it a closed room, in a fresh profile
 * directory, and ends it without leaving a process or a directory behind.
 */
import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import puppeteer, { type Browser, type CDPSession } from 'puppeteer-core';
import { createLogger, type Logger } from '../shared/log.js';
import { assertExecutable, launchFailed } from './chromium-start-error.js';
import { spawnChromium, type ChromiumProcess } from './chromium-process.js';
import { DevToolsPipeTransport } from './devtools-pipe.js';

/** A launched browser plus what is needed to take it down completely. */
export interface LaunchedChromium {
  readonly browser: Browser;
  /** Session on the browser target: creates targets and browser contexts. */
  readonly root: CDPSession;
  readonly pid: number | undefined;
  readonly profileDir: string;
  /** Closes gracefully, then SIGKILLs, then removes the profile; never throws. */
  shutdown(): Promise<void>;
  /** SIGKILLs the process group at once, for a browser that may not close (`shutdown()` still removes the profile); never throws. */
  kill(): Promise<void>;
}

export interface LaunchOptions {
  executablePath: string;
  /** Port of the in-process sinkhole that stands in for every network destination. */
  sinkholePort: number;
  /** Upper bound for any single CDP command; our own deadlines are shorter. */
  protocolTimeoutMs: number;
  /** Abandons a launch still under way: the starting browser is killed and the launch fails. */
  signal?: AbortSignal;
  /** Where DevTools pipe trouble is logged. @defaultValue silent */
  logger?: Logger;
  /** Largest DevTools message taken from Chromium. @defaultValue MAX_DEVTOOLS_MESSAGE_BYTES (tests set less) */
  maxMessageBytes?: number;
}

/** The flags, with why each one is there. Exported for tests. */
export function chromiumArgs(sinkholePort: number): string[] {
  // Chromium takes one --js-flags switch (the last wins), so all V8 flags go into this one.
  const v8Flags = [
    // A template or script allocating without end hits this per-isolate cap (and is stopped) long
    // before it can take gigabytes from the host.
    '--max-old-space-size=1024',
  ];
  const args = [
    '--disable-gpu',
    '--disable-dev-shm-usage', // /dev/shm is tiny in containers
    '--no-first-run',
    '--no-default-browser-check',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
    '--disable-quic',
    '--disable-extensions',
    '--disable-default-apps',
    '--mute-audio',
    '--hide-scrollbars',
    // All traffic goes to a proxy that accepts and drops every connection. `<-loopback>` removes the
    // implicit bypass for localhost/127.0.0.1/[::1], which would otherwise go direct.
    `--proxy-server=http://127.0.0.1:${sinkholePort}`,
    '--proxy-bypass-list=<-loopback>',
    // No name resolves, so nothing can be reached by name even if a path ignored the proxy.
    '--host-resolver-rules=MAP * ~NOTFOUND',
    // WebRTC may use UDP outside the proxy; only proxied (i.e. no) UDP is allowed.
    '--webrtc-ip-handling-policy=disable_non_proxied_udp',
    '--force-webrtc-ip-handling-policy',
    `--js-flags=${v8Flags.join(' ')}`,
    '--disable-breakpad',
    '--disable-crash-reporter',
    // Remote resources (issue 13): a document at our https origin may name `http://` images, fonts
    // and stylesheets. Chromium would block the fonts and stylesheets as mixed content and rewrite
    // the images to https; with these the request reaches the closed room as written, and the
    // service fetches it through the outbound guard (or refuses it). The page still reaches nothing.
    '--allow-running-insecure-content',
    // A document that navigates away must not be kept alive (frozen) in the back/forward cache.
    // IntensiveWakeUpThrottling would slow timers in pages hidden for more than 5 minutes.
    '--disable-features=BackForwardCache,IntensiveWakeUpThrottling,MediaRouter,DialMediaRouteProvider,OptimizationHints,Translate,AutoupgradeMixedContent',
  ];
  // Chromium refuses to start as root with its sandbox on; elsewhere keep it.
  if (process.getuid?.() === 0) args.unshift('--no-sandbox');
  return args;
}

const PROFILE_PREFIX = 'pressroom-chromium-';
/** A profile nobody uses and untouched this long belonged to a process that was killed (SIGKILL). */
const STALE_PROFILE_AGE_MS = 10 * 60_000;
let sweep: Promise<void> | undefined;

/** Chromium has this long to answer on the DevTools pipe after it was spawned. */
const START_TIMEOUT_MS = 30_000;

/** The command line: puppeteer's defaults (as `puppeteer.launch` would use them), our flags, the pipe. */
function launchArgs(sinkholePort: number, profileDir: string): string[] {
  const defaults = puppeteer.defaultArgs({ headless: true, userDataDir: profileDir, args: chromiumArgs(sinkholePort) });
  // Puppeteer turns popup blocking off by default; a scripted document must not open windows.
  return [...defaults.filter((arg) => arg !== '--disable-popup-blocking'), '--remote-debugging-pipe'];
}

/**
 * Launches Chromium (new headless mode, pipe transport so no DevTools port is opened) and connects
 * puppeteer to it over our bounded pipe transport (`devtools-pipe.ts`). Fails with a
 * `ChromiumStartError` saying whether the path is missing, not executable, or not a Chromium that starts.
 */
export async function launchChromium(options: LaunchOptions): Promise<LaunchedChromium> {
  await assertExecutable(options.executablePath);
  sweep ??= sweepStaleProfiles().catch(() => {});
  const profileDir = await mkdtemp(join(tmpdir(), PROFILE_PREFIX));
  const logger = options.logger ?? createLogger('silent');
  let chromium: ChromiumProcess | undefined;
  let browser: Browser;
  try {
    options.signal?.throwIfAborted();
    chromium = spawnChromium(options.executablePath, launchArgs(options.sinkholePort, profileDir));
    const transport = new DevToolsPipeTransport(
      chromium.toBrowser,
      chromium.fromBrowser,
      logger,
      options.maxMessageBytes,
    );
    const connecting = puppeteer.connect({
      transport,
      protocolTimeout: options.protocolTimeoutMs,
      // We drive pages with raw CDP sessions; puppeteer attaching to every page and worker on its
      // own would add round trips (and hold workers until it resumes them).
      targetFilter: (target) => target.type() === 'browser',
      defaultViewport: null,
    });
    browser = await untilConnected(connecting, chromium, options.signal);
  } catch (error) {
    await chromium?.kill();
    await Promise.race([chromium?.exited, delay(5_000)]);
    await rm(profileDir, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 }).catch(() => {});
    // An abandoned launch (the renderer closing) is not a browser that failed to start.
    throw options.signal?.aborted ? error : launchFailed(options.executablePath, error);
  }
  const started = chromium;
  let root: CDPSession;
  try {
    // The blank tab Chromium opens at start stays: as the window's visible tab it keeps our pooled
    // pages (opened in the background) hidden, and a hidden page is not composited or painted for
    // the screen, which saves CPU on every document (docs/performance-log/2026-11-22-to-28-service.md).
    root = await browser.target().createCDPSession();
  } catch (error) {
    await killAndRemove(browser, started, profileDir);
    throw launchFailed(options.executablePath, error);
  }
  let shutdownPromise: Promise<void> | undefined;
  return {
    browser,
    root,
    pid: started.pid,
    profileDir,
    shutdown: () => (shutdownPromise ??= killAndRemove(browser, started, profileDir)),
    kill: () => started.kill(),
  };
}

/** The connected browser, unless Chromium exits first, stays silent too long, or the launch is abandoned. */
async function untilConnected(
  connecting: Promise<Browser>,
  chromium: ChromiumProcess,
  signal: AbortSignal | undefined,
): Promise<Browser> {
  // Whoever loses the race below: a browser connected too late is closed with the process.
  connecting.catch(() => {});
  let timer: NodeJS.Timeout | undefined;
  const failures = [
    chromium.exited.then((how) =>
      Promise.reject(
        new Error(`${how} before answering on the DevTools pipe; stderr: ${chromium.stderrTail().trim().slice(-300)}`),
      ),
    ),
    new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`no answer on the DevTools pipe within ${START_TIMEOUT_MS} ms`)),
        START_TIMEOUT_MS,
      );
    }),
  ];
  if (signal)
    failures.push(
      new Promise<never>((_, reject) => {
        if (signal.aborted) reject(signal.reason);
        signal.addEventListener('abort', () => reject(signal.reason), { once: true });
      }),
    );
  try {
    return await Promise.race([connecting, ...failures]);
  } finally {
    clearTimeout(timer);
  }
}

async function killAndRemove(browser: Browser, chromium: ChromiumProcess, profileDir: string): Promise<void> {
  try {
    await Promise.race([browser.close(), chromium.exited, delay(5_000)]);
  } catch {
    // Already disconnected (crashed or killed): fall through to the kill.
  }
  // The whole group: a zygote or renderer must not outlive its browser.
  await chromium.kill();
  await Promise.race([chromium.exited, delay(5_000)]);
  // Chromium may still be writing into the profile for a moment after exit; retry the removal.
  await rm(profileDir, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 }).catch(() => {});
}

/**
 * Removes profile directories left by an earlier process that was killed before it could clean up.
 * Linux only (reads /proc): a directory is stale when no running process names it and it is old.
 */
async function sweepStaleProfiles(): Promise<void> {
  const candidates = (await readdir(tmpdir()))
    .filter((name) => name.startsWith(PROFILE_PREFIX))
    .map((name) => join(tmpdir(), name));
  if (candidates.length === 0) return;
  const commandLines: string[] = [];
  for (const pid of await readdir('/proc')) {
    if (/^\d+$/.test(pid)) commandLines.push(await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => ''));
  }
  for (const dir of candidates) {
    if (commandLines.some((line) => line.includes(dir))) continue;
    const info = await stat(dir).catch(() => undefined);
    if (info && Date.now() - info.mtimeMs > STALE_PROFILE_AGE_MS)
      await rm(dir, { recursive: true, force: true }).catch(() => {});
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
