/**
 * E-invoices through the API (issue 16), real Chromium, on SQLite and PostgreSQL: the issue's
 * 3-line invoice (19 % and 7 % VAT, a document allowance) as Factur-X in every profile and as
 * ZUGFeRD, whose embedded XML (pdfdetach) passes the service's own schema check with the hand-computed
 * totals; XRechnung CII and UBL as XML answers; broken invoices answer 422 with the rule id and cost nothing.
 * Then `einvoice: {format, xml}`, the customer's own XML: embedded byte for byte or answered as it came,
 * and refused at no charge when it is broken or misfiled (the checks one by one: src/einvoice/xml/supplied-xml.test.ts).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { XMLParser } from 'fast-xml-parser';
import { PDFArray, PDFDict, PDFDocument, PDFName, PDFRawStream } from 'pdf-lib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildEInvoice } from '../../../src/einvoice/einvoice.js';
import { checkCiiSchema } from '../../../src/einvoice/xmllint/xml-schema-check.js';
import {
  SUPPLIED_XML_MAX_CHARS,
  type EInvoiceFormat,
  type EInvoiceProfile,
  type Invoice,
} from '../../../src/einvoice/invoice-schema.js';
import { DOCUMENT_DIALECTS } from '../../support/databases.js';
import { DIRECT_DEBIT_PAYMENT, SAMPLE_INVOICE, SAMPLE_TOTALS } from '../../support/documents/einvoice-samples.js';
import { pdfAttachments, pdfInfo, pdfText, pdfXmp } from '../../support/documents/pdf-tools.js';
import { startTestApp, type TestApp } from '../../support/test-app.js';

const TEMPLATE =
  '<h1>Invoice {{ einvoice.invoice.number }}</h1><p>{{ note }}</p><p>Amount due {{ einvoice.totals.amount_due }} {{ einvoice.invoice.currency }}</p>';
/** For the customer's own XML: what the template is given instead of the invoice and its totals. */
const XML_TEMPLATE =
  '<h1>{{ note }}</h1><p>Format {{ einvoice.format }} profile {{ einvoice.profile }} own XML {{ einvoice.xml }} totals {% if einvoice.totals %}some{% else %}none{% endif %}</p>';

/** The XML the service builds from the sample invoice: what a customer's own XML looks like. */
async function ownXml(format: EInvoiceFormat, profile?: EInvoiceProfile): Promise<string> {
  return (await buildEInvoice({ format, profile, invoice: SAMPLE_INVOICE }, { accountId: 'test' })).xml;
}

