/**
 * Image modifications applied in a real Chromium page behind the closed room, with JavaScript off as
 * for every script-less image: what each field changes in the document (read back from an isolated
 * world of our own), what wins over the template's own rules, what is only warned about, and the
 * layer bound refusing before anything is changed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../shared/log.js';
import { solidPng } from '../../../test/support/documents/image-tools.js';
import { testOptions } from '../../../test/support/documents/rendering-kit.js';
import { launchChromium, type LaunchedChromium } from '../launch-chromium.js';
import { applyLayerEdits, type LayerEdit, type LayerEditsOutcome } from './layer-edits.js';
import { openNetworkSinkhole, type NetworkSinkhole } from './network-sinkhole.js';
import { PageTarget } from '../page-target.js';
import { openBlankDocument } from './print-page.js';

const TEMPLATE = `<!doctype html><html><head><style>h1{color:red !important} #page{background-image:url(data:image/gif;base64,R0lGODlhAQABAAAAACw=) !important}</style></head><body id="page">
<h1 data-layer="title" style="font-size:40px">Hello {{ name }}</h1>
<picture><source srcset="data:image/gif;base64,R0lGODlhAQABAAAAACw="><img data-layer-name="logo" src="data:image/gif;base64,R0lGODlhAQABAAAAACw=" srcset="a.png 2x" loading="lazy"></picture>
<div data-layer="box" hidden style="width:10px;display:none"></div>
<div data-layer="panel" style="background-image:url(data:image/gif;base64,R0lGODlhAQABAAAAACw=) !important"></div>
<p id="note">By id</p>
<span data-layer="tag">one</span><span data-layer="tag">two</span>
<script>document.title = 'scripts ran'</script>
</body></html>`;

const BLUE = `data:image/png;base64,${solidPng(4, 4, [0, 0, 255]).toString('base64')}`;
const GREEN = `data:image/png;base64,${solidPng(3, 3, [0, 128, 0]).toString('base64')}`;

let sinkhole: NetworkSinkhole;
let chromium: LaunchedChromium;

beforeAll(async () => {
  sinkhole = await openNetworkSinkhole();
  chromium = await launchChromium({
    executablePath: testOptions().chromiumPath,
    sinkholePort: sinkhole.port,
    protocolTimeoutMs: 60_000,
  });
});

afterAll(async () => {
  await chromium?.shutdown();
  await sinkhole?.close();
});

/** `html` on a fresh script-less page of the closed room; the edits applied; `read` evaluated afterwards in a world of its own. */
async function edited(
  html: string,
  edits: LayerEdit[],
  options: { images?: string[]; maxLayers?: number; read?: string } = {},
): Promise<{ outcome: LayerEditsOutcome; read: any }> {
  const target = await PageTarget.open(chromium.root, { newWindow: true });
  const signal = AbortSignal.timeout(60_000);
  try {
    const { session } = target;
    await session.send('Emulation.setScriptExecutionDisabled', { value: true });
    const { frameId } = await openBlankDocument(target, { logger: createLogger('silent') }, { scripts: false }, signal);
    await session.send('Page.setDocumentContent', { frameId, html });
    const outcome = await applyLayerEdits(
      session,
      frameId,
      { edits, images: options.images ?? [], maxLayers: options.maxLayers ?? 1000 },
      signal,
    );
    const world = await session.send('Page.createIsolatedWorld', { frameId, worldName: 'test-reader' });
    const { result, exceptionDetails } = await session.send('Runtime.evaluate', {
      expression: options.read ?? 'null',
      contextId: world.executionContextId,
      returnByValue: true,
      awaitPromise: true,
    });
    if (exceptionDetails) throw new Error(exceptionDetails.exception?.description ?? exceptionDetails.text);
    return { outcome, read: result.value };
  } finally {
    await target.close();
  }
}

const style = (selector: string, property: string) =>
  `getComputedStyle(document.querySelector(${JSON.stringify(selector)})).getPropertyValue(${JSON.stringify(property)})`;

