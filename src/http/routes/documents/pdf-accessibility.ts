/** `POST /v1/pdf-tools/check-accessibility` (free): the PDF/UA machine check of a PDF you send, by Matterhorn checkpoint (docs/accessibility.md). */
import { Type, type Static } from 'typebox';
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { PdfToolService } from '../../../pdf-tools/pdf-tools.js';
import { CHECKPOINTS } from '../../../accessibility/pdf-ua.js';
import { EXAMPLE_PDF_BASE64 } from '../../pdf-examples.js';
import { errorResponses } from '../../schemas.js';
import { source, sourceFields } from './pdf-tools.js';

const CheckBody = Type.Object(sourceFields, { examples: [{ pdf_base64: EXAMPLE_PDF_BASE64 }] });

const Finding = Type.Object({
  checkpoint: Type.String({ description: 'The Matterhorn Protocol failure condition, e.g. `13-004`' }),
  message: Type.String({ description: 'What failed, in words, with the page where it has one' }),
  page: Type.Optional(Type.Integer({ description: '1-based page the finding is on' })),
});

const Report = Type.Object(
  {
    compliant: Type.Boolean({
      description: 'No checkpoint failed (what a machine can check; docs/accessibility.md says what it cannot)',
    }),
    check: Type.String({ description: 'The check that ran (as `accessibility_checks` names it on a generated PDF)' }),
    checkpoints: Type.Array(
      Type.Object({
        checkpoint: Type.String({ description: 'The Matterhorn Protocol failure condition, e.g. `13-004`' }),
        condition: Type.String({ description: 'The failure condition it tests' }),
        passed: Type.Boolean({ description: 'Whether the PDF passed it' }),
      }),
      { description: 'Every checkpoint the check covers, passed or not' },
    ),
    findings: Type.Array(Finding, { description: 'Each failure found (at most 20 per checkpoint)' }),
    more_findings: Type.Integer({ description: 'Failures found past the 20 listed per checkpoint' }),
  },
  { description: 'The accessibility report' },
);
export type AccessibilityReportBody = Static<typeof Report>;

export function pdfAccessibilityRoutes(app: FastifyInstance, deps: { pdfTools: PdfToolService }): void {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  r.post('/v1/pdf-tools/check-accessibility', {
    config: { auth: 'api_key' },
    schema: {
      operationId: 'checkPdfAccessibility',
      tags: ['PDF Tools'],
      summary: 'Check a PDF against PDF/UA',
      description:
        "The service's PDF/UA-1 machine check (the Matterhorn Protocol's checkpoints listed in `checkpoints`) of any PDF: " +
        'tagging, artifacts, metadata, language, figures, table headers, headings, annotations and fonts. ' +
        'Whether an alternative text is meaningful, or the reading order right, needs a person. **Never charged.** Inputs as for the other PDF tools.',
      body: CheckBody,
      response: { 200: Report, ...errorResponses(401, 413, 422, 429, 500, 503, 504) },
    },
    handler: async (request) => {
      const body = request.body as Static<typeof CheckBody>;
      const report = await deps.pdfTools.checkAccessibility({ accountId: request.caller.accountId, pdf: source(body) });
      const failed = new Set(report.findings.map((f) => f.checkpoint));
      return {
        compliant: report.compliant,
        check: report.check,
        checkpoints: report.checked.map((checkpoint) => ({
          checkpoint,
          condition: CHECKPOINTS[checkpoint],
          passed: !failed.has(checkpoint),
        })),
        findings: report.findings,
        more_findings: report.truncated,
      } satisfies AccessibilityReportBody;
    },
  });
}
