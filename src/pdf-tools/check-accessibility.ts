/** The free PDF/UA check of a PDF you send (POST /v1/pdf-tools/check-accessibility; docs/accessibility.md). */
import { checkPdfUaOffThread } from '../accessibility/accessibility-thread.js';
import type { AccessibilityReport } from '../accessibility/pdf-ua.js';
import { isAppError, ValidationError } from '../shared/errors.js';
import { readPdfInputs, type InputReader, type PdfInputLimits, type PdfSource } from './pdf-inputs.js';

/** The input read as every tool reads it, unpacked by qpdf, then checked on an accessibility thread (free work). */
export async function checkAccessibility(
  source: PdfSource,
  limits: PdfInputLimits,
  reader: InputReader,
): Promise<AccessibilityReport> {
  const [input] = await readPdfInputs([source], [[]], limits, reader);
  const loc = ['body', source.pdfUrl != null ? 'pdf_url' : 'pdf_base64'];
  const unreadable = (why: string) =>
    new ValidationError([
      {
        loc,
        msg: `The accessibility check could not read this PDF (${why}); rewrite it with another PDF tool first, then send it again.`,
        type: 'value_error.pdf_unreadable',
      },
    ]);
  // pdf-lib inflates object streams without a bound; qpdf unpacks them first, under its ceilings.
  const unpacked = await reader.qpdf.withoutObjectStreams(input!.pdf, reader.accountId, 'free');
  // A PDF qpdf reads that pdf-lib cannot is the input's problem, not the service's: a 422.
  const report = await checkPdfUaOffThread(unpacked, { accountId: reader.accountId, kind: 'free' }).catch(
    (error: unknown) => {
      throw isAppError(error, 'PDF_TOOL_FAILED') ? unreadable('its structure could not be parsed') : error;
    },
  );
  // readPdfInputs refused an encrypted PDF already.
  if (!report) throw unreadable('it is encrypted');
  return report;
}
