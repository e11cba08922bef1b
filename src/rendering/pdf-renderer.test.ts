/** What a user sees in the PDF: templating, escaping, CSS, page setup, header/footer, preview. */
import { stampPreview } from '../finishing/preview-stamp.js';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '../shared/errors.js';
import {
  pdfInfo,
  pdfOutlineTitles,
  pdfText,
  pdfTool,
  startTestRenderer,
} from '../../test/support/documents/rendering-kit.js';
import type { PdfRenderer, RenderRequest } from './pdf-renderer.js';
import { PRINT_DEFAULTS_CSS } from './html-assembly.js';

let renderer: PdfRenderer;

beforeAll(async () => {
  renderer = await startTestRenderer();
});

afterAll(async () => {
  await renderer?.close();
});

/** The peers' benchmark fixtures (../shared/peers), present only where the benchmark harness is. */
const PEERS_FIXTURES = join(process.env.PEERS_DIR ?? '/work/shared/peers', 'fixtures');
const hasPeersInvoice = existsSync(join(PEERS_FIXTURES, 'invoice.html'));

async function text(req: Omit<RenderRequest, 'data'> & { data?: unknown }): Promise<string> {
  const { pdf } = await renderer.render({ data: {}, ...req });
  return pdfText(pdf);
}

/** Page size in points, rounded: [width, height]. */
function pageSize(pdf: Buffer): number[] {
  const match = /^([\d.]+) x ([\d.]+) pts/.exec(pdfInfo(pdf)['Page size'] ?? '');
  return match ? [Math.round(Number(match[1])), Math.round(Number(match[2]))] : [];
}

async function failure(req: RenderRequest): Promise<AppError> {
  const error = await renderer.render(req).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(AppError);
  return error as AppError;
}

