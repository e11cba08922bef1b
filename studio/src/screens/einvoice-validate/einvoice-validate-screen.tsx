/**
 * Validate e-invoice (issue 41): an e-invoice someone received — an XML (CII or UBL) or a Factur-X /
 * ZUGFeRD PDF, dropped or picked — judged by the official rules of the installed pack
 * (`POST /v1/einvoice/validate`, the file sent as `file_base64`), and its report. Free: nothing is
 * charged or stored. A file is checked as soon as it is chosen; the answer for a file replaced since
 * (or for a screen left since) is dropped. A Pressroom without the rules says so up front (read from
 * GET /v1/capabilities) and offers no file drop; an input that is not an e-invoice (422) or a file too
 * large (413) is said in the service's words.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { describeRefusal } from '../../api/client.js';
import { useCapabilities, validationUnavailable } from '../../api/capabilities.js';
import { api } from '../../api/session.js';
import { FileDrop } from '../../components/drop-zone.js';
import { ErrorNotice, StatusNotice } from '../../components/notice.js';
import type { EInvoiceValidationReport } from '../../lib/api-types.js';
import { isEInvoiceFile } from '../../lib/einvoice/einvoice-report.js';
import { readAsBase64 } from '../finishing/read-file.js';
import { ValidationReport } from './validation-report.js';

type Outcome = { file: string; report: EInvoiceValidationReport } | { file: string; error: string };

export function EInvoiceValidateScreen() {
  const [checking, setChecking] = useState<string | null>(null);
  const [skipped, setSkipped] = useState<string[]>([]);
  const [outcome, setOutcome] = useState<Outcome | null>(null);
  const capabilities = useCapabilities();
  const unavailable = validationUnavailable(capabilities);
  // Counts the files sent: only the latest one's answer is shown.
  const latest = useRef(0);
  useEffect(
    () => () => {
      latest.current++;
    },
    [],
  );

  const validate = async (file: File) => {
    const attempt = ++latest.current;
    setChecking(file.name);
    setOutcome(null);
    let next: Outcome;
    try {
      const report = await api().json<EInvoiceValidationReport>('POST', '/v1/einvoice/validate', {
        body: { file_base64: await readAsBase64(file) },
      });
      next = { file: file.name, report };
    } catch (e) {
      next = {
        file: file.name,
        error: describeRefusal(e, (loc) => (loc[0] === 'file_base64' ? `The file (${file.name})` : null)),
      };
    }
    if (attempt !== latest.current) return;
    setOutcome(next);
    setChecking(null);
  };

  /** Dropped or picked: the first XML or PDF is checked; anything else is named, not sent. */
  const choose = (files: File[]) => {
    setSkipped(files.filter((f) => !isEInvoiceFile(f)).map((f) => f.name));
    const file = files.find(isEInvoiceFile);
    if (file) void validate(file);
  };

  return (
    <main class="screen" id="main">
      <div class="screen-head">
        <h1 tabIndex={-1}>Validate e-invoice</h1>
      </div>
      <p class="help">
        Check an e-invoice you received before you pay it: an XML file (UN/CEFACT CII or OASIS UBL, XRechnung included)
        or a Factur-X / ZUGFeRD PDF, judged by the official rules installed on this Pressroom — the syntax's schema, the
        CEN EN 16931 rules and, for XRechnung, KoSIT's. <strong>Free</strong>: no credit is taken, and the file is not
        stored.
      </p>
      {unavailable ? (
        <div class="notice notice-warning" role="status" data-testid="einvoice-unavailable">
          <p>{unavailable}</p>
          <p>
            Nothing can be checked on this screen until then.
            {capabilities?.einvoice_attachments.available
              ? " Run can still attach e-invoices to PDFs; they are checked against the format's schema and Pressroom's own rules."
              : ''}
          </p>
        </div>
      ) : (
        <div class="card tool-form">
          <FileDrop
            id="einvoice-file"
            label="E-invoice file (XML or PDF)"
            accept=".xml,.pdf,application/xml,text/xml,application/pdf"
            testId="einvoice-drop"
            onFiles={choose}
            prompt={
              outcome || checking
                ? 'Drop another XML or PDF here to check it, or'
                : 'Drop an e-invoice (XML or PDF) here, or'
            }
            button={outcome || checking ? 'Choose another file…' : 'Choose a file…'}
          />
          {skipped.length > 0 && (
            <StatusNotice tone="warning">Not checked, neither XML nor PDF: {skipped.join(', ')}.</StatusNotice>
          )}
          {checking && <StatusNotice>Checking {checking}…</StatusNotice>}
        </div>
      )}
      <div data-testid="validation-error">
        {outcome && 'error' in outcome && (
          <ErrorNotice>
            Not checked: {outcome.error}
            <br />
            Validation is free: nothing was charged.
          </ErrorNotice>
        )}
      </div>
      <div aria-live="polite" data-testid="validation-result">
        {outcome && 'report' in outcome && <ValidationReport report={outcome.report} file={outcome.file} />}
      </div>
    </main>
  );
}
