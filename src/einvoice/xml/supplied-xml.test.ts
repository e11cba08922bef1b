/**
 * The checks on a customer's own XML (`einvoice: {format, xml}`), without the HTTP layer: the XML the
 * service itself builds for the sample invoice passes in every format and profile; each kind of broken
 * or misfiled XML is refused with its type, on body.einvoice.xml. test/e2e/documents/einvoice.test.ts posts them.
 */
import { describe, expect, it } from 'vitest';
import { ValidationError, type ValidationIssue } from '../../shared/errors.js';
import { SAMPLE_INVOICE } from '../../../test/support/documents/einvoice-samples.js';
import { buildEInvoice, checkEInvoice, templateView, type EInvoiceRequest } from '../einvoice.js';
import { EINVOICE_PROFILES, type EInvoiceFormat, type EInvoiceProfile } from '../invoice-schema.js';

/** The account the checks run for (the xmllint threads are shared fairly between accounts). */
const accountId = 'supplied-xml-test';

/** The XML the service builds from the sample invoice. */
async function ownXml(format: EInvoiceFormat, profile?: EInvoiceProfile): Promise<string> {
  return (await buildEInvoice({ format, profile, invoice: SAMPLE_INVOICE }, { accountId })).xml;
}

/** The issues checkEInvoice refuses a request with (fails the test when it accepts it). */
async function refusal(request: EInvoiceRequest, pdfVariant?: string): Promise<ValidationIssue[]> {
  const error = await checkEInvoice(request, { accountId, pdfVariant }).then(
    () => null,
    (e: unknown) => e,
  );
  expect(error, 'the request was accepted').toBeInstanceOf(ValidationError);
  return (error as ValidationError).issues;
}

const XML_LOC = ['body', 'einvoice', 'xml'];

