/**
 * Layers listed from a template's HTML (and their bounds), and modifications checked and turned into
 * the page's edits. What each edit does to a document: browser/pages/layer-edits.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../shared/errors.js';
import { isCssColor } from './css-color.js';
import { checkModifications, imageUrlsOf, layerEdits, type LoadedImage } from './layer-modifications.js';
import { listLayers, MAX_CURRENT_TEXT_CHARS, MAX_TEMPLATE_LAYERS, type TemplateLayer } from './template-layers.js';

const TEMPLATE = `<!doctype html><html><head><style>h1{color:red}</style></head><body>
<h1 data-layer="title" style="font-size:40px">Hello {{ name }}</h1>
<img data-layer-name="logo" src="data:image/gif;base64,R0lGODlhAQABAAAAACw=" srcset="a.png 2x">
<div data-layer="box" hidden style="width:10px;display:none"></div>
<p id="note">By id</p>
<span data-layer="tag">one</span><span data-layer="tag">two</span>
</body></html>`;

/** The listing of `html`, failing the test when it was refused. */
function listed(html: string): { layers: TemplateLayer[]; warnings: string[] } {
  const listing = listLayers(html);
  if ('tooManyLayers' in listing) throw new Error(`refused: ${listing.tooManyLayers} layers`);
  return listing;
}

describe('listLayers', () => {
  it('lists named layers in document order with type, tag, text and what applies; background is always there; duplicates warn', () => {
    const { layers, warnings } = listed(TEMPLATE);
    expect(layers).toEqual([
      { name: 'background', tag: 'body', type: 'background', modifiable: ['background', 'image_url'] },
      {
        name: 'title',
        tag: 'h1',
        type: 'text',
        currentText: 'Hello {{ name }}',
        modifiable: ['text', 'color', 'background', 'image_url', 'hidden'],
      },
      { name: 'logo', tag: 'img', type: 'image', modifiable: ['image_url', 'hidden'] },
      { name: 'box', tag: 'div', type: 'shape', modifiable: ['background', 'image_url', 'hidden'] },
      {
        name: 'tag',
        tag: 'span',
        type: 'text',
        currentText: 'one',
        modifiable: ['text', 'color', 'background', 'image_url', 'hidden'],
      },
    ]);
    expect(warnings).toEqual(['Layer name "tag" is used by 2 elements; a modification of it applies to all of them.']);
  });

  it('an element named background is the background layer', () => {
    const { layers } = listed('<div data-layer="background" style="width:100px"></div>');
    expect(layers).toEqual([
      { name: 'background', tag: 'div', type: 'background', modifiable: ['background', 'image_url'] },
    ]);
  });

  it('refuses a template past MAX_TEMPLATE_LAYERS layer elements, counting them all (a shared name too)', () => {
    const layer = (i: number) => `<i data-layer="n${i}">x</i>`;
    expect(listed(Array.from({ length: MAX_TEMPLATE_LAYERS - 1 }, (_, i) => layer(i)).join('')).layers).toHaveLength(
      MAX_TEMPLATE_LAYERS,
    );
    expect(listLayers(Array.from({ length: 60_000 }, (_, i) => layer(i)).join(''))).toEqual({ tooManyLayers: 60_000 });
    expect(listLayers('<b data-layer="same">x</b>'.repeat(MAX_TEMPLATE_LAYERS + 1))).toEqual({
      tooManyLayers: MAX_TEMPLATE_LAYERS + 1,
    });
  });

  it('cuts current_text at MAX_CURRENT_TEXT_CHARS, leaves out script and style text, and lists layers nested 100,000 deep', () => {
    const long = listed(`<p data-layer="long">${'word '.repeat(1000)}</p>`).layers[1]!;
    expect(long.currentText).toBe(`${'word '.repeat(MAX_CURRENT_TEXT_CHARS / 5).slice(0, MAX_CURRENT_TEXT_CHARS)}…`);
    expect(
      listed('<div data-layer="a">one<style>p{}</style><script>x()</script> <b>two</b></div>').layers[1]!.currentText,
    ).toBe('one two');
    // A layer that is itself a <style>: its own text is its text, as before.
    expect(listed('<style data-layer="s">p { color: red }</style>').layers[1]).toMatchObject({
      tag: 'style',
      type: 'text',
      currentText: 'p { color: red }',
    });
    const deep = listed(`${'<div>'.repeat(100_000)}<span data-layer="deep">bottom</span>`);
    expect(deep.layers[1]).toMatchObject({ name: 'deep', currentText: 'bottom' });
    // Every layer holds the same 1.9 MB of text: each takes its 500 characters, the text is read once.
    const nested = listed(
      `${Array.from({ length: MAX_TEMPLATE_LAYERS }, (_, i) => `<div data-layer="n${i}">`).join('')}${'word  \n'.repeat(270_000)}`,
    );
    expect(nested.layers).toHaveLength(MAX_TEMPLATE_LAYERS + 1);
    expect(new Set(nested.layers.slice(1).map((layer) => layer.currentText))).toEqual(
      new Set([`${'word '.repeat(100).slice(0, MAX_CURRENT_TEXT_CHARS)}…`]),
    );
  });
});