describe('templates (Jinja2 via Nunjucks, evaluated in the sandbox)', () => {
  it('prints variables, filters, loops with loop.*, if/else, set, macros and whitespace control', async () => {
    const html = `
      {%- macro money(v) -%}€{{ "%.2f" | format(v) if false else v | round(2) }}{%- endmacro -%}
      <h1>{{ customer.name | upper }}</h1>
      {% set total = 0 %}
      <ul>{% for item in items %}<li>{{ loop.index }}/{{ loop.length }} {{ item.name | title }} {{ money(item.price) }}{% if loop.last %} LAST{% endif %}</li>{% endfor %}</ul>
      <p>{{ items | length }} items; {{ missing | default('n/a') }}; {% if vip %}VIP{% else %}REGULAR{% endif %}</p>
      <p>{% for k, v in meta.items() %}{{ k }}={{ v }} {% endfor %}{{ items[1:2] | length }} {{ None is none }} {{ True }}</p>`;
    const out = await text({
      template: { html },
      data: {
        customer: { name: 'Acme Ltd' },
        vip: false,
        items: [
          { name: 'first widget', price: 1.234 },
          { name: 'second gadget', price: 2 },
        ],
        meta: { po: 'PO-7' },
      },
    });
    expect(out).toContain('ACME LTD');
    expect(out).toMatch(/1\/2 First Widget €1\.23/);
    expect(out).toMatch(/2\/2 Second Gadget €2 LAST/);
    expect(out).toContain('2 items; n/a; REGULAR');
    expect(out).toContain('po=PO-7');
    expect(out).toMatch(/1 true true/);
  });

  it("has Jinja2's printf-style format filter (nunjucks has none)", async () => {
    const html = await renderer.renderHtml({
      template: {
        html: '[{{ "%.2f"|format(price) }}][{{ "%s and %s"|format("a", name) }}][{{ "%05d|%-4s|%+.1f|%6.2f"|format(42, "x", 2, -3.14159) }}][{{ "%(n)d items"|format(n=3) }}][{{ "%x %X %o %e"|format(255, 255, 8, 12345.678) }}][{{ "100%%"|format() }}]',
      },
      data: { price: 1.5, name: '<b>' },
    });
    expect(html).toContain('[1.50][a and &lt;b&gt;][00042|x   |+2.0| -3.14][3 items][ff FF 10 1.234568e+04][100%]');
  });

  it('autoescapes data: <script> and & print as text and run nowhere', async () => {
    const out = await text({
      template: { html: '<p>Name: {{ name }}</p><p>Note: {{ note }}</p>' },
      data: { name: '<script>document.body.innerHTML="PWNED"</script>', note: 'Fish & Chips <b>bold</b>' },
    });
    expect(out).toContain('<script>document.body.innerHTML="PWNED"</script>');
    expect(out).toContain('Fish & Chips <b>bold</b>');
    expect(out).not.toContain('PWNED\n');
  });

  it('reports runtime errors as TEMPLATE_RENDER_ERROR with the line, without internals', async () => {
    const error = await failure({ template: { html: 'line one\nline two\n  {{ nope() }}' }, data: {} });
    expect(error.code).toBe('TEMPLATE_RENDER_ERROR');
    expect(error.details?.line).toBe(3);
    expect(error.message).toMatch(/Unable to call `nope`/);
    expect(error.message).not.toMatch(/blob:|\/work|node_modules|\bat\b.*:\d+/);
  });

  it('reports syntax errors as TEMPLATE_SYNTAX_ERROR, also in header_html', async () => {
    const main = await failure({ template: { html: '<p>\n{% if x %}never closed' }, data: {} });
    expect(main).toMatchObject({ code: 'TEMPLATE_SYNTAX_ERROR', details: { line: 2 } });
    const header = await failure({ template: { html: 'ok', page: { header_html: '{{ x | }}' } }, data: {} });
    expect(header.code).toBe('TEMPLATE_SYNTAX_ERROR');
    expect(header.message).toMatch(/header_html/);
    expect(header.details).toEqual({ part: 'header', line: 1, column: 8 });
  });

  it('names the part, line and column of a runtime error in the footer', async () => {
    const error = await failure({ template: { html: 'ok', page: { footer_html: 'page\n {{ nope() }}' } }, data: {} });
    expect(error).toMatchObject({ code: 'TEMPLATE_RENDER_ERROR', details: { part: 'footer', line: 2 } });
    expect(error.message).toMatch(/footer_html line 2/);
  });

  it('evaluates the css as a template with the same data, printing CSS text unescaped', async () => {
    const html = await renderer.renderHtml({
      template: {
        html: '<p>x</p>',
        css: '.x::after { content: "{{ brand.tagline }}"; color: {{ brand.color | default("black") }} }',
      },
      data: { brand: { tagline: 'Fish & "Chips" </style><b>' } },
    });
    expect(html).toContain('<style>.x::after { content: "Fish & "Chips" <\\/style><b>"; color: black }</style>');
  });

  it('renderHtml returns the evaluated document with the CSS injected into the head', async () => {
    const html = await renderer.renderHtml({
      template: {
        html: '<!doctype html><html><head><title>t</title></head><body>{{ a }}</body></html>',
        css: 'body { color: red }',
      },
      data: { a: 'A&B' },
    });
    // The print defaults (html-assembly.ts) come first in the head, the template's CSS last.
    const defaults = `<style>${PRINT_DEFAULTS_CSS}</style>`;
    expect(html).toBe(
      `<!doctype html><html><head>${defaults}<title>t</title><style>body { color: red }</style></head><body>A&amp;B</body></html>`,
    );
    const headless = await renderer.renderHtml({ template: { html: '<p>x</p>', css: 'p{}' }, data: {} });
    expect(headless).toBe(`${defaults}<style>p{}</style><p>x</p>`);
  });
});

