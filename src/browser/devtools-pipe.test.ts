/**
 * Nothing that comes over the DevTools pipe can end this process (issue 15: a 400 MB PDF in one
 * message threw ERR_STRING_TOO_LONG and Node exited). With a 1 MiB bound instead of 256 MiB, on real
 * Chromium: an answer over the bound fails its command only, an event over it is dropped, a listener
 * that throws is logged, and the connection goes on serving commands after each.
 */
import { Writable } from 'node:stream';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createLogger } from '../shared/log.js';
import { testOptions } from '../../test/support/documents/rendering-kit.js';
import { launchChromium, type LaunchedChromium } from './launch-chromium.js';
import { openNetworkSinkhole, type NetworkSinkhole } from './pages/network-sinkhole.js';
import { PageTarget } from './page-target.js';

const BOUND = 1024 * 1024;
const logLines: string[] = [];
let sinkhole: NetworkSinkhole;
let chromium: LaunchedChromium;
let page: PageTarget;

beforeAll(async () => {
  sinkhole = await openNetworkSinkhole();
  const sink = new Writable({
    write(chunk, _encoding, done) {
      logLines.push(String(chunk));
      done();
    },
  });
  chromium = await launchChromium({
    executablePath: testOptions().chromiumPath,
    sinkholePort: sinkhole.port,
    protocolTimeoutMs: 60_000,
    maxMessageBytes: BOUND,
    logger: createLogger('warn', sink),
  });
  page = await PageTarget.open(chromium.root);
});

afterAll(async () => {
  await chromium?.shutdown();
  await sinkhole?.close();
});

const evaluate = (expression: string) => page.session.send('Runtime.evaluate', { expression, returnByValue: true });

it('fails the one command whose answer is over the bound, and answers the next', async () => {
  await expect(evaluate(`'x'.repeat(${2 * BOUND})`)).rejects.toThrow(/larger than 1048576 bytes/);
  expect((await evaluate('6 * 7')).result.value).toBe(42);
  expect(logLines.join('')).toContain('DevTools message over the size bound dropped');
});

it('drops an event over the bound and delivers the ones after it', async () => {
  await page.session.send('Runtime.enable');
  const logged: unknown[] = [];
  page.session.on('Runtime.consoleAPICalled', (event) => logged.push(event.args[0]?.value));
  await evaluate(`console.log('x'.repeat(${2 * BOUND})); console.log('small')`);
  await expect.poll(() => logged, { timeout: 30_000 }).toEqual(['small']);
});

it('logs a listener that throws instead of letting the error end the process', async () => {
  const boom = () => {
    throw new Error('listener failed');
  };
  page.session.on('Runtime.consoleAPICalled', boom);
  await evaluate(`console.log('to a throwing listener')`);
  await expect.poll(() => logLines.join(''), { timeout: 30_000 }).toContain('a DevTools message could not be handled');
  page.session.off('Runtime.consoleAPICalled', boom);
  expect((await evaluate('1 + 1')).result.value).toBe(2);
});
