/**
 * A CSS `@page { size }` past what Chromium prints (issue 49, HARDENING "no 500 for a size"): every
 * way CSS writes a length — exponents, `Q`, `calc()`, `var()`, viewport units, `!important`, a
 * linked style sheet — is a 422 naming the page size, nothing is charged, and the next document
 * prints. Before, only lengths a text scan recognised were refused; the rest were a 500.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pdfText } from '../../support/documents/pdf-tools.js';
import { startTestApp, type TestApp } from '../../support/test-app.js';

const FORMS = [
  '1e5px',
  '100000Q',
  '+1000in',
  'calc(500in + 500in)',
  'var(--side)',
  '100000vh',
  '1000in !important',
  '10in 2000in',
];

describe('@page sizes Chromium cannot print', () => {
  let t: TestApp;
  let apiKey: string;
  const balance = async () => (await t.request('GET', '/v1/account', { apiKey })).body.credits as number;
  const print = async (html: string) => {
    const template = await t.request('POST', '/v1/templates', { apiKey, body: { name: 'Long page', html } });
    expect(template.status, JSON.stringify(template.body)).toBe(201);
    return t.request('POST', '/v1/pdf/create', {
      apiKey,
      body: { template_id: template.body.id, data: {}, export_type: 'binary' },
    });
  };

  beforeAll(async () => {
    t = await startTestApp('sqlite', { PRESSROOM_RENDER_CONCURRENCY: '1' });
    apiKey = (await t.createAccount({ credits: 5, plan: 'enterprise' })).apiKey;
  });
  afterAll(async () => t?.close());

  it.each(FORMS)('size: %s is refused with the size named, and nothing is charged', async (size) => {
    const res = await print(`<style>:root{--side:1000in} @page { size: ${size} }</style><p>Long</p>`);
    expect(res.status, JSON.stringify(res.body)).toBe(422);
    expect(res.body).toMatchObject({
      error: 'DOCUMENT_TOO_LARGE',
      message: expect.stringContaining('longer than the 900in'),
    });
    expect(await balance()).toBe(5);
  });

  it('finds the size in a linked style sheet too, then prints the next document', async () => {
    const sheet = `data:text/css,${encodeURIComponent('@page { size: 2e3in 1in }')}`;
    const res = await print(`<link rel="stylesheet" href="${sheet}"><p>Linked</p>`);
    expect(res.status, JSON.stringify(res.body)).toBe(422);
    expect(res.body.message).toContain('2e3in 1in'.replace('2e3in', '2000in'));

    const fine = await print('<style>@page { size: 100in 10in }</style><p>Fits</p>');
    expect(fine.status).toBe(200);
    expect(pdfText(fine.bytes)).toContain('Fits');
    expect(await balance()).toBe(4);
  });
});
