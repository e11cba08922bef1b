/**
 * POST /v1/pdf-tools/merge keeps the inputs' structure trees (tagged PDF, PDF/UA) over real HTTP with
 * real Chromium, read with independent tools: qpdf's JSON for the tree, the catalog and the pages,
 * pdftotext for the text and its order, pdfinfo's XMP, and the service's own free check. Tagged inputs
 * are merged on an accessibility thread (src/accessibility/merge-tagged.ts); untagged ones by qpdf.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PDFDocument, StandardFonts } from '@cantoo/pdf-lib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DOCUMENT_DIALECTS } from '../../support/databases.js';
import { pdfOutlineTitles, pdfPages, pdfStructureTypes, pdfText, pdfXmp } from '../../support/documents/pdf-tools.js';
import { startTestApp, type TestApp } from '../../support/test-app.js';

const DOT =
  'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

/** An English report: a heading, a link, a figure, a table with header cells (Chromium gives them IDs and /Headers). */
const ALPHA = `<!doctype html><html lang="en"><head><title>Alpha {{ n }}</title></head><body>
<h1>Alpha report {{ n }}</h1><p>Alpha text, see <a href="https://example.com/terms">our terms</a>.</p>
<img src="${DOT}" alt="Alpha logo" width="40" height="40">
<table><thead><tr><th>Item</th><th>Qty</th></tr></thead><tbody><tr><td>Engine</td><td>1</td></tr></tbody></table>
</body></html>`;
/** A German report of two pages. */
const BRAVO = `<!doctype html><html lang="de"><head><title>Bravo</title></head><body>
<h1>Bravo Bericht</h1><p>Bravo Text</p><img src="${DOT}" alt="Bravo Bild" width="40" height="40">
<h2 style="break-before: page">Bravo Teil</h2><p>Bravo Seite zwei</p></body></html>`;

type QpdfObject = { value?: Record<string, unknown> };

