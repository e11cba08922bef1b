/**
 * The peer harness's plain Chromium, for the bench scripts that measure Chromium itself, without
 * Pressroom (the floor in long-report.ts, print-layout-cost.ts, chromium-faults.ts): the harness's own
 * puppeteer, nunjucks and Chromium flags, so what they measure is the floor the harness runs.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Where bench/run.ts's `preparePeers` copies the peer harness and installs its packages. */
export const PEERS = join(resolve(dirname(fileURLToPath(import.meta.url)), '..'), 'bench', 'out', 'peers');

/** The harness's puppeteer, its fixtures as a nunjucks environment, and its Chromium; call `preparePeers` first. */
export function peerChromium() {
  const peersRequire = createRequire(join(PEERS, 'package.json'));
  const nunjucks = peersRequire('nunjucks');
  const { CHROMIUM_PATH, CHROMIUM_ARGS } = peersRequire('./lib/chromium-args.cjs');
  return {
    puppeteer: peersRequire('puppeteer-core'),
    /** report.html, invoice.html… of the harness's fixtures folder, autoescaped as the harness renders them. */
    fixtures: new nunjucks.Environment(new nunjucks.FileSystemLoader(join(PEERS, 'fixtures')), { autoescape: true }),
    executablePath: CHROMIUM_PATH as string,
    args: CHROMIUM_ARGS as string[],
  };
}

/** A browser of the peers' Chromium on a fresh profile (one document's peak must not be the last one's); `close` removes the profile. */
export async function launchPeerBrowser(name: string) {
  const { puppeteer, executablePath, args } = peerChromium();
  const profile = mkdtempSync(join(tmpdir(), `bench-${name}-`));
  const browser = await puppeteer.launch({
    executablePath,
    args,
    headless: true,
    userDataDir: profile,
    protocolTimeout: 0,
  });
  return {
    browser,
    close: async () => {
      await browser.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** Peak RSS of the renderer processes of Chromium `browserPid`, in MB, while `work` runs (`ps`, every 250 ms). */
export async function rendererPeak<T>(
  browserPid: number,
  work: () => Promise<T>,
): Promise<{ result: T; peakMb: number }> {
  let peakKb = 0;
  const sample = () => {
    try {
      for (const line of execFileSync('ps', ['-o', 'rss=,args=', '--ppid', String(browserPid)], {
        encoding: 'utf8',
      }).split('\n')) {
        if (line.includes('--type=renderer')) peakKb = Math.max(peakKb, Number(line.trim().split(/\s+/)[0]));
      }
      // Renderers of a zygote are its children, one level further down.
      for (const zygote of execFileSync('pgrep', ['-P', String(browserPid)], { encoding: 'utf8' })
        .split('\n')
        .filter(Boolean)) {
        const out = execFileSync('ps', ['-o', 'rss=,args=', '--ppid', zygote], { encoding: 'utf8' });
        for (const line of out.split('\n'))
          if (line.includes('--type=renderer')) peakKb = Math.max(peakKb, Number(line.trim().split(/\s+/)[0]));
      }
    } catch {
      // a process that ended between listing and reading
    }
  };
  const timer = setInterval(sample, 250);
  try {
    const result = await work();
    sample();
    return { result, peakMb: Math.round(peakKb / 1024) };
  } finally {
    clearInterval(timer);
  }
}
