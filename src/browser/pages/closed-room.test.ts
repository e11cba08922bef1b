/**
 * The page is a closed room: no network (a real loopback listener must see nothing), no file://,
 * only data:/blob: and the internal asset origin when a resolver is configured.
 */
import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  openTripwire,
  pdfText,
  pdfTool,
  startTestRenderer,
  testOptions,
} from '../../../test/support/documents/rendering-kit.js';
import { launchChromium } from '../launch-chromium.js';
import { openNetworkSinkhole } from './network-sinkhole.js';
import { PageTarget } from '../page-target.js';
import type { PdfRenderer } from '../../rendering/pdf-renderer.js';

const SLOW_IMAGE_MS = 1_500;
const PNG_1X1 = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC',
  'base64',
);

let renderer: PdfRenderer;
/** No asset resolver: the asset origin unserved. */
let bare: PdfRenderer;
let tripwire: Awaited<ReturnType<typeof openTripwire>>;
let udp: UdpSocket;
let udpPackets = 0;

beforeAll(async () => {
  tripwire = await openTripwire();
  udp = createSocket({ type: 'udp6', ipv6Only: false });
  udp.on('message', () => (udpPackets += 1));
  await new Promise<void>((resolve) => udp.bind(tripwire.port, '::', resolve));
  const assets = new Map([
    ['https://assets.pressroom.internal/logo.png', PNG_1X1],
    ['https://assets.pressroom.internal/brand.css', Buffer.from('.brand::after { content: "FROM-ASSET-CSS"; }')],
    ['https://assets.pressroom.internal/serif.ttf', readFileSync('/usr/share/fonts/truetype/dejavu/DejaVuSerif.ttf')],
  ]);
  // An image that keeps its document loading for a while: a script's navigation starts before the load.
  const resolve = async (url: string) => {
    if (url.endsWith('/slow.png')) await new Promise((done) => setTimeout(done, SLOW_IMAGE_MS));
    return assets.get(url) ?? (url.endsWith('/slow.png') ? PNG_1X1 : undefined);
  };
  [renderer, bare] = await Promise.all([
    startTestRenderer({ concurrency: 2 }, { assetResolver: resolve }),
    startTestRenderer({ concurrency: 1 }),
  ]);
});

afterAll(async () => {
  await Promise.all([renderer?.close(), bare?.close()]);
  await tripwire.close();
  udp.close();
});