describe("einvoice.xml: a customer's own XML", () => {
  it.each(EINVOICE_PROFILES)('Factur-X %s: the profile is read from the XML', async (profile) => {
    const xml = await ownXml('factur-x', profile);
    const built = await checkEInvoice({ format: 'factur-x', xml }, { accountId });
    expect(built).toEqual({
      format: 'factur-x',
      profile,
      xml,
      totals: null,
      verdict: { checks: 'built-in', warnings: [] },
    });
    expect((await checkEInvoice({ format: 'zugferd', profile, xml }, { accountId })).profile).toBe(profile);
  });

  it.each(['xrechnung-cii', 'xrechnung-ubl'] as const)('%s: accepted as it came', async (format) => {
    const xml = await ownXml(format);
    expect(await checkEInvoice({ format, xml }, { accountId })).toEqual({
      format,
      profile: 'en16931',
      xml,
      totals: null,
      verdict: { checks: 'built-in', warnings: [] },
    });
  });

  it('a UBL CreditNote is a UBL root too', async () => {
    const xml = (await ownXml('xrechnung-ubl'))
      .replace(
        '<Invoice xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2"',
        '<CreditNote xmlns="urn:oasis:names:specification:ubl:schema:xsd:CreditNote-2"',
      )
      .replace('</Invoice>', '</CreditNote>');
    expect(xml).toContain('<CreditNote');
    expect((await checkEInvoice({ format: 'xrechnung-ubl', xml }, { accountId })).profile).toBe('en16931');
  });

  it('the template sees format, profile and xml: true (no invoice, no totals)', async () => {
    const request = { format: 'factur-x', xml: await ownXml('factur-x', 'basic') } as const;
    expect(templateView(request, await buildEInvoice(request, { accountId }))).toEqual({
      format: 'factur-x',
      profile: 'basic',
      xml: true,
    });
  });

  it('exactly one of invoice and xml', async () => {
    const both = await refusal({ format: 'factur-x', invoice: SAMPLE_INVOICE, xml: await ownXml('factur-x') });
    const neither = await refusal({ format: 'factur-x' });
    for (const [issues, word] of [
      [both, 'both'],
      [neither, 'neither'],
    ] as const) {
      expect(issues).toEqual([
        { loc: ['body', 'einvoice'], type: 'value_error', msg: expect.stringContaining(`exactly one of invoice (`) },
      ]);
      expect(issues[0]!.msg).toContain(`this request has ${word}`);
    }
  });

  it('the format fit rules hold for xml too', async () => {
    const ubl = await ownXml('xrechnung-ubl');
    expect(await refusal({ format: 'xrechnung-ubl', profile: 'basic', xml: ubl })).toContainEqual(
      expect.objectContaining({ loc: ['body', 'einvoice', 'profile'] }),
    );
    expect(await refusal({ format: 'factur-x', xml: await ownXml('factur-x') }, 'pdf/a-2b')).toContainEqual(
      expect.objectContaining({ loc: ['body', 'pdf_variant'] }),
    );
  });

  const cases: {
    name: string;
    format: EInvoiceFormat;
    profile?: EInvoiceProfile;
    xml: () => Promise<string>;
    type: string;
    msg: RegExp;
    line?: number;
  }[] = [
    {
      name: 'not well-formed (a tag left open)',
      format: 'factur-x',
      type: 'xml_syntax',
      msg: /not well-formed \(line \d+\): parser error : .*mismatch/,
      xml: async () => (await ownXml('factur-x')).replace('</ram:TypeCode>', ''),
    },
    {
      name: 'not XML at all',
      format: 'factur-x',
      type: 'xml_syntax',
      msg: /Start tag expected/,
      xml: async () => 'Rechnung RE-2026-0042',
      line: 1,
    },
    {
      name: 'a DOCTYPE with an external entity (XXE)',
      format: 'xrechnung-ubl',
      type: 'xml_doctype',
      msg: /DOCTYPE/,
      xml: async () =>
        (await ownXml('xrechnung-ubl'))
          .replace('?>\n', '?>\n<!DOCTYPE Invoice [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>\n')
          .replace('<cbc:ID>RE-2026-0042', '<cbc:ID>&xxe;'),
    },
    {
      name: 'a DOCTYPE behind a comment and a processing instruction',
      format: 'factur-x',
      type: 'xml_doctype',
      msg: /DOCTYPE/,
      xml: async () =>
        (await ownXml('factur-x')).replace(
          '?>\n',
          '?>\n<!-- made by hand -->\n<?xml-stylesheet href="x.xsl"?>\n<!DOCTYPE lol [<!ENTITY lol "lol">]>\n',
        ),
    },
    {
      name: 'another encoding declared',
      format: 'factur-x',
      type: 'xml_encoding',
      msg: /encoding="ISO-8859-1".*UTF-8/,
      line: 1,
      xml: async () => (await ownXml('factur-x')).replace('encoding="UTF-8"', 'encoding="ISO-8859-1"'),
    },
    {
      name: 'CII sent as xrechnung-ubl',
      format: 'xrechnung-ubl',
      type: 'einvoice_syntax',
      msg: /takes OASIS UBL 2\.1.*root is \{urn:un:unece:uncefact:data:standard:CrossIndustryInvoice:100\}CrossIndustryInvoice \(this is CII: send it as format xrechnung-cii/,
      xml: () => ownXml('xrechnung-cii'),
    },
    {
      name: 'UBL sent as factur-x',
      format: 'factur-x',
      type: 'einvoice_syntax',
      msg: /this is UBL: send it as format xrechnung-ubl/,
      xml: () => ownXml('xrechnung-ubl'),
    },
    {
      name: 'a CII root in the wrong namespace',
      format: 'factur-x',
      type: 'einvoice_syntax',
      msg: /root is \{urn:example:cii\}CrossIndustryInvoice$/,
      xml: async () =>
        (await ownXml('factur-x')).replace(
          'xmlns:rsm="urn:un:unece:uncefact:data:standard:CrossIndustryInvoice:100"',
          'xmlns:rsm="urn:example:cii"',
        ),
    },
    {
      name: "a profile that is not the XML's",
      format: 'factur-x',
      profile: 'extended',
      type: 'einvoice_profile',
      msg: /einvoice\.profile is extended, but the XML is Factur-X BASIC \("urn:cen\.eu:en16931:2017#compliant#urn:factur-x\.eu:1p0:basic"\)/,
      xml: () => ownXml('factur-x', 'basic'),
    },
    {
      name: 'no specification identifier',
      format: 'zugferd',
      type: 'einvoice_profile',
      msg: /needs the specification identifier \(BT-24.*this XML has no rsm:ExchangedDocumentContext/,
      xml: async () =>
        (await ownXml('factur-x')).replace(
          /<rsm:ExchangedDocumentContext>[\s\S]*?<\/rsm:ExchangedDocumentContext>/,
          '<rsm:ExchangedDocumentContext/>',
        ),
    },
    {
      name: 'an unknown specification identifier',
      format: 'factur-x',
      type: 'einvoice_profile',
      msg: /Factur-X 1\.0 profile: "urn:factur-x\.eu:1p0:minimum" \(MINIMUM\), .*this XML's is "urn:example:custom"/,
      xml: async () =>
        (await ownXml('factur-x')).replace(
          '<ram:ID>urn:cen.eu:en16931:2017</ram:ID>',
          '<ram:ID>urn:example:custom</ram:ID>',
        ),
    },
    {
      name: 'an XRechnung sent as factur-x',
      format: 'factur-x',
      type: 'einvoice_profile',
      msg: /it is XRechnung: send it as format xrechnung-cii/,
      xml: () => ownXml('xrechnung-cii'),
    },
    {
      name: 'a Factur-X XML sent as xrechnung-cii',
      format: 'xrechnung-cii',
      type: 'einvoice_profile',
      msg: /XRechnung 3\.0 requires .*xrechnung_3\.0"; this XML's is "urn:cen\.eu:en16931:2017" \(it is Factur-X EN 16931: send it as format factur-x\)/,
      xml: () => ownXml('factur-x'),
    },
    {
      name: "a UBL XML without XRechnung's CustomizationID",
      format: 'xrechnung-ubl',
      type: 'einvoice_profile',
      msg: /cbc:CustomizationID\).*this XML's is "urn:cen\.eu:en16931:2017"$/,
      xml: async () =>
        (await ownXml('xrechnung-ubl')).replace(/(<cbc:CustomizationID>)[^<]*/, '$1urn:cen.eu:en16931:2017'),
    },
    {
      name: 'a required element removed (XSD)',
      format: 'factur-x',
      type: 'xml_schema',
      msg: /does not match the Factur-X EN 16931 schema \(line 10\): Schemas validity error : Element '\{[^}]+\}IssueDateTime': This element is not expected\. Expected is \( \{[^}]+\}TypeCode \)/,
      line: 10,
      xml: async () => (await ownXml('factur-x')).replace(/<ram:TypeCode>380<\/ram:TypeCode>\n\s*/, ''),
    },
    {
      name: 'an element the profile does not allow (XSD of MINIMUM)',
      format: 'factur-x',
      type: 'xml_schema',
      msg: /Factur-X MINIMUM schema/,
      xml: async () =>
        (await ownXml('factur-x', 'minimum')).replace(
          '<ram:TypeCode>380</ram:TypeCode>',
          '<ram:TypeCode>380</ram:TypeCode><ram:IncludedNote><ram:Content>x</ram:Content></ram:IncludedNote>',
        ),
    },
    {
      name: 'XRechnung CII against the EN 16931 schema',
      format: 'xrechnung-cii',
      type: 'xml_schema',
      msg: /EN 16931 CII schema/,
      xml: async () => (await ownXml('xrechnung-cii')).replace(/<ram:TypeCode>380<\/ram:TypeCode>\n\s*/, ''),
    },
  ];

  it.each(cases)('$name: 422 $type on body.einvoice.xml', async ({ format, profile, xml, type, msg, line }) => {
    const issues = await refusal({ format, profile, xml: await xml() });
    expect(issues.length).toBeGreaterThan(0);
    for (const i of issues) expect(i).toMatchObject({ loc: XML_LOC, type });
    expect(issues[0]!.msg).toMatch(msg);
    if (line !== undefined) expect(issues[0]!.ctx).toEqual({ line });
  });

  it('lists at most 20 schema findings and counts the rest', async () => {
    // 30 lines, each with one element the schema does not know: 30 findings.
    const xml = await ownXml('factur-x');
    const line = /<ram:IncludedSupplyChainTradeLineItem>[\s\S]*?<\/ram:IncludedSupplyChainTradeLineItem>\n\s*/.exec(
      xml,
    )![0];
    const broken = xml.replace(
      line,
      line.replace(/<ram:LineID>(\d+)<\/ram:LineID>/, '<ram:LineNumber>$1</ram:LineNumber>').repeat(30),
    );
    const issues = await refusal({ format: 'factur-x', xml: broken });
    expect(issues).toHaveLength(21);
    expect(issues.every((i) => i.type === 'xml_schema')).toBe(true);
    expect(issues[0]!.msg).toContain('LineNumber');
    expect(issues[20]!.msg).toBe('… and 10 more schema findings');
  });
});
