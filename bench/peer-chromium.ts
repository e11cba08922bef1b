/**
 * The peer harness's plain Chromium, for the bench scripts that measure Chromium itself, without
 * Pressroom (the floor in long-report.ts, print-layout-cost.ts, chromium-faults.ts): the harness's own
 * puppeteer, nunjucks and Chromium flags, so what they measure is the floor the harness runs.
 */
import { createRequire } from 'node:module';
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
