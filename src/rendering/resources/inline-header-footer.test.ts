/**
 * The header/footer bound (issue 37), on the inlining itself with real document resources: every use
 * of a resource counts, each resource is loaded once, and a part past HEADER_FOOTER_MAX_CHARS is
 * refused — as evaluated, before it is parsed, and once inlined, before it is built. Printing such
 * headers through a real service process: test/e2e/documents/header-footer-bound.test.ts.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { AppError } from '../../shared/errors.js';
import { createDocumentResources } from './document-resources.js';
import { HEADER_FOOTER_MAX_CHARS, inlineHeaderFooter } from './inline-header-footer.js';
import { RenderWarnings } from './render-warnings.js';

const ACCOUNT = 'acc_AAAAAAAAAAAAAAAA';
/** 256 KiB that the asset library takes for a PNG: its data: URI is 349,548 characters. */
const ASSET = Buffer.concat([
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
  randomBytes(256 * 1024 - 8),
]);
const URL_OF = 'https://assets.pressroom.internal/a/amp.png';

/** Document resources over one asset, counting the loads. */
function resources() {
  const loads: string[] = [];
  const warnings = new RenderWarnings();
  const assets = async (accountId: string, name: string) => {
    loads.push(name);
    return accountId === ACCOUNT && name === 'amp.png' ? { body: ASSET, contentType: 'image/png' } : undefined;
  };
  const bounds = { maxPerDocument: 10, documentMaxBytes: 1024 * 1024, documentTimeoutMs: 10_000 };
  return { loads, warnings, resources: createDocumentResources({ accountId: ACCOUNT, warnings, assets, bounds }) };
}

const uses = (n: number) =>
  `<style>.a{background:url("${URL_OF}")}</style>` +
  Array.from({ length: n - 1 }, () => `<img src="${URL_OF}">`).join('') +
  'h';

async function refusal(promise: Promise<unknown>): Promise<AppError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(AppError);
  return error as AppError;
}

describe('the header/footer bound', () => {
  it('inlines a resource used within the bound at every use, loading it once', async () => {
    const { loads, warnings, resources: r } = resources();
    const part = await inlineHeaderFooter(uses(11), { part: 'header', documentHtml: '<p>Body</p>', resources: r });
    const uri = `data:image/png;base64,${ASSET.toString('base64')}`;
    expect(part.html!.split(uri)).toHaveLength(12);
    expect(part.html!.length).toBeLessThanOrEqual(HEADER_FOOTER_MAX_CHARS);
    expect(loads).toEqual(['amp.png']);
    expect(warnings.list()).toEqual([]);
  });

  it('counts every use: twelve uses of a 256 KiB asset are past 4 MiB, refused naming the bound and the part', async () => {
    const { loads, resources: r } = resources();
    const error = await refusal(
      inlineHeaderFooter(uses(12), { part: 'footer', documentHtml: '<p>Body</p>', resources: r }),
    );
    expect(error.code).toBe('DOCUMENT_TOO_LARGE');
    expect(error.details).toMatchObject({
      bound: 'header_footer',
      part: 'footer',
      limitChars: HEADER_FOOTER_MAX_CHARS,
    });
    expect(error.details!.chars).toBeGreaterThan(12 * 349_548);
    expect(error.message).toMatch(
      /^The page footer \(page\.footer_html\) would be \d+ characters \(4(\.\d)? MiB\) once its images and fonts are written into it, more than the 4194304 \(4 MiB\) a header or footer may carry/,
    );
    expect(loads).toEqual(['amp.png']);
  });

  it('counts the uses of the fonts it borrows from the document', async () => {
    const { resources: r } = resources();
    const documentHtml = `<style>${Array.from({ length: 12 }, (_, i) => `@font-face { font-family: Brand; src: url("${URL_OF}"); } /* ${i} */`).join('\n')}</style>`;
    const error = await refusal(
      inlineHeaderFooter('<div style="font-family: Brand">ACME</div>', { part: 'header', documentHtml, resources: r }),
    );
    expect(error.details).toMatchObject({ bound: 'header_footer', part: 'header' });
  });

  it('holds the part as evaluated to the bound, before it is parsed or anything is loaded', async () => {
    const { loads, resources: r } = resources();
    const html = `<img src="${URL_OF}">${'x'.repeat(HEADER_FOOTER_MAX_CHARS)}`;
    const error = await refusal(inlineHeaderFooter(html, { part: 'header', documentHtml: '', resources: r }));
    expect(error.details).toMatchObject({ bound: 'header_footer', part: 'header', chars: html.length });
    expect(loads).toEqual([]);
  });
});
