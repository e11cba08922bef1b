/**
 * E-invoices judged by the official rules (issue 41), through the API, with the rules pack installed by
 * `pressroom einvoice rules install --from ../shared/einvoice-rules` into the test app's data directory:
 * - every format and profile the service builds passes the schema, the CEN EN 16931 schematron and, for
 *   XRechnung, KoSIT's, with zero fatal findings, and the answer says which rules judged it;
 * - a customer's own XML that breaks a rule the built-in checks do not know (BR-DE-15, BR-DE-2, the UBL
 *   schema's element order) is refused with that rule, nothing charged; warnings travel with the document;
 * - POST /v1/einvoice/validate passes the official examples and fails broken copies with the expected rule;
 * - DOCTYPEs (external entities, entity expansion) are refused, an XInclude is never followed;
 * - PRESSROOM_EINVOICE_RULES=required answers 503 until a pack is installed; jobs keep einvoice_checks
 *   (the job store, on both databases).
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { buildEInvoice } from '../../../src/einvoice/einvoice.js';
import { createEInvoiceRules } from '../../../src/einvoice/rules/official-checks.js';
import type { AppError } from '../../../src/shared/errors.js';
import type { EInvoiceFormat, EInvoiceProfile, Invoice } from '../../../src/einvoice/invoice-schema.js';
import { DIALECTS, DOCUMENT_DIALECTS } from '../../support/databases.js';
import { DIRECT_DEBIT_PAYMENT, NOT_SUBJECT_INVOICE, SAMPLE_INVOICE } from '../../support/documents/einvoice-samples.js';
import { EXAMPLES, HAS_SHARED_RULES, INSTALL_TIMEOUT_MS, installRulesPack } from '../../support/einvoice-rules.js';
import { startTestApp, until, type TestApp } from '../../support/test-app.js';
import { startWebhookReceiver } from '../../support/webhook-receiver.js';

const TEMPLATE = '<h1>Invoice {{ einvoice.invoice.number }}</h1><p>{{ note }}</p>';
const EN16931 = 'EN16931 1.3.16';
const XRECHNUNG = 'EN16931 1.3.16 + XRechnung 3.0.2';
/** The sample invoice with 1,000 lines: a wholesale invoice, judged by the official rules like any other (issue 52). */
const LONG_INVOICE = {
  ...SAMPLE_INVOICE,
  lines: Array.from({ length: 1000 }, (_, i) => ({ ...SAMPLE_INVOICE.lines[i % 3]!, id: String(i + 1) })),
};

/** The XML the service builds: what a customer's own XML looks like. */
async function ownXml(format: EInvoiceFormat, invoice: Invoice = SAMPLE_INVOICE): Promise<string> {
  return (await buildEInvoice({ format, invoice }, { accountId: 'test' })).xml;
}

/** `xml` with `from` replaced by `to`; fails the test when `from` is not in it (the copy would not be broken). */
function broken(xml: string, from: string | RegExp, to: string): string {
  const changed = xml.replace(from, to);
  expect(changed, `${String(from)} is in the XML`).not.toBe(xml);
  return changed;
}

/** Every format and profile the service builds, with the rule sets that judge it. */
const BUILT: { name: string; format: EInvoiceFormat; profile?: EInvoiceProfile; invoice: Invoice; checks: string }[] = [
  {
    name: 'factur-x minimum (schema only)',
    format: 'factur-x',
    profile: 'minimum',
    invoice: SAMPLE_INVOICE,
    checks: 'built-in',
  },
  {
    name: 'factur-x basic-wl (schema only)',
    format: 'factur-x',
    profile: 'basic-wl',
    invoice: SAMPLE_INVOICE,
    checks: 'built-in',
  },
  { name: 'factur-x basic', format: 'factur-x', profile: 'basic', invoice: SAMPLE_INVOICE, checks: EN16931 },
  { name: 'factur-x en16931', format: 'factur-x', profile: 'en16931', invoice: SAMPLE_INVOICE, checks: EN16931 },
  { name: 'factur-x extended', format: 'factur-x', profile: 'extended', invoice: SAMPLE_INVOICE, checks: EN16931 },
  { name: 'zugferd en16931', format: 'zugferd', profile: 'en16931', invoice: SAMPLE_INVOICE, checks: EN16931 },
  { name: 'xrechnung-cii', format: 'xrechnung-cii', invoice: SAMPLE_INVOICE, checks: XRECHNUNG },
  { name: 'xrechnung-ubl', format: 'xrechnung-ubl', invoice: SAMPLE_INVOICE, checks: XRECHNUNG },
  {
    name: 'xrechnung-ubl credit note (a UBL CreditNote)',
    format: 'xrechnung-ubl',
    invoice: { ...SAMPLE_INVOICE, type_code: '381' },
    checks: XRECHNUNG,
  },
  {
    name: 'xrechnung-cii not subject to VAT (O)',
    format: 'xrechnung-cii',
    invoice: NOT_SUBJECT_INVOICE,
    checks: XRECHNUNG,
  },
  {
    name: 'xrechnung-ubl SEPA direct debit with its mandate',
    format: 'xrechnung-ubl',
    invoice: { ...SAMPLE_INVOICE, payment: DIRECT_DEBIT_PAYMENT },
    checks: XRECHNUNG,
  },
];