describe('print', () => {
  it('applies the template CSS and prints backgrounds', async () => {
    const { pdf } = await renderer.render({
      template: {
        html: '<p class="hidden">SECRET-HIDDEN</p><p>VISIBLE</p>',
        css: '.hidden { display: none } body { background: #123456 }',
      },
      data: {},
    });
    const out = pdfText(pdf);
    expect(out).toContain('VISIBLE');
    expect(out).not.toContain('SECRET-HIDDEN');
  });

  it('uses format and orientation from page, and CSS @page size wins', async () => {
    const a5 = await renderer.render({
      template: { html: 'x', page: { format: 'A5', orientation: 'landscape' } },
      data: {},
    });
    expect(pageSize(a5.pdf)).toEqual([596, 420]);
    const letter = await renderer.render({ template: { html: 'x', page: { format: 'Letter' } }, data: {} });
    expect(pageSize(letter.pdf)).toEqual([612, 792]);
    const cssWins = await renderer.render({
      template: { html: 'x', css: '@page { size: A3 }', page: { format: 'Letter' } },
      data: {},
    });
    expect(pageSize(cssWins.pdf)).toEqual([842, 1191]);
  });

  it('writes a tagged PDF with a document outline from the headings', async () => {
    const { pdf } = await renderer.render({
      template: { html: '<h1>Chapter One</h1><p>a</p><h2>Section Two</h2><p>b</p>' },
      data: {},
    });
    expect(pdfInfo(pdf).Tagged).toBe('yes');
    expect(pdfOutlineTitles(pdf)).toEqual(expect.arrayContaining(['Chapter One', 'Section Two']));
  });

  it('prints header and footer templates with page numbers on every page', async () => {
    const { pdf } = await renderer.render({
      template: {
        html: '{% for i in range(0, 3) %}<section style="break-after: page">Body page {{ i + 1 }}</section>{% endfor %}',
        css: 'section:last-child { break-after: auto }',
        page: {
          format: 'A4',
          margin: { top: '20mm', bottom: '20mm', left: '10mm', right: '10mm' },
          header_html: '<div style="font-size:10px">{{ company }} &amp; report</div>',
          footer_html:
            '<div style="font-size:10px">Page <span class="pageNumber"></span> of <span class="totalPages"></span></div>',
        },
      },
      data: { company: 'Globex <Corp>' },
    });
    expect(pdfInfo(pdf).Pages).toBe('3');
    for (const page of [1, 2, 3]) {
      const out = pdfText(pdf, { page });
      expect(out).toContain(`Page ${page} of 3`);
      expect(out).toContain('Globex <Corp> & report');
      expect(out).toContain(`Body page ${page}`);
    }
  });

  it('a preview is stamped PREVIEW on every page after printing, beyond the reach of the template CSS', async () => {
    const printed = await renderer.render({
      kind: 'preview',
      template: {
        html: '<p style="break-after:page">one</p><p>two</p>',
        // A template trying to hide any watermark it can reach.
        css: '* { display: none !important; } html, body, p { display: block !important; } [style*=PREVIEW], div { visibility: hidden !important }',
      },
      data: {},
    });
    // The stamp goes on after printing, in the finishing step, where no template CSS reaches.
    const pdf = await stampPreview(printed.pdf);
    expect(pdfInfo(pdf).Pages).toBe('2');
    for (const page of [1, 2]) expect(pdfText(pdf, { page, raw: true }).replace(/\s+/g, '')).toContain('PREVIEW');
    const normal = await renderer.render({ template: { html: 'one' }, data: {} });
    expect(pdfText(normal.pdf, { raw: true })).not.toContain('PRE');
  });

  it('waits for data: images and fonts before printing', async () => {
    const font = readFileSync('/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf').toString('base64');
    const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC';
    const { pdf } = await renderer.render({
      template: {
        html: `<p class="mono">Monospaced</p><img src="data:image/png;base64,${png}" width="50" height="50">`,
        css: `@font-face { font-family: Embedded; src: url(data:font/ttf;base64,${font}); } .mono { font-family: Embedded; }`,
      },
      data: {},
    });
    expect(pdfTool('pdffonts', pdf)).toContain('DejaVuSansMono');
    expect(pdfTool('pdfimages', pdf, ['-list']).trim().split('\n')).toHaveLength(3); // header, rule, one image
  });

  it('prints a document of more than 1 MiB of HTML whole (its PDF is read as a stream, not inline)', async () => {
    const { pdf } = await renderer.render({
      template: {
        html: '{% for i in range(0, 40) %}<section style="break-after: page">Sheet {{ i + 1 }} of {{ name }}<span hidden>{{ filler }}</span></section>{% endfor %}',
        css: 'section:last-child { break-after: auto }',
      },
      data: { name: 'Large Ltd', filler: 'x'.repeat(30_000) },
    });
    expect(pdfInfo(pdf).Pages).toBe('40');
    expect(pdfText(pdf, { page: 40 })).toContain('Sheet 40 of Large Ltd');
  });

  it('rejects margins that are not lengths', async () => {
    const error = await failure({ template: { html: 'x', page: { margin: { top: 'calc(1px)' } } }, data: {} });
    expect(error.code).toBe('INVALID_REQUEST');
  });

  it.skipIf(!hasPeersInvoice)(
    `renders the peers benchmark invoice fixture to one A4 page${hasPeersInvoice ? '' : ` (skipped: no ${PEERS_FIXTURES}/invoice.html on this machine; set PEERS_DIR)`}`,
    async () => {
      const source = readFileSync(join(PEERS_FIXTURES, 'invoice.html'), 'utf8');
      const data = JSON.parse(readFileSync(join(PEERS_FIXTURES, 'invoice.json'), 'utf8')) as {
        invoice: { number: string };
      };
      const { pdf } = await renderer.render({ template: { html: source }, data });
      expect(pdfInfo(pdf).Pages).toBe('1');
      expect(pdfText(pdf)).toContain(data.invoice.number);
    },
  );
});