/** The files pdfdetach lists, and the first one's bytes. */
function detach(pdf: Buffer): { names: string[]; first: string } {
  const dir = mkdtempSync(join(tmpdir(), 'einvoice-test-'));
  try {
    const path = join(dir, 'in.pdf');
    writeFileSync(path, pdf);
    const list = execFileSync('pdfdetach', ['-list', path], { encoding: 'utf8' });
    const names = list
      .split('\n')
      .slice(1)
      .map((l) => l.replace(/^\d+:\s*/, '').trim())
      .filter(Boolean);
    execFileSync('pdfdetach', ['-save', '1', '-o', join(dir, 'out.xml'), path]);
    return { names, first: readFileSync(join(dir, 'out.xml'), 'utf8') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** /AFRelationship and the MIME type of the catalog's first associated file. */
async function associatedFile(pdf: Buffer): Promise<{ relationship?: string; mimeType?: string }> {
  const doc = await PDFDocument.load(pdf, { updateMetadata: false });
  const spec = doc.catalog.lookup(PDFName.of('AF'), PDFArray).lookup(0, PDFDict);
  const stream = spec.lookup(PDFName.of('EF'), PDFDict).lookup(PDFName.of('F'));
  if (!(stream instanceof PDFRawStream)) throw new Error('the associated file has no embedded stream');
  return {
    relationship: spec.lookup(PDFName.of('AFRelationship'), PDFName).decodeText(),
    mimeType: stream.dict.lookup(PDFName.of('Subtype'), PDFName).decodeText(),
  };
}

/** The CII totals, as text, from the XML. */
function ciiTotals(xml: string): Record<string, unknown> {
  const parsed = new XMLParser({ removeNSPrefix: true, parseTagValue: false }).parse(xml);
  const settlement = parsed.CrossIndustryInvoice.SupplyChainTradeTransaction.ApplicableHeaderTradeSettlement;
  const sum = settlement.SpecifiedTradeSettlementHeaderMonetarySummation;
  const tax = typeof sum.TaxTotalAmount === 'object' ? sum.TaxTotalAmount['#text'] : sum.TaxTotalAmount;
  return {
    taxExclusive: sum.TaxBasisTotalAmount,
    taxTotal: tax,
    taxInclusive: sum.GrandTotalAmount,
    amountDue: sum.DuePayableAmount,
    line: sum.LineTotalAmount,
    allowance: sum.AllowanceTotalAmount,
    vat: settlement.ApplicableTradeTax,
  };
}

const clone = (): Invoice => structuredClone(SAMPLE_INVOICE);

/** The broken invoices: each with the rule it breaks and where. */
const BROKEN: {
  name: string;
  format?: string;
  invoice: (inv: Invoice) => void;
  type: string;
  loc: (string | number)[];
}[] = [
  {
    name: 'a wrong total sent',
    invoice: (inv) => {
      inv.totals = { tax_inclusive: 1460.2 };
    },
    type: 'BR-CO-15',
    loc: ['totals', 'tax_inclusive'],
  },
  {
    name: 'a wrong VAT total sent',
    invoice: (inv) => {
      inv.totals = { tax_total: 225.62 };
    },
    type: 'BR-CO-14',
    loc: ['totals', 'tax_total'],
  },
  {
    name: 'no seller VAT id with a standard-rated line',
    invoice: (inv) => {
      delete inv.seller.vat_id;
    },
    type: 'BR-S-02',
    loc: ['seller', 'vat_id'],
  },
  {
    name: 'an unknown currency',
    invoice: (inv) => {
      inv.currency = 'EUX';
    },
    type: 'BR-CL-04',
    loc: ['currency'],
  },
  {
    name: 'an unknown unit code',
    invoice: (inv) => {
      inv.lines[1]!.unit_code = 'PCE';
    },
    type: 'BR-CL-23',
    loc: ['lines', 1, 'unit_code'],
  },
  {
    name: 'a line without VAT category',
    invoice: (inv) => {
      delete inv.lines[2]!.vat_category;
    },
    type: 'BR-CO-04',
    loc: ['lines', 2, 'vat_category'],
  },
  {
    name: 'XRechnung without buyer reference',
    format: 'xrechnung-cii',
    invoice: (inv) => {
      delete inv.buyer_reference;
    },
    type: 'BR-DE-15',
    loc: ['buyer_reference'],
  },
  {
    name: 'an unknown country',
    invoice: (inv) => {
      inv.buyer.address.country_code = 'XX';
    },
    type: 'BR-CL-14',
    loc: ['buyer', 'address', 'country_code'],
  },
  {
    name: 'a standard-rated line at 0 %',
    invoice: (inv) => {
      inv.lines[0]!.vat_rate = 0;
    },
    type: 'BR-S-05',
    loc: ['lines', 0, 'vat_rate'],
  },
  {
    name: 'an unknown payment means code',
    invoice: (inv) => {
      inv.payment!.means_code = '999';
    },
    type: 'BR-CL-16',
    loc: ['payment', 'means_code'],
  },
  {
    name: 'no due date nor payment terms',
    invoice: (inv) => {
      delete inv.due_date;
      delete inv.payment!.terms;
    },
    type: 'BR-CO-25',
    loc: ['due_date'],
  },
  {
    name: 'an allowance without reason',
    invoice: (inv) => {
      delete inv.allowances![0]!.reason;
      delete inv.allowances![0]!.reason_code;
    },
    type: 'BR-33',
    loc: ['allowances', 0],
  },
  {
    name: 'XRechnung UBL without seller contact',
    format: 'xrechnung-ubl',
    invoice: (inv) => {
      delete inv.seller.contact;
    },
    type: 'BR-DE-2',
    loc: ['seller', 'contact'],
  },
  {
    name: 'XRechnung UBL SEPA direct debit without the mandate',
    format: 'xrechnung-ubl',
    invoice: (inv) => {
      inv.payment = { means_code: '59', terms: 'Debited on the due date.' };
    },
    type: 'BR-DE-25-a',
    loc: ['payment'],
  },
  {
    name: 'XRechnung CII direct debit without the mandate reference',
    format: 'xrechnung-cii',
    invoice: (inv) => {
      const { mandate_reference: _, ...p } = DIRECT_DEBIT_PAYMENT;
      inv.payment = p;
    },
    type: 'PEPPOL-EN16931-R061',
    loc: ['payment', 'mandate_reference'],
  },
  {
    name: 'XRechnung CII SEPA direct debit with the payee IBAN',
    format: 'xrechnung-cii',
    invoice: (inv) => {
      inv.payment = { ...DIRECT_DEBIT_PAYMENT, iban: 'DE02120300000000202051' };
    },
    type: 'BR-DE-25-b',
    loc: ['payment', 'iban'],
  },
];

describe.each(DOCUMENT_DIALECTS)(
  'e-invoices on %s',
  (dialect) => {
    let t: TestApp;
    let account: { accountId: string; apiKey: string };
    let templateId: string;
    let xmlTemplateId: string;
    const balance = async () =>
      (await t.request('GET', '/v1/account', { apiKey: account.apiKey })).body.credits as number;
    const jobCount = async () =>
      (await t.request('GET', '/v1/pdf/jobs', { apiKey: account.apiKey })).body.total as number;
    const create = (body: Record<string, unknown>) =>
      t.request('POST', '/v1/pdf/create', {
        apiKey: account.apiKey,
        body: { template_id: templateId, data: { note: 'Hello' }, export_type: 'binary', ...body },
      });

    beforeAll(async () => {
      // The machine is shared with other renders: generous deadlines, never a shorter one.
      t = await startTestApp(dialect, {
        PRESSROOM_JOB_POLL_MS: '100',
        PRESSROOM_RENDER_TIMEOUT_MS: '120000',
        PRESSROOM_TEMPLATE_TIMEOUT_MS: '30000',
      });
      t.services.startWorkers();
      account = await t.createAccount({ credits: 50, plan: 'enterprise' });
      const res = await t.request('POST', '/v1/templates', {
        apiKey: account.apiKey,
        body: { name: 'Invoice', html: TEMPLATE },
      });
      expect(res.status).toBe(201);
      templateId = res.body.id;
      const xmlRes = await t.request('POST', '/v1/templates', {
        apiKey: account.apiKey,
        body: { name: 'Own XML', html: XML_TEMPLATE },
      });
      expect(xmlRes.status).toBe(201);
      xmlTemplateId = xmlRes.body.id;
    });
    afterAll(async () => t?.close());

    it.each([
      { format: 'factur-x', profile: 'minimum', level: 'MINIMUM', relationship: 'Data' },
      { format: 'factur-x', profile: 'basic-wl', level: 'BASIC WL', relationship: 'Data' },
      { format: 'factur-x', profile: 'basic', level: 'BASIC', relationship: 'Alternative' },
      { format: 'factur-x', profile: 'en16931', level: 'EN 16931', relationship: 'Alternative' },
      { format: 'factur-x', profile: 'extended', level: 'EXTENDED', relationship: 'Alternative' },
      { format: 'zugferd', profile: 'en16931', level: 'EN 16931', relationship: 'Alternative' },
    ] as const)(
      '$format $profile: a PDF/A-3b carrying factur-x.xml with the hand-computed totals',
      async ({ format, profile, level, relationship }) => {
        const before = await balance();
        const res = await create({ einvoice: { format, profile, invoice: SAMPLE_INVOICE } });
        expect(res.status, res.bytes.toString('utf8', 0, 500)).toBe(200);
        expect(res.headers.get('content-type')).toBe('application/pdf');
        const pdf = res.bytes;
        expect(pdfText(pdf)).toContain(`Amount due ${SAMPLE_TOTALS.amountDue} EUR`);
        const { names, first: xml } = detach(pdf);
        expect(names).toEqual(['factur-x.xml']);
        expect(await checkCiiSchema(xml, profile, 'test')).toEqual([]);
        const totals = ciiTotals(xml);
        expect(totals).toMatchObject({
          taxExclusive: SAMPLE_TOTALS.taxExclusive,
          taxTotal: SAMPLE_TOTALS.taxTotal,
          taxInclusive: SAMPLE_TOTALS.taxInclusive,
          amountDue: SAMPLE_TOTALS.amountDue,
        });
        if (profile !== 'minimum') {
          expect(totals).toMatchObject({ line: SAMPLE_TOTALS.lineTotal, allowance: SAMPLE_TOTALS.allowanceTotal });
          const vat = (
            totals.vat as { BasisAmount: string; CalculatedAmount: string; RateApplicablePercent: string }[]
          ).map((g) => ({ rate: g.RateApplicablePercent, basis: g.BasisAmount, tax: g.CalculatedAmount }));
          expect(vat).toEqual(SAMPLE_TOTALS.vat);
        }
        expect(await associatedFile(pdf)).toEqual({ relationship, mimeType: 'text/xml' });
        const xmp = pdfXmp(pdf);
        expect(xmp).toContain('<pdfaid:part>3</pdfaid:part>');
        expect(xmp).toContain(`<fx:ConformanceLevel>${level}</fx:ConformanceLevel>`);
        expect(xmp).toContain('<fx:DocumentFileName>factur-x.xml</fx:DocumentFileName>');
        expect(xmp).toContain(
          '<pdfaSchema:namespaceURI>urn:factur-x:pdfa:CrossIndustryDocument:invoice:1p0#</pdfaSchema:namespaceURI>',
        );
        expect(pdfInfo(pdf).Pages).toBe('1');
        expect(await balance()).toBe(before - 1);
      },
    );

    it.each([
      {
        format: 'xrechnung-cii',
        root: 'rsm:CrossIndustryInvoice',
        due: '<ram:DuePayableAmount>1460.21</ram:DuePayableAmount>',
      },
      {
        format: 'xrechnung-ubl',
        root: 'Invoice',
        due: '<cbc:PayableAmount currencyID="EUR">1460.21</cbc:PayableAmount>',
      },
    ] as const)('$format: the XML itself (application/xml), 1 credit', async ({ format, root, due }) => {
      const before = await balance();
      const res = await create({ einvoice: { format, invoice: SAMPLE_INVOICE }, filename: 'RE-2026-0042' });
      expect(res.status, res.bytes.toString('utf8', 0, 500)).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^application\/xml/);
      expect(res.headers.get('content-disposition')).toContain('RE-2026-0042.xml');
      const xml = res.bytes.toString('utf8');
      expect(xml).toContain(`<${root}`);
      expect(xml).toContain('urn:xeinkauf.de:kosit:xrechnung_3.0');
      expect(xml).toContain(due);
      if (format === 'xrechnung-cii') expect(await checkCiiSchema(xml, 'en16931', 'test')).toEqual([]);
      expect(await balance()).toBe(before - 1);
    });

    it('xrechnung-ubl: a credit note (381) is a UBL CreditNote; a direct debit carries its mandate; 1 credit each', async () => {
      const before = await balance();
      const res = await create({
        einvoice: { format: 'xrechnung-ubl', invoice: { ...SAMPLE_INVOICE, type_code: '381' } },
      });
      expect(res.status, res.bytes.toString('utf8', 0, 500)).toBe(200);
      const xml = res.bytes.toString('utf8');
      expect(xml).toContain('<CreditNote xmlns="urn:oasis:names:specification:ubl:schema:xsd:CreditNote-2"');
      expect(xml).toContain('<cbc:CreditNoteTypeCode>381</cbc:CreditNoteTypeCode>');
      expect(xml).toContain('<cbc:CreditedQuantity unitCode="HUR">10</cbc:CreditedQuantity>');
      const dd = await create({
        einvoice: { format: 'xrechnung-cii', invoice: { ...SAMPLE_INVOICE, payment: DIRECT_DEBIT_PAYMENT } },
      });
      expect(dd.status, dd.bytes.toString('utf8', 0, 500)).toBe(200);
      const ddXml = dd.bytes.toString('utf8');
      expect(ddXml).toContain('<ram:DirectDebitMandateID>MANDATE-2026-001</ram:DirectDebitMandateID>');
      expect(ddXml).toContain('<ram:CreditorReferenceID>DE98ZZZ09999999999</ram:CreditorReferenceID>');
      expect(await checkCiiSchema(ddXml, 'en16931', 'test')).toEqual([]);
      expect(await balance()).toBe(before - 2);
    });

    it.each(BROKEN)('$name: 422 $type, nothing charged', async ({ format, invoice, type, loc }) => {
      const before = await balance();
      const broken = clone();
      invoice(broken);
      const res = await create({ einvoice: { format: format ?? 'factur-x', invoice: broken } });
      expect(res.status, JSON.stringify(res.body)).toBe(422);
      expect(res.body.detail).toContainEqual(
        expect.objectContaining({ type, loc: ['body', 'einvoice', 'invoice', ...loc] }),
      );
      expect(await balance()).toBe(before);
    });

    it('exact amounts (issue 37): 123456789012345 × 1 is 123456789012345.00; past 15 significant digits, a 422 before any charge', async () => {
      const transactions = async () =>
        (await t.request('GET', '/v1/account/transactions', { apiKey: account.apiKey })).body.total as number;
      const oneLine = (line: Record<string, unknown>) => ({
        ...SAMPLE_INVOICE,
        lines: [{ ...SAMPLE_INVOICE.lines[0]!, ...line }],
        allowances: [],
      });
      const before = { credits: await balance(), transactions: await transactions(), jobs: await jobCount() };
      const refused = [
        // The first case, at the sample's 19 %: the line fits, the VAT and the totals would not.
        {
          invoice: oneLine({ quantity: 123456789012345, net_price: 1 }),
          loc: [] as (string | number)[],
          type: 'BR-DEC-DIGITS',
        },
        // The second case.
        { invoice: oneLine({ quantity: 1e20, net_price: 1 }), loc: ['lines', 0, 'quantity'], type: 'BR-DEC-DIGITS' },
        {
          invoice: oneLine({ quantity: '1234567890.123456789' }),
          loc: ['lines', 0, 'quantity'],
          type: 'BR-DEC-DIGITS',
        },
        { invoice: oneLine({ net_price: 0.1 + 0.2 }), loc: ['lines', 0, 'net_price'], type: 'BR-DEC-DIGITS' },
        { invoice: oneLine({ quantity: 1000000.0000001 }), loc: ['lines', 0, 'quantity'], type: 'BR-DEC-QUANTITY' },
        // The request schema: a string that is not a decimal.
        { invoice: oneLine({ quantity: '12,5' }), loc: ['lines', 0, 'quantity'], type: 'string_pattern_mismatch' },
      ];
      for (const { invoice, loc, type } of refused) {
        const res = await create({ einvoice: { format: 'xrechnung-cii', invoice } });
        expect(res.status, JSON.stringify(res.body)).toBe(422);
        expect(res.body.detail).toContainEqual(
          expect.objectContaining({ type, loc: ['body', 'einvoice', 'invoice', ...loc], msg: expect.any(String) }),
        );
      }
      expect({ credits: await balance(), transactions: await transactions(), jobs: await jobCount() }).toEqual(before);

      // At 0 % VAT the first case fits: every amount exact (it was 123456789012345.01), 1 credit.
      const exact = await create({
        einvoice: {
          format: 'xrechnung-cii',
          invoice: oneLine({ quantity: 123456789012345, net_price: 1, vat_category: 'Z', vat_rate: 0 }),
        },
      });
      expect(exact.status, exact.bytes.toString('utf8', 0, 500)).toBe(200);
      const xml = exact.bytes.toString('utf8');
      expect(xml).toContain('<ram:LineTotalAmount>123456789012345.00</ram:LineTotalAmount>');
      expect(xml).toContain('<ram:DuePayableAmount>123456789012345.00</ram:DuePayableAmount>');
      expect(xml).not.toContain('123456789012345.01');
      // Decimal strings go through the request schema and into the XML as sent.
      const strings = await create({
        einvoice: {
          format: 'xrechnung-ubl',
          invoice: oneLine({ quantity: '2.5000', net_price: '19.99', vat_rate: '19' }),
        },
      });
      expect(strings.status, strings.bytes.toString('utf8', 0, 500)).toBe(200);
      expect(strings.bytes.toString('utf8')).toContain(
        '<cbc:InvoicedQuantity unitCode="HUR">2.5</cbc:InvoicedQuantity>',
      );
      expect(strings.bytes.toString('utf8')).toContain('<cbc:PayableAmount currencyID="EUR">59.48</cbc:PayableAmount>');
      expect(await balance()).toBe(before.credits - 2);
    });

    it('refuses Factur-X in PDF/A-2b (no attachments allowed) and a profile for XRechnung, nothing charged', async () => {
      const before = await balance();
      const a = await create({ einvoice: { format: 'factur-x', invoice: SAMPLE_INVOICE }, pdf_variant: 'pdf/a-2b' });
      expect(a.status).toBe(422);
      expect(a.body.detail).toContainEqual(expect.objectContaining({ loc: ['body', 'pdf_variant'] }));
      const b = await create({ einvoice: { format: 'xrechnung-ubl', profile: 'basic', invoice: SAMPLE_INVOICE } });
      expect(b.status).toBe(422);
      expect(b.body.detail).toContainEqual(expect.objectContaining({ loc: ['body', 'einvoice', 'profile'] }));
      expect(await balance()).toBe(before);
    });

    it('every request body in docs/einvoice.md and docs/einvoice-requests.md succeeds as written', async () => {
      const read = (page: string) => readFileSync(new URL(`../../../docs/${page}`, import.meta.url), 'utf8');
      const bodiesOf = (markdown: string) =>
        [...markdown.matchAll(/^```json\n([\s\S]*?)\n```$/gm)]
          .map((m) => JSON.parse(m[1]!))
          .filter((b) => b.einvoice && b.template_id);
      const main = read('einvoice.md');
      const perFormat = bodiesOf(read('einvoice-requests.md'));
      const own = bodiesOf(main).filter((b) => b.einvoice.xml);
      const bodies = [...own, ...perFormat];
      expect(
        bodies.map((b) => `${b.einvoice.format} ${b.einvoice.profile ?? ''}${b.einvoice.xml ? 'own xml' : ''}`.trim()),
      ).toEqual([
        'factur-x own xml',
        'factur-x minimum',
        'factur-x basic-wl',
        'factur-x basic',
        'factur-x en16931',
        'factur-x extended',
        'zugferd en16931',
        'xrechnung-cii',
        'xrechnung-ubl',
      ]);
      // The first request of einvoice.md is one of the per-format ones, word for word, so the two cannot drift apart.
      for (const b of bodiesOf(main).filter((x) => !x.einvoice.xml)) expect(perFormat).toContainEqual(b);
      // The readable XML shown beside the own-XML request is the one the request sends.
      const shown = [...main.matchAll(/^```xml\n([\s\S]*?)\n```$/gm)].map((m) => `${m[1]}\n`);
      expect(shown).toEqual([bodies[0].einvoice.xml]);
      for (const body of bodies) {
        const res = await t.request('POST', '/v1/pdf/create', {
          apiKey: account.apiKey,
          body: { ...body, template_id: templateId },
        });
        expect(res.status, `${body.einvoice.format}: ${res.bytes.toString('utf8', 0, 400)}`).toBe(200);
        if (body.export_type === 'url') expect(res.body.filename).toBe('RE-2026-0042.pdf');
        else expect(res.bytes.toString('utf8')).toMatch(/<(cbc|ram):ID>RE-2026-0042</);
      }
    });

    it('create-async records the invoice: the job delivers a Factur-X PDF', async () => {
      const res = await t.request('POST', '/v1/pdf/create-async', {
        apiKey: account.apiKey,
        body: {
          template_id: templateId,
          data: { note: 'async' },
          einvoice: { format: 'factur-x', invoice: SAMPLE_INVOICE },
        },
      });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      const jobId = res.body.job_id as string;
      let job: any;
      const deadline = Date.now() + 120_000;
      while (Date.now() < deadline) {
        job = (await t.request('GET', `/v1/pdf/jobs/${jobId}`, { apiKey: account.apiKey })).body;
        if (job.status === 'completed' || job.status === 'failed') break;
        await new Promise((r) => setTimeout(r, 200));
      }
      expect(job.status, JSON.stringify(job)).toBe('completed');
      const pdf = Buffer.from(await (await fetch(job.result_url ?? job.url)).arrayBuffer());
      expect(detach(pdf).names).toEqual(['factur-x.xml']);
    });

    it('factur-x with its own XML: the PDF/A-3b carries that XML as sent, the level read from it, 1 credit', async () => {
      const xml = await ownXml('factur-x', 'basic');
      const before = await balance();
      const res = await create({
        template_id: xmlTemplateId,
        data: { note: 'Own XML' },
        einvoice: { format: 'factur-x', xml },
      });
      expect(res.status, res.bytes.toString('utf8', 0, 500)).toBe(200);
      expect(res.headers.get('content-type')).toBe('application/pdf');
      const pdf = res.bytes;
      expect(pdfAttachments(pdf)).toEqual({ 'factur-x.xml': xml });
      expect(await associatedFile(pdf)).toEqual({ relationship: 'Alternative', mimeType: 'text/xml' });
      const xmp = pdfXmp(pdf);
      expect(xmp).toContain('<pdfaid:part>3</pdfaid:part>');
      expect(xmp).toContain('<fx:ConformanceLevel>BASIC</fx:ConformanceLevel>');
      expect(pdfText(pdf).replace(/\s+/g, ' ')).toContain('Format factur-x profile basic own XML true totals none');
      expect(await balance()).toBe(before - 1);
    });

    it('xrechnung-ubl with its own XML answers that XML, 1 credit; create-async delivers it too', async () => {
      const xml = await ownXml('xrechnung-ubl');
      const before = await balance();
      const res = await create({ einvoice: { format: 'xrechnung-ubl', xml }, filename: 'RE-2026-0042' });
      expect(res.status, res.bytes.toString('utf8', 0, 500)).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^application\/xml/);
      expect(res.headers.get('content-disposition')).toContain('RE-2026-0042.xml');
      expect(res.bytes.toString('utf8')).toBe(xml);
      expect(await balance()).toBe(before - 1);

      const cii = await ownXml('xrechnung-cii');
      const accepted = await t.request('POST', '/v1/pdf/create-async', {
        apiKey: account.apiKey,
        body: { template_id: templateId, data: {}, einvoice: { format: 'xrechnung-cii', xml: cii } },
      });
      expect(accepted.status, JSON.stringify(accepted.body)).toBe(200);
      let job: any;
      const deadline = Date.now() + 120_000;
      while (Date.now() < deadline) {
        job = (await t.request('GET', `/v1/pdf/jobs/${accepted.body.job_id}`, { apiKey: account.apiKey })).body;
        if (job.status === 'completed' || job.status === 'failed') break;
        await new Promise((r) => setTimeout(r, 200));
      }
      expect(job.status, JSON.stringify(job)).toBe('completed');
      expect(Buffer.from(await (await fetch(job.result_url ?? job.url)).arrayBuffer()).toString('utf8')).toBe(cii);
      expect(await balance()).toBe(before - 2);
    });

    it.each([
      {
        name: 'not well-formed',
        format: 'factur-x',
        xml: async () => (await ownXml('factur-x')).replace('</ram:TypeCode>', ''),
        type: 'xml_syntax',
      },
      {
        name: 'a DOCTYPE with an external entity',
        format: 'factur-x',
        type: 'xml_doctype',
        xml: async () =>
          (await ownXml('factur-x'))
            .replace('?>\n', '?>\n<!DOCTYPE x [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>\n')
            .replace('<ram:ID>RE-2026-0042', '<ram:ID>&xxe;'),
      },
      {
        name: 'CII sent as xrechnung-ubl',
        format: 'xrechnung-ubl',
        xml: () => ownXml('xrechnung-cii'),
        type: 'einvoice_syntax',
      },
      {
        name: "a profile that is not the XML's",
        format: 'factur-x',
        profile: 'en16931',
        xml: () => ownXml('factur-x', 'minimum'),
        type: 'einvoice_profile',
      },
      {
        name: 'a required element removed (XSD)',
        format: 'zugferd',
        xml: async () => (await ownXml('factur-x')).replace(/<ram:TypeCode>380<\/ram:TypeCode>\n\s*/, ''),
        type: 'xml_schema',
      },
      {
        name: 'a total with VAT that is not BT-109 + BT-110',
        format: 'factur-x',
        xml: async () =>
          (await ownXml('factur-x')).replace('<ram:GrandTotalAmount>1460.21<', '<ram:GrandTotalAmount>1460.12<'),
        type: 'BR-CO-15',
      },
      {
        name: 'an amount due that does not add up (UBL)',
        format: 'xrechnung-ubl',
        xml: async () =>
          (await ownXml('xrechnung-ubl')).replace(
            '<cbc:PayableAmount currencyID="EUR">1460.21<',
            '<cbc:PayableAmount currencyID="EUR">1406.21<',
          ),
        type: 'BR-CO-16',
      },
      {
        name: 'a unit code outside UN/ECE Rec 20/21',
        format: 'factur-x',
        xml: async () => (await ownXml('factur-x')).replace(/unitCode="[A-Z0-9]+"/, 'unitCode="PIECE"'),
        type: 'BR-CL-23',
      },
      {
        name: 'an unknown currency (UBL)',
        format: 'xrechnung-ubl',
        xml: async () =>
          (await ownXml('xrechnung-ubl')).replace('<cbc:DocumentCurrencyCode>EUR<', '<cbc:DocumentCurrencyCode>EUX<'),
        type: 'BR-CL-04',
      },
    ] as const)(
      'own XML, $name: 422 $type on body.einvoice.xml, nothing charged',
      async ({ format, xml, type, ...rest }) => {
        const before = await balance();
        const jobsBefore = await jobCount();
        const profile = 'profile' in rest ? rest.profile : undefined;
        const res = await create({ einvoice: { format, profile, xml: await xml() } });
        expect(res.status, JSON.stringify(res.body)).toBe(422);
        expect(res.body.detail[0]).toMatchObject({ loc: ['body', 'einvoice', 'xml'], type });
        expect(res.body.detail[0].msg).toEqual(expect.any(String));
        const async = await t.request('POST', '/v1/pdf/create-async', {
          apiKey: account.apiKey,
          body: { template_id: templateId, data: {}, einvoice: { format, profile, xml: await xml() } },
        });
        expect(async.status).toBe(422);
        expect(await balance()).toBe(before);
        expect(await jobCount()).toBe(jobsBefore);
      },
    );

    it('own XML: both invoice and xml, or an XML over 5 MiB, is a 422, nothing charged', async () => {
      const before = await balance();
      const both = await create({
        einvoice: { format: 'factur-x', invoice: SAMPLE_INVOICE, xml: await ownXml('factur-x') },
      });
      expect(both.status).toBe(422);
      expect(both.body.detail).toEqual([
        expect.objectContaining({
          loc: ['body', 'einvoice'],
          type: 'value_error',
          msg: expect.stringContaining('exactly one of invoice'),
        }),
      ]);
      const tooLong = await create({ einvoice: { format: 'factur-x', xml: 'x'.repeat(SUPPLIED_XML_MAX_CHARS + 1) } });
      expect(tooLong.status).toBe(422);
      expect(tooLong.body.detail).toContainEqual(expect.objectContaining({ loc: ['body', 'einvoice', 'xml'] }));
      expect(await balance()).toBe(before);
    });
  },
  300_000,
);
