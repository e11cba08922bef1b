/** `POST /v1/einvoice/validate`: an e-invoice (XML, or a Factur-X / ZUGFeRD PDF) judged by the official rules; free (docs/einvoice.md). */
import { Type } from 'typebox';
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { EInvoiceValidator } from '../../../einvoice/validate.js';
import { SUPPLIED_XML_MAX_CHARS } from '../../../einvoice/invoice-schema.js';
import { Nullable, StringEnum, errorResponses } from '../../schemas.js';

const ValidateBody = Type.Object(
  {
    xml: Type.Optional(
      Nullable(
        Type.String({
          minLength: 1,
          maxLength: SUPPLIED_XML_MAX_CHARS,
          description:
            'The e-invoice XML (CII or UBL) as a string, at most 5 MiB (5,242,880 characters). Give exactly one of xml, file_base64 and url',
        }),
      ),
    ),
    file_base64: Type.Optional(
      Nullable(
        Type.String({
          minLength: 1,
          description:
            'An XML file, or a Factur-X / ZUGFeRD PDF, in base64 (at most PRESSROOM_PDF_TOOLS_MAX_INPUT_BYTES once decoded)',
        }),
      ),
    ),
    url: Type.Optional(
      Nullable(
        Type.String({
          minLength: 1,
          maxLength: 2083,
          description:
            'HTTPS URL of an XML file or a Factur-X / ZUGFeRD PDF (public addresses only; redirects followed and checked again)',
        }),
      ),
    ),
  },
  {
    description: 'Exactly one of xml, file_base64 and url',
    examples: [{ url: 'https://example.com/invoices/RE-2026-0042.pdf' }],
  },
);

const Finding = Type.Object({
  rule: Type.String({
    description: 'The rule id, e.g. BR-DE-15, BR-CO-10, PEPPOL-EN16931-R001; xml_schema for a schema finding',
    examples: ['BR-DE-15'],
  }),
  severity: StringEnum(['fatal', 'warning'] as const, {
    description: "fatal: the invoice is invalid; warning: reported only (KoSIT's information notes are warnings too)",
  }),
  message: Type.String({ description: "The rule's own message" }),
  location: Type.String({
    description:
      'XPath of the element the rule was checked on (e.g. /rsm:CrossIndustryInvoice[1]/rsm:SupplyChainTradeTransaction[1]); for a schema finding, its line',
  }),
  line: Type.Optional(Type.Integer({ description: 'The XML line of a schema finding' })),
});

const Check = Type.Object({
  check: Type.String({
    description:
      'What ran, with its version: the schema, EN16931 1.3.16 (CEN schematron), XRechnung 3.0.2 (KoSIT schematron 2.5.0)',
  }),
  status: StringEnum(['passed', 'failed', 'not_run'] as const, {
    description: 'not_run: a check before it failed (rules mean nothing on XML its schema refuses)',
  }),
  findings: Type.Array(Finding, { description: 'Fatal findings and warnings, at most 100 (then `more`)' }),
  more: Type.Optional(Type.Integer({ description: 'Findings past the listed ones' })),
});

const Report = Type.Object({
  valid: Type.Boolean({ description: 'No check failed (no fatal finding)' }),
  einvoice_checks: Type.String({
    description:
      'The rule sets that judged it, e.g. EN16931 1.3.16 + XRechnung 3.0.2; built-in for Factur-X MINIMUM and BASIC WL (their schema only)',
  }),
  source: Type.Object(
    {
      kind: StringEnum(['xml', 'pdf'] as const, {
        description: 'xml: the XML itself was sent; pdf: a PDF whose embedded invoice was judged',
      }),
      attachment: Type.Optional(
        Type.String({
          description:
            'For a PDF: the embedded file that was judged (factur-x.xml, zugferd-invoice.xml, xrechnung.xml)',
        }),
      ),
      syntax: StringEnum(['CII', 'UBL'] as const, {
        description: 'UN/CEFACT CII D16B or OASIS UBL 2.1, by the root element',
      }),
      document: Type.String({ description: 'The root element: CrossIndustryInvoice, Invoice or CreditNote' }),
      specification_identifier: Type.String({ description: 'BT-24 as the XML states it' }),
      profile: Type.String({
        description:
          'What it was judged as: XRechnung, a Factur-X profile (MINIMUM, BASIC WL, BASIC, EN 16931, EXTENDED), or EN 16931 for another identifier',
      }),
    },
    { description: 'What was judged' },
  ),
  checks: Type.Array(Check, {
    description: "In order: the schema, the CEN EN 16931 schematron, KoSIT's for XRechnung",
  }),
});

export function einvoiceValidateRoutes(app: FastifyInstance, deps: { validator: EInvoiceValidator }): void {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  r.post('/v1/einvoice/validate', {
    config: { auth: 'api_key' },
    schema: {
      operationId: 'validateEinvoice',
      tags: ['E-invoices'],
      summary: 'Validate an e-invoice by the official rules',
      description:
        "Judges an e-invoice by the official rules of the installed rules pack: the syntax's schema (CII: the Factur-X XSD of its profile; UBL 2.1: the OASIS XSD), " +
        "the CEN EN 16931 schematron and, for XRechnung, KoSIT's (with the Peppol rules it includes). Takes the XML, or a Factur-X / ZUGFeRD PDF whose embedded invoice is judged. " +
        'Free (no credit): it makes no document; it counts against the rate limit and runs after paid work. An invoice the rules refuse is a 200 with valid: false; ' +
        'an input that is not an e-invoice (not well-formed, a DOCTYPE, a PDF without an invoice) is a 422. 503 EINVOICE_RULES_MISSING when no rules pack is installed.',
      body: ValidateBody,
      response: { 200: Report, ...errorResponses(401, 413, 422, 429, 500, 503) },
    },
    handler: async (request) => {
      const body = request.body;
      const report = await deps.validator.validate(request.caller.accountId, {
        xml: body.xml,
        fileBase64: body.file_base64,
        url: body.url,
      });
      const { specificationIdentifier, ...source } = report.source;
      return {
        valid: report.valid,
        einvoice_checks: report.einvoiceChecks,
        source: { ...source, specification_identifier: specificationIdentifier },
        checks: report.checks.map((c) => ({ ...c, findings: [...c.findings] })),
      };
    },
  });
}
