/** Which print page a document goes to with per-slot print browsers: judged by its markup (print-routing.ts). */
import { describe, expect, it } from 'vitest';
import { markupChars, printsInSlotBrowser, SLOT_PRINT_MAX_MARKUP_CHARS } from './print-routing.js';

const payload = (chars: number) => 'A'.repeat(chars);

describe('markupChars', () => {
  it('counts every character of HTML without data: URIs', () => {
    expect(markupChars('<h1>Invoice 7</h1>')).toBe(18);
  });

  it('leaves out the payloads of data: URIs in attributes, unquoted attributes and CSS', () => {
    const img = `<img src="data:image/png;base64,${payload(1000)}">`;
    const unquoted = `<img src=data:image/png;base64,${payload(500)}>`;
    const css = `<style>h1{background:url(data:image/png;base64,${payload(300)}) no-repeat}</style>`;
    const markup = (html: string, uri: number) => html.length - uri;
    expect(markupChars(img)).toBe(markup(img, 'data:image/png;base64,'.length + 1000));
    expect(markupChars(unquoted)).toBe(markup(unquoted, 'data:image/png;base64,'.length + 500));
    expect(markupChars(css)).toBe(markup(css, 'data:image/png;base64,'.length + 300));
    expect(markupChars(img + unquoted + css)).toBe(markupChars(img) + markupChars(unquoted) + markupChars(css));
  });
});

describe('printsInSlotBrowser', () => {
  it('keeps a one-page invoice with a large embedded logo in the slot browser', () => {
    const invoice = `<img src="data:image/png;base64,${payload(200_000)}"><h1>Invoice</h1>${'<p>line</p>'.repeat(100)}`;
    expect(invoice.length).toBeGreaterThan(SLOT_PRINT_MAX_MARKUP_CHARS);
    expect(printsInSlotBrowser(invoice)).toBe(true);
  });

  it('sends a document with more markup than the bound to the multi-process browser', () => {
    const rows = '<tr><td>row</td><td>1.00</td></tr>';
    const short = rows.repeat(Math.floor(SLOT_PRINT_MAX_MARKUP_CHARS / rows.length));
    expect(printsInSlotBrowser(short)).toBe(true);
    expect(printsInSlotBrowser(short + rows)).toBe(false);
  });
});