describe('no network from templates', () => {
  const target = () => `127.0.0.1:${tripwire.port}`;

  it('blocks every way a script-less document can reach out', async () => {
    const t = target();
    const p = tripwire.port;
    const html = `<!doctype html><html><head>
      <base href="http://${t}/base/">
      <link rel="stylesheet" href="http://${t}/link.css"><link rel="preload" as="image" href="http://${t}/preload">
      <link rel="prefetch" href="http://${t}/prefetch"><link rel="preconnect" href="http://${t}"><link rel="icon" href="http://${t}/icon">
      <meta http-equiv="refresh" content="0;url=http://${t}/refresh">
      <style>@import url("http://${t}/import.css"); @font-face { font-family: Remote; src: url(http://${t}/font.woff2); }
        p { font-family: Remote; } .bg { background: url(http://${t}/bg.png); } </style></head><body>
      <p class="bg">STILL-HERE</p><img src="http://${t}/img"><img src="HTTP://${t}/upper"><img src="http://[::ffff:127.0.0.1]:${p}/mapped">
      <img src="http://localhost:${p}/localhost"><img src="http://[::1]:${p}/v6"><img src="http://2130706433:${p}/decimal">
      <img src="relative.png"><img srcset="http://${t}/srcset 1x"><iframe src="http://${t}/frame"></iframe>
      <object data="http://${t}/object"></object><embed src="http://${t}/embed"><video src="http://${t}/video" autoplay></video>
      <svg><image href="http://${t}/svg-image" width="10" height="10"/></svg><audio src="http://${t}/audio" autoplay></audio>
      </body></html>`;
    const { pdf } = await renderer.render({ template: { html }, data: {} });
    expect(pdfText(pdf)).toContain('STILL-HERE');
    expect(pdfText(pdf)).not.toContain('TRIPWIRE');
  });

  it('blocks scripts: fetch, XHR, WebSocket, workers, beacons, EventSource, navigation, WebRTC', async () => {
    const t = target();
    const html = `<p id="r">SCRIPTED</p><script>
      const t = ${JSON.stringify(t)};
      fetch('http://' + t + '/fetch').catch(() => {});
      fetch('http://localhost:${tripwire.port}/fetch-localhost', { mode: 'no-cors' }).catch(() => {});
      const x = new XMLHttpRequest(); x.open('GET', 'http://' + t + '/xhr'); x.send();
      try { new WebSocket('ws://' + t + '/ws'); } catch (e) {}
      try { navigator.sendBeacon('http://' + t + '/beacon', 'x'); } catch (e) {}
      try { new EventSource('http://' + t + '/sse'); } catch (e) {}
      try { import('http://' + t + '/module.js').catch(() => {}); } catch (e) {}
      try { new Image().src = 'http://' + t + '/image'; } catch (e) {}
      try { navigator.serviceWorker.register('http://' + t + '/sw.js').catch(() => {}); } catch (e) {}
      try { const w = new Worker(URL.createObjectURL(new Blob(["fetch('http://" + t + "/worker').catch(() => {}); new WebSocket('ws://" + t + "/worker-ws');"]))); } catch (e) {}
      try { const pc = new RTCPeerConnection({ iceServers: [{ urls: 'stun:127.0.0.1:${tripwire.port}' }, { urls: 'turn:127.0.0.1:${tripwire.port}', username: 'u', credential: 'c' }] });
        pc.createDataChannel('x'); pc.createOffer().then((o) => pc.setLocalDescription(o)); } catch (e) {}
      window.pressroomReady = new Promise((resolve) => setTimeout(resolve, 400));
      setTimeout(() => { try { location.href = 'http://' + t + '/navigate'; } catch (e) {} }, 300);
    </script>`;
    const { pdf } = await renderer.render({ template: { html }, data: {} });
    expect(pdfText(pdf)).toContain('SCRIPTED');
  });

  it('a script navigating its own page (refused) before the load does not hang the render: the document prints', async () => {
    // Starting a navigation cuts the document's loading short, so its load event never comes; the
    // render waited for it until the deadline (RENDER_TIMEOUT) whenever the navigation started first.
    const t = target();
    const slow = '<img src="https://assets.pressroom.internal/slow.png">';
    const scripts = {
      location: `location.href = 'http://${t}/navigate';`,
      reload: 'location.reload();',
      stop: 'window.stop();',
      'a form': `const f = document.createElement('form'); f.action = 'http://${t}/form'; f.method = 'post'; document.body.append(f); f.submit();`,
      'during pressroomReady': `window.pressroomReady = new Promise((r) => setTimeout(r, 600)); setTimeout(() => { location.href = 'http://${t}/later'; }, 300);`,
    };
    const results = await Promise.all(
      Object.entries(scripts).map(async ([name, script]) => {
        const html = `<p>NAVIGATES-${name}</p>${slow}<script>${script}</script>`;
        const { pdf } = await renderer.render({ template: { html }, data: {} });
        return pdfText(pdf);
      }),
    );
    for (const [i, name] of Object.keys(scripts).entries()) expect(results[i]).toContain(`NAVIGATES-${name}`);
  });

  it('a script that replaces its document (about:blank, a blob: page) gets a template error, not a blank PDF', async () => {
    // These navigations need no request the closed room could refuse: they commit.
    const ready = 'window.pressroomReady = new Promise((r) => setTimeout(r, 5000));';
    for (const to of ["'about:blank'", "URL.createObjectURL(new Blob(['<p>OTHER</p>'], { type: 'text/html' }))"]) {
      const html = `<p>FIRST</p><script>${ready} setTimeout(() => { location.href = ${to}; }, 50);</script>`;
      await expect(renderer.render({ template: { html }, data: {} })).rejects.toMatchObject({
        code: 'TEMPLATE_RENDER_ERROR',
        message: expect.stringMatching(/navigated its page away \((to about:blank|to blob:)/) as unknown,
      });
    }
    // The slot is fine afterwards.
    const { pdf } = await renderer.render({
      template: { html: '<p>AFTER</p><script>document.body.append("RAN")</script>' },
      data: {},
    });
    expect(pdfText(pdf)).toMatch(/AFTER[\s\S]*RAN/);
  });

  it('blocks template code in the evaluator sandbox', async () => {
    const t = target();
    const code = `var u = 'http://${t}/'; try { fetch(u + 'f') } catch (e) {} try { var x = new XMLHttpRequest(); x.open('GET', u + 'x'); x.send() } catch (e) {}
      try { new WebSocket('ws://${t}/w') } catch (e) {} try { importScripts(u + 'i') } catch (e) {}
      try { var F = Object.getPrototypeOf(async function () {}).constructor; F('await fetch("' + u + 'af")')().catch(function () {}) } catch (e) {}
      return 'EVALUATED'`;
    const html = `{{ "".constructor.constructor(${JSON.stringify(code.replace(/\n/g, ' '))})() }}`;
    // In the compartment the payload cannot even be built: the constructor is inert.
    await expect(renderer.render({ template: { html }, data: {} })).rejects.toMatchObject({
      code: 'TEMPLATE_RENDER_ERROR',
      message: expect.stringMatching(/not a valid constructor/) as unknown,
    });
    // Run as arbitrary code in a compartment (as if the compiler let it through), the same attempts
    // find nothing to call: browser/sandbox/evaluator-compartment.test.ts.
  });

  it('the listener saw nothing (TCP or UDP)', async () => {
    // Anything the tests above set off would have arrived by now: a short wait for what must not happen.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(tripwire.hits()).toBe(0);
    expect(udpPackets).toBe(0);
    // Most requests never get that far: the page's Content-Security-Policy refuses them first.
    expect(renderer.stats().blockedRequests).toBeGreaterThan(0);
  });

  it('the network layer alone holds: a page without interception reaches only the sinkhole', async () => {
    const sinkhole = await openNetworkSinkhole();
    const chromium = await launchChromium({
      executablePath: testOptions().chromiumPath,
      sinkholePort: sinkhole.port,
      protocolTimeoutMs: 30_000,
    });
    try {
      const page = await PageTarget.open(chromium.root);
      for (const url of [
        `http://127.0.0.1:${tripwire.port}/direct`,
        `http://localhost:${tripwire.port}/direct`,
        `http://[::1]:${tripwire.port}/direct`,
      ]) {
        const { errorText } = await page.session.send('Page.navigate', { url });
        expect(errorText).toMatch(/^net::ERR_/);
      }
      // A short wait for what must not happen.
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(tripwire.hits()).toBe(0);
    } finally {
      await chromium.shutdown();
      await sinkhole.close();
    }
  });
});

describe('no local files', () => {
  it.each([
    ['img', '<img src="file:///etc/passwd">'],
    ['iframe', '<iframe src="file:///etc/passwd" width="600" height="400"></iframe>'],
    ['upper-case scheme', '<iframe src="FILE:///etc/passwd" width="600" height="400"></iframe>'],
    [
      'object and embed',
      '<object data="file:///etc/passwd" width="600" height="400"></object><embed src="file:///etc/passwd">',
    ],
    [
      'stylesheet and directory',
      '<link rel="stylesheet" href="file:///etc/passwd"><iframe src="file:///etc/"></iframe>',
    ],
    ['view-source', '<iframe src="view-source:file:///etc/passwd"></iframe>'],
    [
      'script fetch',
      '<pre id="o">x</pre><script>fetch("file:///etc/passwd").then((r) => r.text()).then((t) => { document.getElementById("o").textContent = t; }).catch(() => {}); const x = new XMLHttpRequest(); try { x.open("GET", "file:///etc/passwd", false); x.send(); document.body.append(x.responseText); } catch (e) {}</script>',
    ],
  ])('%s', async (_name, html) => {
    const { pdf } = await renderer.render({ template: { html: `<p>FILE-TEST</p>${html}` }, data: {} });
    const text = pdfText(pdf);
    expect(text).toContain('FILE-TEST');
    expect(text).not.toContain('root:x:0:0');
  });
});

describe('the internal asset origin', () => {
  const html =
    '<p class="brand">ASSET:</p><link rel="stylesheet" href="https://assets.pressroom.internal/brand.css">' +
    '<img src="https://assets.pressroom.internal/logo.png" width="40" height="40"><link rel="stylesheet" href="https://assets.pressroom.internal/missing.css">' +
    '<style>@font-face { font-family: AssetSerif; src: url(https://assets.pressroom.internal/serif.ttf); } .serif { font-family: AssetSerif; }</style><p class="serif">In the asset font</p>';

  it('serves known assets (stylesheets, images, fonts) through the resolver and answers 404 for the rest', async () => {
    for (const scripted of [false, true]) {
      const { pdf } = await renderer.render({
        template: { html: scripted ? `${html}<script>document.body.append('SCRIPTED')</script>` : html },
        data: {},
      });
      expect(pdfText(pdf)).toContain('ASSET:FROM-ASSET-CSS');
      expect(pdfTool('pdfimages', pdf, ['-list']).trim().split('\n')).toHaveLength(3); // header, rule, the logo
      expect(pdfTool('pdffonts', pdf)).toContain('DejaVuSerif');
    }
  });

  it('is blocked when no resolver is configured', async () => {
    const { pdf } = await bare.render({ template: { html }, data: {} });
    expect(pdfText(pdf)).toContain('ASSET:');
    expect(pdfText(pdf)).not.toContain('FROM-ASSET-CSS');
    expect(pdfTool('pdffonts', pdf)).not.toContain('DejaVuSerif');
  });
});