describe('layer edits in the page', () => {
  it("sets text as literal text and colours over the template's own !important rules, with the page's scripts off", async () => {
    const { outcome, read } = await edited(
      TEMPLATE,
      [{ name: 'title', text: '<b>Bye</b> {{ x }} & co', color: '#00f', background: 'rgb(1 2 3 / 50%)' }],
      {
        read: `({ text: document.querySelector('h1').textContent, children: document.querySelector('h1').children.length, color: ${style('h1', 'color')},
        background: ${style('h1', 'background-color')}, size: ${style('h1', 'font-size')}, title: document.title })`,
      },
    );
    expect(outcome).toEqual({ warnings: [] });
    expect(read).toEqual({
      text: '<b>Bye</b> {{ x }} & co',
      children: 0,
      color: 'rgb(0, 0, 255)',
      background: 'rgba(1, 2, 3, 0.5)',
      size: '40px',
      title: '',
    });
  });

  it("sets images (an <img>'s source, decoded; any other element's background over inline and !important rules), hides and shows", async () => {
    const { outcome, read } = await edited(
      TEMPLATE,
      [
        { name: 'logo', image: 0 },
        { name: 'background', image: 1, background: 'navy' },
        { name: 'panel', image: 0 },
        { name: 'box', hidden: false },
        { name: 'tag', hidden: true },
      ],
      {
        images: [BLUE, GREEN],
        read: `({ src: document.querySelector('img').getAttribute('src') === ${JSON.stringify(BLUE)}, srcset: document.querySelector('img').hasAttribute('srcset'),
          sources: document.querySelectorAll('source').length, decoded: document.querySelector('img').complete && document.querySelector('img').naturalWidth,
          body: ${style('body', 'background-image')}.includes(${JSON.stringify(GREEN.slice(0, 60))}), bodyColor: ${style('body', 'background-color')},
          panel: ${style('[data-layer=panel]', 'background-image')}.includes(${JSON.stringify(BLUE.slice(0, 60))}),
          box: ${style('[data-layer=box]', 'display')}, boxHidden: document.querySelector('[data-layer=box]').hidden,
          tags: [...document.querySelectorAll('span')].map((s) => getComputedStyle(s).display) })`,
      },
    );
    expect(outcome).toEqual({ warnings: [] });
    expect(read).toEqual({
      src: true,
      srcset: false,
      sources: 0,
      decoded: 4,
      body: true,
      bodyColor: 'rgb(0, 0, 128)',
      panel: true,
      box: 'block',
      boxHidden: false,
      tags: ['none', 'none'],
    });
  });

  it('warns about unknown layers, unloaded and undecodable images and text on an <img>, and falls back to an id', async () => {
    const { outcome, read } = await edited(
      TEMPLATE,
      [
        { name: 'nope', text: 'x' },
        { name: 'logo', text: 'x', imageError: 'the server answered HTTP 404' },
        { name: 'note', text: 'Changed' },
        { name: 'panel', image: 0 },
      ],
      { images: ['data:image/png;base64,bm90IGFuIGltYWdl'], read: `document.getElementById('note').textContent` },
    );
    expect(outcome).toEqual({
      warnings: [
        'Layer "nope" was not found in the template; its modification was skipped.',
        'Layer "logo": image_url was not loaded (the server answered HTTP 404); the layer keeps its image.',
        'Layer "logo" is a <img>: text does not apply to it.',
        'Layer "panel": the image of image_url could not be decoded; the layer shows no image from it.',
      ],
    });
    expect(read).toBe('Changed');
  });

  it('never replaces the text of, or hides, the background layer (the whole page)', async () => {
    const { outcome, read } = await edited(
      TEMPLATE,
      [{ name: 'background', text: 'gone', hidden: true, background: '#fff' }],
      {
        read: `({ color: ${style('body', 'background-color')}, display: ${style('body', 'display')}, kept: document.body.textContent.includes('Hello {{ name }}') })`,
      },
    );
    expect(outcome).toEqual({
      warnings: [
        'Layer "background": text does not apply to the background layer (background and image_url do).',
        'Layer "background": hidden does not apply to the background layer (background and image_url do).',
      ],
    });
    expect(read).toEqual({ color: 'rgb(255, 255, 255)', display: 'block', kept: true });
  });

  it('refuses a document past the layer bound, counting every layer element, and changes nothing', async () => {
    const html = `<h1 data-layer="title">kept</h1>${'<b data-layer="x">x</b>'.repeat(5000)}`;
    const { outcome, read } = await edited(html, [{ name: 'title', text: 'changed' }], {
      maxLayers: 1000,
      read: `document.querySelector('h1').textContent`,
    });
    expect(outcome).toEqual({ tooManyLayers: 5001 });
    expect(read).toBe('kept');
  });
});