/** qpdf's JSON of the file: its objects (`obj:N 0 R`, `trailer`) and its pages' object ids in order. */
function qpdfJson(pdf: Buffer): { objects: Record<string, QpdfObject>; pages: string[] } {
  const dir = mkdtempSync(join(tmpdir(), 'merge-tagged-'));
  try {
    writeFileSync(join(dir, 'in.pdf'), pdf);
    const json = execFileSync('qpdf', ['--json=2', '--json-key=qpdf', '--json-key=pages', join(dir, 'in.pdf')], {
      encoding: 'utf8',
      maxBuffer: 1 << 28,
    });
    const parsed = JSON.parse(json) as { qpdf: [unknown, Record<string, QpdfObject>]; pages: { object: string }[] };
    return { objects: parsed.qpdf[1], pages: parsed.pages.map((p) => p.object) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A direct value, or the value of the object a reference names. */
const resolve = (objects: Record<string, QpdfObject>, v: unknown) =>
  typeof v === 'string' && / R$/.test(v) ? objects[`obj:${v}`]?.value : (v as Record<string, unknown> | undefined);

function catalog(pdf: Buffer): Record<string, unknown> {
  const { objects } = qpdfJson(pdf);
  return resolve(objects, objects.trailer!.value!['/Root'])!;
}

/** Structure elements (a /S and a /P, as pdfStructureTypes counts them). */
const elements = (objects: Record<string, QpdfObject>) =>
  Object.values(objects)
    .map((o) => o.value)
    .filter((v): v is Record<string, unknown> => !!v && typeof v['/S'] === 'string' && v['/P'] !== undefined);

/** The counts a reader notices: headings, paragraphs, tables and their cells, figures, links. */
const CONTENT_TYPES = ['H1', 'H2', 'P', 'Table', 'TH', 'TD', 'Figure', 'Link'] as const;
const contentCounts = (pdf: Buffer) => {
  const types = pdfStructureTypes(pdf);
  return Object.fromEntries(CONTENT_TYPES.map((t) => [t, types[t] ?? 0]));
};
const summed = (...pdfs: Buffer[]) =>
  Object.fromEntries(CONTENT_TYPES.map((t) => [t, pdfs.reduce((sum, pdf) => sum + contentCounts(pdf)[t]!, 0)]));

/** An untagged one-page PDF made by pdf-lib; with `field`, a text field `name` holding it. */
async function untaggedPdf(text: string, field?: string): Promise<Buffer> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  const page = doc.addPage([300, 400]);
  page.drawText(text, { x: 30, y: 300, size: 18, font });
  if (field !== undefined) {
    const input = doc.getForm().createTextField('name');
    input.setText(field);
    input.addToPage(page, { x: 30, y: 100 });
  }
  return Buffer.from(await doc.save());
}

/** The form's fields as qpdf lists them: full name and value. */
function formFields(pdf: Buffer): [string, unknown][] {
  const dir = mkdtempSync(join(tmpdir(), 'merge-tagged-'));
  try {
    writeFileSync(join(dir, 'in.pdf'), pdf);
    const json = execFileSync('qpdf', ['--json=2', '--json-key=acroform', join(dir, 'in.pdf')], { encoding: 'utf8' });
    const { acroform } = JSON.parse(json) as { acroform: { fields: { fullname: string; value: unknown }[] } };
    return acroform.fields.map((f) => [f.fullname, f.value]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe.each(DOCUMENT_DIALECTS)('merging tagged PDFs on %s', (dialect) => {
  let t: TestApp;
  let user: { accountId: string; apiKey: string };
  let alphaUa: Buffer;
  let alphaUa2: Buffer;
  let bravoUa: Buffer;
  let alphaTagged: Buffer;

  const merge = async (...pdfs: Buffer[]) => {
    const res = await t.request('POST', '/v1/pdf-tools/merge', {
      apiKey: user.apiKey,
      body: { pdfs: pdfs.map((pdf) => ({ pdf_base64: pdf.toString('base64') })), export_type: 'binary' },
    });
    expect(res.status, res.bytes.toString().slice(0, 400)).toBe(200);
    return res;
  };
  const balance = async () => (await t.request('GET', '/v1/account', { apiKey: user.apiKey })).body.credits as number;

  beforeAll(async () => {
    t = await startTestApp(dialect);
    user = await t.createAccount({ credits: 100, plan: 'enterprise' });
    const template = async (html: string) =>
      (await t.request('POST', '/v1/templates', { apiKey: user.apiKey, body: { name: 'Merge', html } })).body
        .id as string;
    const [alpha, bravo] = [await template(ALPHA), await template(BRAVO)];
    const create = async (template_id: string, extra: Record<string, unknown>) => {
      const res = await t.request('POST', '/v1/pdf/create', {
        apiKey: user.apiKey,
        body: { template_id, data: { n: 1 }, export_type: 'binary', ...extra },
      });
      expect(res.status, res.bytes.toString().slice(0, 400)).toBe(200);
      return res.bytes;
    };
    alphaUa = await create(alpha, { pdf_ua: true });
    alphaUa2 = await create(alpha, { pdf_ua: true, data: { n: 2 } });
    bravoUa = await create(bravo, { pdf_ua: true });
    alphaTagged = await create(alpha, { tagged: true });
  });
  afterAll(async () => t?.close());

  it('keeps both PDF/UA inputs’ structure trees as one, on the merged pages, for one credit, and the merged file passes the check', async () => {
    const before = await balance();
    const { bytes: merged } = await merge(alphaUa, bravoUa);
    expect(await balance()).toBe(before - 1);

    expect(pdfPages(merged)).toBe(pdfPages(alphaUa) + pdfPages(bravoUa));
    const text = pdfText(merged);
    expect(text).toContain('Alpha report 1');
    expect(text.indexOf('Alpha text')).toBeLessThan(text.indexOf('Bravo Bericht'));
    expect(text.indexOf('Bravo Bericht')).toBeLessThan(text.indexOf('Bravo Seite zwei'));

    // Every element of both inputs, under one Document: each input's own Document is a Part of it.
    expect(contentCounts(merged)).toEqual(summed(alphaUa, bravoUa));
    expect(contentCounts(merged).TH).toBe(2);
    const types = pdfStructureTypes(merged);
    expect(types.Document).toBe(1);
    expect(types.Part).toBe(2);

    const root = catalog(merged);
    expect(root['/MarkInfo']).toMatchObject({ '/Marked': true });
    expect(root['/Lang']).toBe('u:en');
    expect(root['/ViewerPreferences']).toMatchObject({ '/DisplayDocTitle': true });

    const { objects, pages } = qpdfJson(merged);
    const all = elements(objects);
    // The German input keeps its language on its Part.
    expect(all.filter((e) => e['/S'] === '/Part').map((e) => e['/Lang'])).toEqual(['u:en', 'u:de']);
    expect(all.filter((e) => e['/S'] === '/Figure').map((e) => e['/Alt'])).toEqual(['u:Alpha logo', 'u:Bravo Bild']);
    // Every /Pg of an element, a marked-content or an object reference, is a page of the merged file.
    const pgs = Object.values(objects)
      .map((o) => o.value?.['/Pg'])
      .filter((pg) => pg !== undefined);
    expect(pgs.length).toBeGreaterThan(10);
    for (const pg of pgs) expect(pages).toContain(pg);
    expect(new Set(pgs).size).toBe(pages.length);

    // One parent tree: each page's /StructParents and each link's /StructParent is its own key in it.
    const tree = resolve(objects, resolve(objects, root['/StructTreeRoot'])!['/ParentTree'])!;
    const nums = tree['/Nums'] as unknown[];
    const keys = nums.filter((_, i) => i % 2 === 0) as number[];
    const pageKeys = pages.map((p) => objects[`obj:${p}`]!.value!['/StructParents'] as number);
    const linkKeys = Object.values(objects)
      .map((o) => o.value)
      .filter((v) => v?.['/Subtype'] === '/Link')
      .map((v) => v!['/StructParent'] as number);
    expect(linkKeys).toHaveLength(1);
    expect(new Set([...pageKeys, ...linkKeys]).size).toBe(pages.length + 1);
    for (const key of [...pageKeys, ...linkKeys]) expect(keys).toContain(key);

    const xmp = pdfXmp(merged);
    expect(xmp).toMatch(/<pdfuaid:part>1<\/pdfuaid:part>/);
    expect(xmp).toContain('Alpha 1');
    const check = await t.request('POST', '/v1/pdf-tools/check-accessibility', {
      apiKey: user.apiKey,
      body: { pdf_base64: merged.toString('base64') },
    });
    expect(check.status, JSON.stringify(check.body)).toBe(200);
    expect(check.body).toMatchObject({ compliant: true, findings: [] });
  });

  it('keeps table header IDs apart when two inputs share them: every /Headers names one ID of the merged tree', async () => {
    const { bytes: merged } = await merge(alphaUa, alphaUa2);
    expect(contentCounts(merged)).toEqual(summed(alphaUa, alphaUa2));
    const { objects } = qpdfJson(merged);
    const all = elements(objects);
    const ids = all.map((e) => e['/ID']).filter((id) => id !== undefined);
    expect(ids.length).toBe(4);
    expect(new Set(ids).size).toBe(4);
    const root = resolve(objects, catalog(merged)['/StructTreeRoot'])!;
    const named = (resolve(objects, root['/IDTree'])!['/Names'] as unknown[]).filter((_, i) => i % 2 === 0);
    expect([...named].sort()).toEqual([...ids].sort());
    const headers = all.flatMap((e) =>
      ((e['/A'] as Record<string, unknown>[] | undefined) ?? []).flatMap((a) => (a['/Headers'] as unknown[]) ?? []),
    );
    expect(headers.length).toBe(4);
    for (const h of headers) expect(ids).toContain(h);
    const check = await t.request('POST', '/v1/pdf-tools/check-accessibility', {
      apiKey: user.apiKey,
      body: { pdf_base64: merged.toString('base64') },
    });
    expect(check.body.findings).toEqual([]);
  });

  it('merges an untagged PDF with a tagged one: all pages, the tagged one’s elements; no PDF/UA claim, no outline', async () => {
    const plain = await untaggedPdf('Plain cover page');
    const { bytes: merged } = await merge(plain, alphaTagged);
    expect(pdfPages(merged)).toBe(1 + pdfPages(alphaTagged));
    const text = pdfText(merged);
    expect(text.indexOf('Plain cover page')).toBeLessThan(text.indexOf('Alpha report 1'));
    expect(contentCounts(merged)).toEqual(contentCounts(alphaTagged));
    expect(catalog(merged)['/MarkInfo']).toMatchObject({ '/Marked': true });
    const { objects, pages } = qpdfJson(merged);
    // The untagged page is outside the tree: no key into the parent tree.
    expect(objects[`obj:${pages[0]}`]!.value!['/StructParents']).toBeUndefined();
    expect(objects[`obj:${pages[1]}`]!.value!['/StructParents']).toBe(0);
    // Not every input is PDF/UA (none here): the result claims nothing; the outline is not carried, as qpdf's merge.
    expect(pdfXmp(merged)).not.toContain('pdfuaid');
    expect(pdfOutlineTitles(alphaTagged)).toEqual(['Alpha report 1']);
    expect(pdfOutlineTitles(merged)).toEqual([]);
  });

  it('keeps form fields as qpdf’s merge does, a clashing name made unique', async () => {
    const [first, second] = [await untaggedPdf('Form one', 'Ada'), await untaggedPdf('Form two', 'Grace')];
    const { bytes: merged } = await merge(first, alphaTagged, second);
    expect(pdfPages(merged)).toBe(2 + pdfPages(alphaTagged));
    expect(contentCounts(merged)).toEqual(contentCounts(alphaTagged));
    const { bytes: byQpdf } = await merge(first, second);
    expect(formFields(byQpdf)).toEqual([
      ['name', 'u:Ada'],
      ['name+1', 'u:Grace'],
    ]);
    expect(formFields(merged)).toEqual(formFields(byQpdf));
  });

  it('a PDF/UA input merged with a tagged one keeps the tags but claims no PDF/UA; two untagged stay untagged', async () => {
    const { bytes: mixed } = await merge(alphaUa, alphaTagged);
    expect(contentCounts(mixed)).toEqual(summed(alphaUa, alphaTagged));
    expect(pdfXmp(mixed)).not.toContain('pdfuaid');

    const { bytes: plain } = await merge(await untaggedPdf('One'), await untaggedPdf('Two'));
    expect(pdfPages(plain)).toBe(2);
    expect(catalog(plain)['/StructTreeRoot']).toBeUndefined();
    expect(pdfText(plain).indexOf('One')).toBeLessThan(pdfText(plain).indexOf('Two'));

    // A file whose tree an older merge dropped keeps its pages' /StructParents: still untagged, merged as such.
    const dir = mkdtempSync(join(tmpdir(), 'merge-tagged-'));
    let stale: Buffer;
    try {
      writeFileSync(join(dir, 'in.pdf'), alphaTagged);
      stale = execFileSync('qpdf', ['--empty', '--pages', join(dir, 'in.pdf'), '--', '-']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    expect(stale.includes('/StructParents')).toBe(true);
    const { bytes: again } = await merge(stale, await untaggedPdf('Three'));
    expect(pdfPages(again)).toBe(pdfPages(alphaTagged) + 1);
    expect(catalog(again)['/StructTreeRoot']).toBeUndefined();
    expect(pdfText(again)).toContain('Alpha report 1');
  });
});
