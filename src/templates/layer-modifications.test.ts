/** Layers and modifications on parsed HTML: what is listed, what each field changes, what is refused or only warned about. */
import { describe, expect, it } from 'vitest';
import { ValidationError } from '../shared/errors.js';
import { isCssColor } from './css-color.js';
import { applyModifications, checkModifications, imageUrlsOf, type LoadedImage } from './layer-modifications.js';
import { listLayers } from './template-layers.js';

const TEMPLATE = `<!doctype html><html><head><style>h1{color:red}</style></head><body>
<h1 data-layer="title" style="font-size:40px">Hello {{ name }}</h1>
<img data-layer-name="logo" src="data:image/gif;base64,R0lGODlhAQABAAAAACw=" srcset="a.png 2x">
<div data-layer="box" hidden style="width:10px;display:none"></div>
<p id="note">By id</p>
<span data-layer="tag">one</span><span data-layer="tag">two</span>
</body></html>`;

const noImages = new Map<string, LoadedImage>();

describe('listLayers', () => {
  it('lists named layers in document order with type, tag, text and what applies; background is always there; duplicates warn', () => {
    const { layers, warnings } = listLayers(TEMPLATE);
    expect(layers).toEqual([
      { name: 'background', tag: 'body', type: 'background', modifiable: ['background', 'image_url'] },
      { name: 'title', tag: 'h1', type: 'text', currentText: 'Hello {{ name }}', modifiable: ['text', 'color', 'background', 'image_url', 'hidden'] },
      { name: 'logo', tag: 'img', type: 'image', modifiable: ['image_url', 'hidden'] },
      { name: 'box', tag: 'div', type: 'shape', modifiable: ['background', 'image_url', 'hidden'] },
      { name: 'tag', tag: 'span', type: 'text', currentText: 'one', modifiable: ['text', 'color', 'background', 'image_url', 'hidden'] },
    ]);
    expect(warnings).toEqual(['Layer name "tag" is used by 2 elements; a modification of it applies to all of them.']);
  });

  it('an element named background is the background layer', () => {
    const { layers } = listLayers('<div data-layer="background" style="width:100px"></div>');
    expect(layers).toEqual([{ name: 'background', tag: 'div', type: 'background', modifiable: ['background', 'image_url'] }]);
  });
});

describe('applyModifications', () => {
  it('sets text as literal text, colours and background as important inline styles, and keeps other markup', () => {
    const { html, warnings } = applyModifications(TEMPLATE, [{ name: 'title', text: '<b>Bye</b> {{ x }} & co', color: '#00F', background: 'rgb(1 2 3 / 50%)' }], noImages);
    expect(warnings).toEqual([]);
    expect(html).toContain('<h1 data-layer="title" style="font-size:40px; color: #00f !important; background-color: rgb(1 2 3 / 50%) !important">&lt;b&gt;Bye&lt;/b&gt; {{ x }} &amp; co</h1>');
    expect(html).toContain('<style>h1{color:red}</style>');
  });

  it('sets an image source (dropping srcset), a background image elsewhere, hides and shows', () => {
    const images = new Map<string, LoadedImage>([['https://img.example/a.png', { dataUri: 'data:image/png;base64,AAAA' }]]);
    const { html } = applyModifications(TEMPLATE, [
      { name: 'logo', image_url: 'https://img.example/a.png' },
      { name: 'background', image_url: 'https://img.example/a.png', background: 'navy' },
      { name: 'box', hidden: false },
      { name: 'tag', hidden: true },
    ], images);
    expect(html).toContain('<img data-layer-name="logo" src="data:image/png;base64,AAAA">');
    expect(html).toMatch(/<body style="background-image: url\(&quot;data:image\/png;base64,AAAA&quot;\) !important; background-color: navy !important">/);
    expect(html).toContain('<div data-layer="box" style="width:10px;"></div>');
    expect(html).toContain('<span data-layer="tag" style="display: none !important">one</span><span data-layer="tag" style="display: none !important">two</span>');
  });

  it('warns about unknown layers, unloadable images and text on an <img>, and falls back to an id', () => {
    const images = new Map<string, LoadedImage>([['https://img.example/x.png', { error: 'the server answered HTTP 404' }]]);
    const { html, warnings } = applyModifications(TEMPLATE, [
      { name: 'nope', text: 'x' },
      { name: 'logo', text: 'x', image_url: 'https://img.example/x.png' },
      { name: 'note', text: 'Changed' },
    ], images);
    expect(warnings).toEqual([
      'Layer "nope" was not found in the template; its modification was skipped.',
      'Layer "logo": image_url was not loaded (the server answered HTTP 404); the layer keeps its image.',
      'Layer "logo" is a <img>: text does not apply to it.',
    ]);
    expect(html).toContain('<p id="note">Changed</p>');
    expect(html).toContain('src="data:image/gif;base64,R0lGODlhAQABAAAAACw="');
  });

  it('never replaces the text of, or hides, the background layer (the whole page)', () => {
    const { html, warnings } = applyModifications(TEMPLATE, [{ name: 'background', text: 'gone', hidden: true, background: '#fff' }], noImages);
    expect(warnings).toEqual([
      'Layer "background": text does not apply to the background layer (background and image_url do).',
      'Layer "background": hidden does not apply to the background layer (background and image_url do).',
    ]);
    expect(html).toContain('<body style="background-color: #fff !important">');
    expect(html).toContain('Hello {{ name }}');
  });

  it('returns the HTML untouched without modifications', () => {
    expect(applyModifications('<p>x', [], noImages)).toEqual({ html: '<p>x', warnings: [] });
  });
});

describe('colours', () => {
  it('accepts hex, names and numeric colour functions; refuses anything that could leave the declaration', () => {
    for (const good of ['#fff', '#FFFA', '#123456', '#12345678', 'Navy', 'transparent', 'currentColor', 'rgb(255, 0, 0)', 'rgba(0,0,0,0.5)', 'hsl(120deg 50% 50% / 0.3)', 'oklch(0.7 0.1 200)']) {
      expect(isCssColor(good), good).toBe(true);
    }
    for (const bad of ['', '#ff', 'banana', 'red; position:fixed', 'red !important', 'url(x)', 'rgb(1,2,3);x', 'rgb(var(--x),1,2)', 'expression(alert(1))', '"red"', 'red\\;', 'rgb(1 2)']) {
      expect(isCssColor(bad), bad).toBe(false);
    }
  });

  it('checkModifications names each bad colour', () => {
    const check = () => checkModifications([{ name: 'a', color: 'red' }, { name: 'b', background: 'red;x:y', color: 'nope' }]);
    expect(check).toThrow(ValidationError);
    try {
      check();
    } catch (error) {
      expect((error as ValidationError).issues.map((i) => i.loc)).toEqual([['body', 'modifications', 1, 'color'], ['body', 'modifications', 1, 'background']]);
    }
  });

  it('imageUrlsOf lists each URL once', () => {
    expect(imageUrlsOf([{ name: 'a', image_url: 'u1' }, { name: 'b', image_url: 'u1' }, { name: 'c' }, { name: 'd', image_url: 'u2' }])).toEqual(['u1', 'u2']);
  });
});