describe('colours', () => {
  it('accepts hex, names and numeric colour functions; refuses anything that could leave the declaration', () => {
    for (const good of [
      '#fff',
      '#FFFA',
      '#123456',
      '#12345678',
      'Navy',
      'transparent',
      'currentColor',
      'rgb(255, 0, 0)',
      'rgba(0,0,0,0.5)',
      'hsl(120deg 50% 50% / 0.3)',
      'oklch(0.7 0.1 200)',
    ]) {
      expect(isCssColor(good), good).toBe(true);
    }
    for (const bad of [
      '',
      '#ff',
      'banana',
      'red; position:fixed',
      'red !important',
      'url(x)',
      'rgb(1,2,3);x',
      'rgb(var(--x),1,2)',
      'expression(alert(1))',
      '"red"',
      'red\\;',
      'rgb(1 2)',
    ]) {
      expect(isCssColor(bad), bad).toBe(false);
    }
  });

  it('checkModifications names each bad colour', () => {
    const check = () =>
      checkModifications([
        { name: 'a', color: 'red' },
        { name: 'b', background: 'red;x:y', color: 'nope' },
      ]);
    expect(check).toThrow(ValidationError);
    try {
      check();
    } catch (error) {
      expect((error as ValidationError).issues.map((i) => i.loc)).toEqual([
        ['body', 'modifications', 1, 'color'],
        ['body', 'modifications', 1, 'background'],
      ]);
    }
  });

  it("layerEdits: normalised colours, each image sent once, an image that did not load as its edit's error", () => {
    const images = new Map<string, LoadedImage>([
      ['https://img.example/a.png', { dataUri: 'data:image/png;base64,AAAA' }],
      ['https://img.example/x.png', { error: 'the server answered HTTP 404' }],
    ]);
    expect(
      layerEdits(
        [
          { name: 'a', image_url: 'https://img.example/a.png', color: '#00F', text: null, hidden: null },
          { name: 'b', image_url: 'https://img.example/a.png', background: 'Navy', hidden: false, text: '' },
          { name: 'c', image_url: 'https://img.example/x.png' },
        ],
        images,
      ),
    ).toEqual({
      edits: [
        { name: 'a', image: 0, color: '#00f' },
        { name: 'b', image: 0, background: 'navy', hidden: false, text: '' },
        { name: 'c', imageError: 'the server answered HTTP 404' },
      ],
      images: ['data:image/png;base64,AAAA'],
      maxLayers: MAX_TEMPLATE_LAYERS,
    });
  });

  it('imageUrlsOf lists each URL once', () => {
    expect(
      imageUrlsOf([
        { name: 'a', image_url: 'u1' },
        { name: 'b', image_url: 'u1' },
        { name: 'c' },
        { name: 'd', image_url: 'u2' },
      ]),
    ).toEqual(['u1', 'u2']);
  });
});
