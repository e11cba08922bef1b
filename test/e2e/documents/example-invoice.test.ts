/**
 * The README's invoice (examples/invoice/) renders as the README says, through the same script a
 * reader runs against a service: the brand font embedded in the body and the footer, the logo
 * asset used, German amounts, and a SEPA payment code a scanner reads. SQLite only: the example
 * exercises rendering, and the databases are covered by every other e2e file.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pdfBarcodes, pdfText, pdfTool } from '../../support/documents/pdf-tools.js';
import { startTestApp, type TestApp } from '../../support/test-app.js';

const run = promisify(execFile);

describe('the example invoice', () => {
  let t: TestApp;
  let out: string;

  beforeAll(async () => {
    t = await startTestApp('sqlite', { PRESSROOM_RENDER_CONCURRENCY: '1' });
    out = mkdtempSync(join(tmpdir(), 'pressroom-example-'));
  });
  afterAll(async () => {
    await t?.close();
    if (out) rmSync(out, { recursive: true, force: true });
  });

  it('renders through examples/invoice/render.mjs with its logo, brand font, amounts and payment code', async () => {
    const account = await t.createAccount({ credits: 5, plan: 'pro' });
    const { stderr } = await run(process.execPath, ['examples/invoice/render.mjs', out], {
      env: { ...process.env, PRESSROOM_URL: t.baseUrl, API_KEY: account.apiKey },
    });
    // Every resource loaded: the script reports warnings on stderr.
    expect(stderr).toBe('');
    const pdf = readFileSync(join(out, 'invoice.pdf'));
    const text = pdfText(pdf).replace(/\u00a0/g, ' ');
    expect(text).toContain('24. November 2026');
    expect(text).toMatch(/Gesamt\s+9\.217,74 €/);
    expect(text).toContain('USt. 19 %');
    expect(text).toContain('Seite 1 von 1');
    expect(pdfTool('pdffonts', pdf)).toMatch(
      /NotoSerifDisplay-Regular[\s\S]*NotoSerifDisplay-Bold|NotoSerifDisplay-Bold[\s\S]*NotoSerifDisplay-Regular/,
    );
    expect(pdfBarcodes(pdf)).toEqual([
      'QR-Code:BCD\n002\n1\nSCT\nCOBADEFFXXX\nNordlicht Design GmbH\nDE89370400440532013000\nEUR9217.74\n\nRE-2026-0042',
    ]);
    const balance = (await t.request('GET', '/v1/account', { apiKey: account.apiKey })).body.credits as number;
    expect(balance).toBe(4);
  });
});