describe.each(DOCUMENT_DIALECTS)('e-invoices judged by the official rules on %s', (dialect) => {
  let t: TestApp;
  let account: { accountId: string; apiKey: string };
  let templateId: string;
  const balance = async () =>
    (await t.request('GET', '/v1/account', { apiKey: account.apiKey })).body.credits as number;
  const create = (body: Record<string, unknown>) =>
    t.request('POST', '/v1/pdf/create', {
      apiKey: account.apiKey,
      body: { template_id: templateId, data: { note: 'Hello' }, export_type: 'url', ...body },
    });
  const validate = (body: Record<string, unknown>, apiKey = account.apiKey) =>
    t.request('POST', '/v1/einvoice/validate', { apiKey, body });
  /** The rules that failed in a report: `{check status: [rule ids]}`. */
  const failures = (report: any) =>
    Object.fromEntries(
      (report.checks as any[])
        .map((c) => [
          c.status,
          [...new Set((c.findings as any[]).filter((f) => f.severity === 'fatal').map((f) => f.rule))],
        ])
        .filter(([status]) => status !== 'passed'),
    );

  beforeAll(async () => {
    t = await startTestApp(dialect, { PRESSROOM_RENDER_TIMEOUT_MS: '120000', PRESSROOM_TEMPLATE_TIMEOUT_MS: '30000' });
    await installRulesPack(t.config.dataDir);
    account = await t.createAccount({ credits: 100, plan: 'enterprise' });
    const res = await t.request('POST', '/v1/templates', {
      apiKey: account.apiKey,
      body: { name: 'Invoice', html: TEMPLATE },
    });
    expect(res.status).toBe(201);
    templateId = res.body.id;
  }, INSTALL_TIMEOUT_MS);
  afterAll(async () => t?.close());

  it('/readyz names the active pack', async () => {
    const res = await t.request('GET', '/readyz');
    expect(res.body.checks.einvoice_rules).toMatch(
      /^ok: EN16931 1\.3\.16 \+ XRechnung 3\.0\.2 \(pack [0-9a-f]{12}, installed \d{4}-/,
    );
  });

  it.each(BUILT)(
    '$name: passes the official rules with zero fatal findings, einvoice_checks "$checks", 1 credit',
    async ({ format, profile, invoice, checks }) => {
      const before = await balance();
      const res = await create({ einvoice: { format, ...(profile ? { profile } : {}), invoice } });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.einvoice_checks).toBe(checks);
      expect(res.body.warnings).toBeUndefined();
      expect(await balance()).toBe(before - 1);
    },
  );

  it('a binary answer names the checks in X-Pressroom-Einvoice-Checks', async () => {
    const res = await create({ export_type: 'binary', einvoice: { format: 'xrechnung-ubl', invoice: SAMPLE_INVOICE } });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-pressroom-einvoice-checks')).toBe(XRECHNUNG);
  });

  it('own XML that only the official rules refuse: 422 with the rule id at its XPath in einvoice.xml, nothing charged', async () => {
    const cii = await ownXml('xrechnung-cii');
    const ubl = await ownXml('xrechnung-ubl');
    const cases = [
      {
        format: 'xrechnung-cii',
        xml: broken(cii, /<ram:BuyerReference>[^<]*<\/ram:BuyerReference>/, ''),
        type: 'BR-DE-15',
        at: '/rsm:CrossIndustryInvoice[1]',
      },
      {
        format: 'xrechnung-ubl',
        xml: broken(ubl, /<cac:Contact>[\s\S]*?<\/cac:Contact>/, ''),
        type: 'BR-DE-2',
        at: '/ubl:Invoice[1]/cac:AccountingSupplierParty[1]',
      },
    ];
    const before = await balance();
    for (const { format, xml, type, at } of cases) {
      const res = await create({ einvoice: { format, xml } });
      expect(res.status, JSON.stringify(res.body)).toBe(422);
      const item = (res.body.detail as any[]).find((d) => d.type === type);
      expect(item, JSON.stringify(res.body.detail)).toBeDefined();
      expect(item.loc.slice(0, 3)).toEqual(['body', 'einvoice', 'xml']);
      expect(item.loc[3]).toContain(at);
      expect(item.msg).toMatch(new RegExp(`^\\[${type}\\] `));
    }
    // A UBL element out of the schema's order: the OASIS UBL 2.1 XSD refuses it, the rules do not run.
    const swapped = broken(
      ubl,
      /(<cbc:ID>RE-2026-0042<\/cbc:ID>)(\s*)(<cbc:IssueDate>[^<]*<\/cbc:IssueDate>)/,
      '$3$2$1',
    );
    const res = await create({ einvoice: { format: 'xrechnung-ubl', xml: swapped } });
    expect(res.status, JSON.stringify(res.body)).toBe(422);
    expect(res.body.detail[0]).toMatchObject({ loc: ['body', 'einvoice', 'xml'], type: 'xml_schema' });
    expect(res.body.detail[0].msg).toMatch(
      /^The XML does not match the OASIS UBL 2\.1 Invoice XSD \(line \d+\): .*IssueDate/,
    );
    expect(await balance()).toBe(before);
  });

  it('warnings of the rules travel with the delivered document (XRechnung without a delivery date or period: BR-DE-TMP-32)', async () => {
    const { delivery_date: _, ...invoice } = SAMPLE_INVOICE;
    const res = await create({ einvoice: { format: 'xrechnung-cii', invoice } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.einvoice_checks).toBe(XRECHNUNG);
    expect(res.body.warnings).toEqual([
      expect.objectContaining({
        code: 'EINVOICE_RULE_WARNING',
        message: expect.stringMatching(/^\[BR-DE-TMP-32\] .*XRechnung 3\.0\.2/),
      }),
    ]);
  });

  it.skipIf(!HAS_SHARED_RULES)(
    "POST /v1/einvoice/validate: every official example passes (CEN CII and UBL, KoSIT's test suite), free, even for an account without credits",
    async () => {
      // No credits, and no rate limit: the examples are many more than a free plan's minute allows.
      const broke = await t.createAccount({ credits: 0, plan: 'enterprise' });
      const files = [
        ...readdirSync(EXAMPLES.cii).map((f) => join(EXAMPLES.cii, f)),
        ...readdirSync(EXAMPLES.ubl).map((f) => join(EXAMPLES.ubl, f)),
        ...readdirSync(EXAMPLES.xrechnung)
          .filter((f) => f.endsWith('.xml'))
          .map((f) => join(EXAMPLES.xrechnung, f)),
      ];
      expect(files.length).toBeGreaterThan(60);
      for (const file of files) {
        const res = await validate({ file_base64: readFileSync(file).toString('base64') }, broke.apiKey);
        expect(res.status, `${file}: ${JSON.stringify(res.body)}`).toBe(200);
        expect(res.body.valid, `${file}: ${JSON.stringify(failures(res.body))}`).toBe(true);
        const xrechnung = file.startsWith(EXAMPLES.xrechnung);
        expect(res.body.einvoice_checks, file).toBe(xrechnung ? XRECHNUNG : EN16931);
        expect(
          res.body.checks.map((c: any) => c.check.split(' ')[0]),
          file,
        ).toEqual(
          xrechnung
            ? [res.body.source.syntax === 'CII' ? 'Factur-X' : 'OASIS', 'EN16931', 'XRechnung']
            : [res.body.source.syntax === 'CII' ? 'Factur-X' : 'OASIS', 'EN16931'],
        );
      }
      expect((await t.request('GET', '/v1/account', { apiKey: broke.apiKey })).body.credits).toBe(0);
    },
  );

  it('validate: broken copies fail with the expected rule, each check reported', async () => {
    const cii = await ownXml('xrechnung-cii');
    const ubl = await ownXml('xrechnung-ubl');
    const cases: { name: string; xml: string; failed: Record<string, string[]> }[] = [
      {
        name: 'wrong total with VAT (CII)',
        xml: broken(
          broken(
            cii,
            '<ram:GrandTotalAmount>1460.21</ram:GrandTotalAmount>',
            '<ram:GrandTotalAmount>1460.20</ram:GrandTotalAmount>',
          ),
          '<ram:DuePayableAmount>1460.21</ram:DuePayableAmount>',
          '<ram:DuePayableAmount>1460.20</ram:DuePayableAmount>',
        ),
        failed: { failed: ['BR-CO-15'] },
      },
      {
        name: 'wrong amount due (UBL)',
        xml: broken(
          ubl,
          '<cbc:PayableAmount currencyID="EUR">1460.21</cbc:PayableAmount>',
          '<cbc:PayableAmount currencyID="EUR">1460.20</cbc:PayableAmount>',
        ),
        failed: { failed: ['BR-CO-16'] },
      },
      {
        name: 'XRechnung without buyer reference',
        xml: broken(cii, /<ram:BuyerReference>[^<]*<\/ram:BuyerReference>/, ''),
        failed: { failed: ['BR-DE-15'] },
      },
      {
        name: 'XRechnung without seller contact',
        xml: broken(ubl, /<cac:Contact>[\s\S]*?<\/cac:Contact>/, ''),
        failed: { failed: ['BR-DE-2'] },
      },
      {
        name: 'an unknown unit code',
        xml: broken(ubl, 'unitCode="HUR"', 'unitCode="NOPE"'),
        failed: { failed: ['BR-CL-23'] },
      },
    ];
    for (const { name, xml, failed } of cases) {
      const res = await validate({ xml });
      expect(res.status, name).toBe(200);
      expect(res.body.valid, name).toBe(false);
      expect(failures(res.body), name).toEqual(failed);
    }
    const swapped = broken(
      ubl,
      /(<cbc:ID>RE-2026-0042<\/cbc:ID>)(\s*)(<cbc:IssueDate>[^<]*<\/cbc:IssueDate>)/,
      '$3$2$1',
    );
    const res = await validate({ xml: swapped });
    expect(res.body.checks.map((c: any) => [c.check, c.status])).toEqual([
      ['OASIS UBL 2.1 Invoice XSD', 'failed'],
      [expect.stringMatching(/^EN16931 1\.3\.16/), 'not_run'],
      [expect.stringMatching(/^XRechnung 3\.0\.2/), 'not_run'],
    ]);
    expect(res.body.checks[0].findings[0]).toMatchObject({
      rule: 'xml_schema',
      severity: 'fatal',
      line: expect.any(Number),
    });
  });

  it('validate: a Factur-X PDF the service made names its embedded factur-x.xml and profile, and passes; by URL too', async () => {
    const made = await create({
      export_type: 'binary',
      einvoice: { format: 'factur-x', profile: 'en16931', invoice: SAMPLE_INVOICE },
    });
    expect(made.status).toBe(200);
    const res = await validate({ file_base64: made.bytes.toString('base64') });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({
      valid: true,
      einvoice_checks: EN16931,
      source: {
        kind: 'pdf',
        attachment: 'factur-x.xml',
        syntax: 'CII',
        document: 'CrossIndustryInvoice',
        specification_identifier: 'urn:cen.eu:en16931:2017',
        profile: 'EN 16931',
      },
    });

    const server: Server = createServer((_req, reply) =>
      reply.writeHead(200, { 'content-type': 'application/pdf' }).end(made.bytes),
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const port = (server.address() as { port: number }).port;
      const byUrl = await validate({ url: `http://127.0.0.1:${port}/invoice.pdf` });
      expect(byUrl.status, JSON.stringify(byUrl.body)).toBe(200);
      expect(byUrl.body).toMatchObject({ valid: true, source: { kind: 'pdf', attachment: 'factur-x.xml' } });
    } finally {
      server.close();
    }
    const plain = await validate({ file_base64: Buffer.from('%PDF-1.7\n%no invoice here\n').toString('base64') });
    expect(plain.status).toBe(422);
    expect(plain.body.detail[0]).toMatchObject({ loc: ['body', 'file_base64'], type: 'pdf_invalid' });
  });

  it('XML is parsed with entities, DTDs and XInclude off: an external entity and a billion laughs are refused, an XInclude is never followed', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'xinclude-'));
    const secretFile = join(dir, 'secret.txt');
    writeFileSync(secretFile, 'TOP-SECRET-CONTENT-41');
    try {
      const ubl = await ownXml('xrechnung-ubl');
      const external = broken(
        ubl,
        '<Invoice ',
        `<!DOCTYPE Invoice [<!ENTITY x SYSTEM "file://${secretFile}">]>\n<Invoice `,
      ).replace('<cbc:Note>Thank you for your order.</cbc:Note>', '<cbc:Note>&x;</cbc:Note>');
      const laughs = broken(
        ubl,
        '<Invoice ',
        `<!DOCTYPE Invoice [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;"><!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;"><!ENTITY d "&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;"><!ENTITY e "&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;"><!ENTITY f "&e;&e;&e;&e;&e;&e;&e;&e;&e;&e;"><!ENTITY g "&f;&f;&f;&f;&f;&f;&f;&f;&f;&f;">]>\n<Invoice `,
      ).replace('<cbc:Note>Thank you for your order.</cbc:Note>', '<cbc:Note>&g;</cbc:Note>');
      // In UBL's extension content, which the schema does not look into: the XML reaches the rules with it.
      const xinclude = broken(
        ubl,
        /(<Invoice [^>]*>)/,
        `$1<ext:UBLExtensions xmlns:ext="urn:oasis:names:specification:ubl:schema:xsd:CommonExtensionComponents-2"><ext:UBLExtension><ext:ExtensionContent><xi:include xmlns:xi="http://www.w3.org/2001/XInclude" href="file://${secretFile}" parse="text"/></ext:ExtensionContent></ext:UBLExtension></ext:UBLExtensions>`,
      );
      const before = await balance();
      for (const xml of [external, laughs]) {
        for (const res of [
          await validate({ xml }),
          await validate({ file_base64: Buffer.from(xml).toString('base64') }),
          await create({ einvoice: { format: 'xrechnung-ubl', xml } }),
        ]) {
          expect(res.status).toBe(422);
          expect(res.body.detail[0].type).toBe('xml_doctype');
          expect(JSON.stringify(res.body)).not.toContain('TOP-SECRET');
        }
      }
      const report = await validate({ xml: xinclude });
      expect(report.status, JSON.stringify(report.body)).toBe(200);
      expect(report.body.checks[0]).toMatchObject({ check: 'OASIS UBL 2.1 Invoice XSD', status: 'passed' });
      expect(report.body.checks.map((c: any) => c.status)).not.toContain('not_run');
      expect(JSON.stringify(report.body)).not.toContain('TOP-SECRET');
      const generated = await create({ export_type: 'binary', einvoice: { format: 'xrechnung-ubl', xml: xinclude } });
      expect(generated.bytes.toString('utf8')).not.toContain('TOP-SECRET');
      expect(await balance()).toBe(before - (generated.status === 200 ? 1 : 0));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('validation is free work: an account looping it cannot slow a paying one (sqlite)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp('sqlite', {});
    await installRulesPack(t.config.dataDir);
  }, INSTALL_TIMEOUT_MS);
  afterAll(async () => t?.close());

  it('a 1,000-line XRechnung from JSON is judged by the official rules; its copy with one line total changed fails BR-CO-10', async () => {
    const account = await t.createAccount({ credits: 2 });
    const template = await t.request('POST', '/v1/templates', {
      apiKey: account.apiKey,
      body: { name: 'Invoice', html: TEMPLATE },
    });
    const res = await t.request('POST', '/v1/pdf/create', {
      apiKey: account.apiKey,
      body: {
        template_id: template.body.id,
        data: {},
        export_type: 'url',
        einvoice: { format: 'xrechnung-cii', invoice: LONG_INVOICE },
      },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.einvoice_checks).toBe(XRECHNUNG);
    expect(res.body.warnings ?? []).toEqual([]);
    expect(res.body.credits_remaining).toBe(1);

    // The receiver's side: the same XML with the 1,000th line's total one cent off.
    const xml = await ownXml('xrechnung-cii', LONG_INVOICE);
    const lineTotals = [
      ...xml.matchAll(/(<ram:SpecifiedTradeSettlementLineMonetarySummation>\s*<ram:LineTotalAmount>)([\d.]+)/g),
    ];
    expect(lineTotals).toHaveLength(1000);
    const last = lineTotals.at(-1)!;
    const changed = `${xml.slice(0, last.index)}${last[1]}${(Number(last[2]) + 0.01).toFixed(2)}${xml.slice(last.index + last[0].length)}`;
    const verdict = await t.request('POST', '/v1/einvoice/validate', {
      apiKey: account.apiKey,
      body: { xml: changed },
    });
    expect(verdict.status, JSON.stringify(verdict.body)).toBe(200);
    expect(verdict.body.valid).toBe(false);
    expect(verdict.body.einvoice_checks).toBe(XRECHNUNG);
    const fired = verdict.body.checks.flatMap((c: any) => c.findings.map((f: any) => f.rule));
    expect(fired).toContain('BR-CO-10');
    expect((await t.request('GET', '/v1/account', { apiKey: account.apiKey })).body.credits).toBe(1);
  });

  it("while one account's long validations hold a validation thread and wait for it, another account's XRechnung is judged and delivered", async () => {
    const a = await t.createAccount({ credits: 0, plan: 'enterprise' });
    const b = await t.createAccount({ credits: 3, plan: 'enterprise' });
    const template = await t.request('POST', '/v1/templates', {
      apiKey: b.apiKey,
      body: { name: 'Invoice', html: TEMPLATE },
    });
    // 3,000 lines: seconds of rules each, and A's three run one after another on one free thread.
    const cii = await ownXml('xrechnung-cii');
    const line = /<ram:IncludedSupplyChainTradeLineItem>[\s\S]*?<\/ram:IncludedSupplyChainTradeLineItem>/.exec(cii)![0];
    let id = 0;
    const long = cii.replace(
      line,
      Array.from({ length: 3000 }, () =>
        line.replace(/<ram:LineID>[^<]*<\/ram:LineID>/, () => `<ram:LineID>${++id}</ram:LineID>`),
      ).join(''),
    );
    const settled = new Set<number>();
    const flood = Promise.all(
      [0, 1, 2].map((i) =>
        t
          .request('POST', '/v1/einvoice/validate', { apiKey: a.apiKey, body: { xml: long } })
          .finally(() => settled.add(i)),
      ),
    );
    // One of A's validations on a rules thread, another waiting: free work never holds both threads.
    await until(
      async () => t.services.einvoiceRules.stats().active >= 1 && t.services.einvoiceRules.stats().waiting >= 1,
      120_000,
      "A's validations to hold a thread and wait",
    );

    const started = performance.now();
    const paid = await t.request('POST', '/v1/pdf/create', {
      apiKey: b.apiKey,
      body: {
        template_id: template.body.id,
        data: {},
        export_type: 'url',
        einvoice: { format: 'xrechnung-cii', invoice: SAMPLE_INVOICE },
      },
    });
    console.log(
      `B's XRechnung answered in ${Math.round(performance.now() - started)} ms; A's validations settled by then: ${settled.size} of 3`,
    );
    expect(paid.status, JSON.stringify(paid.body)).toBe(200);
    expect(paid.body.einvoice_checks).toBe(XRECHNUNG);
    // B was not queued behind all of A's work (tens of seconds of it, against B's one check).
    expect(settled.size).toBeLessThan(3);

    // A's validations end as reports (valid: false: its totals no longer add up), or past the deadline.
    for (const res of await flood) {
      expect([200, 422, 503], JSON.stringify(res.body).slice(0, 300)).toContain(res.status);
      if (res.status === 200) expect(res.body.valid).toBe(false);
    }
    expect((await t.request('GET', '/v1/account', { apiKey: a.apiKey })).body.credits).toBe(0);
  }, 600_000);

  it("while one account's 5 MB, 3,300-line validations hold a rules thread, another account's free validation is judged (issue 49)", async () => {
    const a = await t.createAccount({ credits: 0, plan: 'enterprise' });
    const b = await t.createAccount({ credits: 0, plan: 'enterprise' });
    const small = await ownXml('xrechnung-ubl');
    const huge = longUbl(small, 3300, 5_000_000);
    const settled = new Set<number>();
    const flood = Promise.all(
      [0, 1].map((i) =>
        t
          .request('POST', '/v1/einvoice/validate', { apiKey: a.apiKey, body: { xml: huge } })
          .finally(() => settled.add(i)),
      ),
    );
    await until(
      async () => t.services.einvoiceRules.stats().active >= 1,
      120_000,
      "A's validation to hold a rules thread",
    );

    const judged = await t.request('POST', '/v1/einvoice/validate', { apiKey: b.apiKey, body: { xml: small } });
    expect(judged.status, JSON.stringify(judged.body).slice(0, 300)).toBe(200);
    expect(judged.body.valid).toBe(true);
    expect(judged.body.einvoice_checks).toBe(XRECHNUNG);
    expect([...settled]).toEqual([]);
    expect((await t.request('GET', '/healthz')).status).toBe(200);

    // A's: past the deadline (422), a report, refused once their free rules time is spent (429) or
    // while its one free thread and queue are taken (503, seen on a loaded machine); never charged.
    for (const res of await flood)
      expect([200, 422, 429, 503], JSON.stringify(res.body).slice(0, 300)).toContain(res.status);
    for (const account of [a, b])
      expect((await t.request('GET', '/v1/account', { apiKey: account.apiKey })).body.credits).toBe(0);
  }, 600_000);

  it("an account's free validations spend a budget of rules time: past it they are refused with 429 and Retry-After; its paid checks and other accounts are not (issue 49)", async () => {
    // The service's own rules, with a deadline and a budget small enough to spend in a few checks.
    // 8 s: a check on a fresh thread loads the stylesheets first (seconds on a loaded machine).
    const rules = createEInvoiceRules({
      dataDir: t.config.dataDir,
      mode: 'auto',
      timeoutMs: 8_000,
      freeBudget: { budgetSeconds: 10, windowSeconds: 600 },
    });
    onTestFinished(() => rules.close());
    const pack = (await rules.activePack())!;
    const small = await ownXml('xrechnung-ubl');
    const long = longUbl(small, 3000, 0);
    const what = { syntax: 'ubl', profile: 'en16931', ublDocument: 'Invoice', xrechnung: true, schema: false } as const;
    const outcome = (xml: string, accountId: string, kind: 'free' | 'paid') =>
      rules.judge(pack, xml, what, { accountId, kind }).then(
        (report) => report.checks.map((c) => c.status).join(','),
        (error: AppError) => `${error.code}${error.details?.retryAfterSeconds ? ' retry-after' : ''}`,
      );
    // However fast this machine checks: each long check ends (a report, or stopped at the 8 s deadline), until
    // one reaches what is left of the 10 s and is stopped there, or the next is refused before it starts.
    const seen: string[] = [];
    while (!seen.includes('RATE_LIMITED retry-after') && seen.length < 40) seen.push(await outcome(long, 'A', 'free'));
    expect(seen.at(-1)).toBe('RATE_LIMITED retry-after');
    for (const earlier of seen.slice(0, -1))
      expect(earlier).toMatch(/^(XML_TOO_COMPLEX|(passed|failed|not_run)(,(passed|failed|not_run))*)$/);
    expect(await outcome(small, 'A', 'free')).toBe('RATE_LIMITED retry-after');
    expect(await outcome(small, 'A', 'paid')).toBe('passed,passed');
    expect(await outcome(small, 'B', 'free')).toBe('passed,passed');
  }, 600_000);
});

/** A UBL of `lines` invoice lines (copies of the first), each with a note padding the XML to about `chars`. */
function longUbl(ubl: string, lines: number, chars: number): string {
  const line = /<cac:InvoiceLine>[\s\S]*?<\/cac:InvoiceLine>/.exec(ubl)![0];
  const pad = Math.max(0, Math.floor((chars - ubl.length) / lines) - line.length - 40);
  let id = 0;
  const many = Array.from({ length: lines }, () =>
    line.replace(
      /<cbc:ID>[^<]*<\/cbc:ID>/,
      () => `<cbc:ID>${++id}</cbc:ID>${pad > 0 ? `<cbc:Note>${'x'.repeat(pad)}</cbc:Note>` : ''}`,
    ),
  ).join('');
  return ubl.replace(line, many);
}

describe('PRESSROOM_EINVOICE_RULES', () => {
  it(
    'required: e-invoice requests answer 503 EINVOICE_RULES_MISSING until a pack is installed, nothing charged; then the rules judge them',
    async () => {
      const t = await startTestApp('sqlite', { PRESSROOM_EINVOICE_RULES: 'required' });
      try {
        const account = await t.createAccount({ credits: 5 });
        const template = await t.request('POST', '/v1/templates', {
          apiKey: account.apiKey,
          body: { name: 'Invoice', html: TEMPLATE },
        });
        const body = {
          template_id: template.body.id,
          data: {},
          einvoice: { format: 'xrechnung-cii', invoice: SAMPLE_INVOICE },
        };
        const refused = await t.request('POST', '/v1/pdf/create', { apiKey: account.apiKey, body });
        expect(refused.status).toBe(503);
        expect(refused.body.error).toBe('EINVOICE_RULES_MISSING');
        expect((await t.request('POST', '/v1/pdf/create-async', { apiKey: account.apiKey, body })).body.error).toBe(
          'EINVOICE_RULES_MISSING',
        );
        expect(
          (await t.request('POST', '/v1/einvoice/validate', { apiKey: account.apiKey, body: { xml: '<x/>' } })).body
            .error,
        ).toBe('EINVOICE_RULES_MISSING');
        expect((await t.request('GET', '/v1/account', { apiKey: account.apiKey })).body.credits).toBe(5);
        expect((await t.request('GET', '/v1/pdf/jobs', { apiKey: account.apiKey })).body.total).toBe(0);
        // Degraded, not unready: the process serves everything else (the browser of this app may still be starting).
        const ready = await t.request('GET', '/readyz');
        expect(ready.body.checks.einvoice_rules).toMatch(
          /^degraded: no rules pack installed; e-invoice requests answer 503 EINVOICE_RULES_MISSING/,
        );
        // Without an e-invoice nothing changes.
        expect(
          (
            await t.request('POST', '/v1/pdf/create', {
              apiKey: account.apiKey,
              body: { template_id: template.body.id, data: {}, export_type: 'url' },
            })
          ).status,
        ).toBe(200);

        await installRulesPack(t.config.dataDir);
        const judged = await t.request('POST', '/v1/pdf/create', {
          apiKey: account.apiKey,
          body: { ...body, export_type: 'url' },
        });
        expect(judged.status, JSON.stringify(judged.body)).toBe(200);
        expect(judged.body.einvoice_checks).toBe(XRECHNUNG);

        // A long invoice is judged like a short one: a required pack has no length past which it refuses.
        const long = await t.request('POST', '/v1/pdf/create', {
          apiKey: account.apiKey,
          body: { ...body, export_type: 'url', einvoice: { format: 'xrechnung-cii', invoice: LONG_INVOICE } },
        });
        expect(long.status, JSON.stringify(long.body)).toBe(200);
        expect(long.body.einvoice_checks).toBe(XRECHNUNG);
      } finally {
        await t.close();
      }
    },
    INSTALL_TIMEOUT_MS,
  );

  it(
    'off: an installed pack is not used (einvoice_checks "built-in"; validate answers 503)',
    async () => {
      const t = await startTestApp('sqlite', { PRESSROOM_EINVOICE_RULES: 'off' });
      try {
        await installRulesPack(t.config.dataDir);
        const account = await t.createAccount({ credits: 5 });
        const template = await t.request('POST', '/v1/templates', {
          apiKey: account.apiKey,
          body: { name: 'Invoice', html: TEMPLATE },
        });
        const res = await t.request('POST', '/v1/pdf/create', {
          apiKey: account.apiKey,
          body: {
            template_id: template.body.id,
            data: {},
            einvoice: { format: 'xrechnung-ubl', invoice: SAMPLE_INVOICE },
          },
        });
        expect(res.status).toBe(200);
        expect(res.body.einvoice_checks).toBe('built-in');
        expect(
          (await t.request('POST', '/v1/einvoice/validate', { apiKey: account.apiKey, body: { xml: '<x/>' } })).status,
        ).toBe(503);
        expect((await t.request('GET', '/readyz')).body.checks).not.toHaveProperty('einvoice_rules');
      } finally {
        await t.close();
      }
    },
    INSTALL_TIMEOUT_MS,
  );
});

describe.each(DIALECTS)('a job keeps what the checks concluded on %s', (dialect) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(dialect, { PRESSROOM_JOB_POLL_MS: '100' });
    t.services.startWorkers();
    await installRulesPack(t.config.dataDir);
  }, INSTALL_TIMEOUT_MS);
  afterAll(async () => t?.close());

  it("create-async XRechnung: the job and its signed webhook state einvoice_checks, with the rules' warnings", async () => {
    const account = await t.createAccount({ credits: 5 });
    const template = await t.request('POST', '/v1/templates', {
      apiKey: account.apiKey,
      body: { name: 'Invoice', html: TEMPLATE },
    });
    const { delivery_date: _, ...invoice } = SAMPLE_INVOICE;
    const receiver = await startWebhookReceiver();
    onTestFinished(() => receiver.close());
    const secret = 'einvoice-webhook-secret';
    const res = await t.request('POST', '/v1/pdf/create-async', {
      apiKey: account.apiKey,
      body: {
        template_id: template.body.id,
        data: {},
        einvoice: { format: 'xrechnung-cii', invoice },
        webhook_url: receiver.url,
        webhook_secret: secret,
      },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const path = `/v1/pdf/jobs/${res.body.job_id}`;
    expect((await t.request('GET', path, { apiKey: account.apiKey })).body.einvoice_checks).toBe(XRECHNUNG);
    await expect
      .poll(async () => (await t.request('GET', path, { apiKey: account.apiKey })).body.status)
      .toBe('completed');
    const job = (await t.request('GET', path, { apiKey: account.apiKey })).body;
    expect(job.einvoice_checks).toBe(XRECHNUNG);
    expect(job.warnings).toEqual([
      expect.objectContaining({ code: 'EINVOICE_RULE_WARNING', message: expect.stringMatching(/^\[BR-DE-TMP-32\]/) }),
    ]);
    const [hook] = await receiver.waitFor(1);
    expect(hook!.headers['x-service-signature']).toBe(createHmac('sha256', secret).update(hook!.raw).digest('hex'));
    expect(hook!.json).toMatchObject({ event: 'pdf.completed', job_id: res.body.job_id, einvoice_checks: XRECHNUNG });
    expect(hook!.json.warnings).toEqual([expect.objectContaining({ code: 'EINVOICE_RULE_WARNING' })]);
  });
});
