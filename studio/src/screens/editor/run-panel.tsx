/**
 * Run: generate the real PDF (1 credit) with the form's data, from the saved draft or a version — sync
 * as a download link or as bytes, or async as a job polled until it finishes (its warnings shown once it
 * completes, as a sync answer's are) — and the same call as curl / JavaScript / Python snippets.
 * Optionally with an e-invoice attached (einvoice-section.tsx): a refused invoice shows its findings by
 * rule instead of a generic error, a delivered one the checks that judged it and the official rules'
 * warnings by rule (issue 41). And with finishing (finishing-section.tsx): a watermark, a signature,
 * protection.
 * A strict template's required field without a value is refused before sending (the service's rule);
 * any refusal says that nothing was charged, and marks the form's fields it is about. A PDF/UA refusal's
 * findings also go to the editor's problems list, each at the tag of the template it is about (in the
 * text that ran: the saved draft's, or the version's). A result or a refusal goes once the options it
 * was for change. For a fillable PDF form template (`formTemplate`) the options it refuses (PDF/UA, an
 * e-invoice) are not offered, and a line says why.
 */
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { ApiError, describeRefusal } from '../../api/client.js';
import { describeLoc, refusalsOf, type DataLoc, type Refusal } from '../../lib/field-marks.js';
import { api, refreshAccount, setCredits, useSession } from '../../api/session.js';
import type {
  CreateAsyncResult,
  CreateUrlResult,
  Field,
  Job,
  TemplateVersion,
  TemplateVersionContent,
  ValidationIssue,
} from '../../lib/api-types.js';
import {
  isPdfUaFinding,
  problemsFromValidation,
  withSources,
  type PaneTexts,
  type Problem,
} from '../../lib/problems.js';
import { describeIssue, nothingCharged } from '../../lib/messages.js';
import { FILENAME, fileNameFrom, formatDuration, jobVersionText } from '../../lib/format.js';
import { missingRequired, type DataObject } from '../../lib/form-data.js';
import type { RunMode } from '../../lib/snippets.js';
import { Link, paths } from '../../router.js';
import { SnippetsView } from './snippets-view.js';
import { parseWarningHeaders, readWarnings, type DocumentWarning } from '../../lib/warnings.js';
import {
  einvoiceFindings,
  initialEInvoiceDraft,
  isHybridFormat,
  resolveEInvoice,
  type EInvoiceRequest,
  type EInvoiceRuleFindings,
} from '../../lib/einvoice/einvoice.js';
import { EInvoiceDelivered, EInvoiceFindings, EInvoiceSection } from './einvoice-section.js';
import { splitRuleWarnings } from '../../lib/einvoice/einvoice-report.js';
import { VersionSelect } from '../../components/version-select.js';
import { useResetOnChange } from '../../lib/use-reset-on-change.js';
import { useCertificates } from '../finishing/certificates-screen.js';
import { EMPTY_FINISHING, finishingRequest, forSnippet } from '../finishing/finishing.js';
import { FinishingSection } from '../finishing/finishing-section.js';
import { useCapabilities } from '../../api/capabilities.js';

/** Which e-invoice a result carries (the answer does not repeat it: it is what was asked, since the service refuses what it cannot build). */
type Attached = Pick<EInvoiceRequest, 'format' | 'profile'> | null;

// `checks`: the answer's einvoice_checks (X-Pressroom-Einvoice-Checks on bytes; the job's own once it is read).
type Result =
  | {
      kind: 'url';
      url: string;
      filename: string;
      expiresIn: number;
      from: string;
      warnings: DocumentWarning[];
      einvoice: Attached;
      checks?: string;
    }
  | {
      kind: 'binary';
      url: string;
      filename: string;
      bytes: number;
      from: string;
      warnings: DocumentWarning[];
      einvoice: Attached;
      checks?: string;
    }
  | { kind: 'job'; job: Job | { id: string; status: Job['status'] }; einvoice: Attached };

interface RunPanelProps {
  templateId: string;
  /** Names the downloads when no file name is typed. */
  templateName: string;
  /** The saved template's strict mode (what Run renders with). */
  strict: boolean;
  data: DataObject;
  /** The form's fields (readable labels): the required-field verdict and the names of refused places. */
  fields: Field[];
  /** Form inputs whose text is refused ("Price: not a number"): nothing is generated until they are fixed. */
  inputsProblem: string | null;
  templateDirty: boolean;
  versions: TemplateVersion[];
  /** The version to run (its number), or null for the saved draft. */
  version: number | null;
  onVersion(version: number | null): void;
  /** The refusals of the last run about places in the data (marked in the form); [] clears them. */
  onRefused(refusals: Refusal[]): void;
  /** The saved draft's code panes (what Run renders without a version): where PDF/UA findings are placed. */
  savedTexts: PaneTexts;
  /** The last run's PDF/UA findings as problems of the template's panes, stamped with the text that ran; [] clears them. */
  onTemplateProblems(problems: Problem[]): void;
  /** Shows the form's input for a place in the data. */
  onShowField(loc: DataLoc): void;
  /** Whether the form has an input for a place in the data. */
  canShowField(loc: DataLoc): boolean;
  /** A fillable PDF form template: no PDF/UA and no e-invoice (the service refuses both for it). */
  formTemplate?: boolean;
}

/** "version 2 (prod)" or "the draft" (one name everywhere: the template as saved, not a version). */
export const describeSource = (v: TemplateVersion | undefined) =>
  v ? `version ${v.version_number} (${v.tag})` : 'the draft';

const MODES: { id: RunMode; label: string; help: string }[] = [
  { id: 'url', label: 'Download link', help: 'Sync; answers with a signed, expiring URL.' },
  { id: 'binary', label: 'PDF file', help: 'Sync; answers with the PDF bytes.' },
  { id: 'async', label: 'Background job', help: 'Async; queued, then polled until done.' },
];

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function RunPanel({
  templateId,
  templateName,
  strict,
  data,
  fields,
  inputsProblem,
  templateDirty,
  versions,
  version,
  onVersion,
  onRefused,
  savedTexts,
  onTemplateProblems,
  onShowField,
  canShowField,
  formTemplate = false,
}: RunPanelProps) {
  const [mode, setMode] = useState<RunMode>('url');
  const [filename, setFilename] = useState('');
  // Off: the template's own page.pdf_ua decides.
  const [pdfUa, setPdfUa] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [result, setResult] = useState<Result | null>(null);
  const [einvoiceDraft, setEInvoiceDraft] = useState(() => initialEInvoiceDraft(data));
  // The refused invoice's findings, with the JSON text they were reported for (null: the invoice was the data).
  const [findings, setFindings] = useState<{ rules: EInvoiceRuleFindings[]; json: string | null } | null>(null);
  const [finishingDraft, setFinishingDraft] = useState(EMPTY_FINISHING);
  const certificates = useCertificates();
  const credits = useSession().account?.credits ?? null;
  const alive = useRef(true);
  // Counts runs and resets: a version's text read after its run was reset places nothing.
  const runCount = useRef(0);
  const blobUrl = useRef<string | null>(null);
  useEffect(
    () => () => {
      alive.current = false;
      if (blobUrl.current) URL.revokeObjectURL(blobUrl.current);
    },
    [],
  );

  const filenameInvalid = filename !== '' && !FILENAME.test(filename);
  const defaultName = fileNameFrom(templateName);
  const sentName = filename && !filenameInvalid ? filename : defaultName;
  // A version deleted since it was chosen is no longer offered: Run falls back to the draft.
  const chosen = versions.find((v) => v.version_number === version);
  const from = describeSource(chosen);
  const resolved = useMemo(
    () => (formTemplate ? { request: null } : resolveEInvoice(einvoiceDraft, data)),
    [formTemplate, einvoiceDraft, data],
  );
  const einvoice = 'request' in resolved ? resolved.request : null;
  const einvoiceProblem = 'error' in resolved ? resolved.error : null;
  const attached: Attached = einvoice ? { format: einvoice.format, profile: einvoice.profile } : null;
  const xmlOnly = !!einvoice && !isHybridFormat(einvoice.format);
  // As the service checks (documents.ts): nothing when only XML is made; `einvoice` is the service's to fill.
  const missing = xmlOnly || chosen ? [] : missingRequired(fields, data, einvoice ? ['einvoice'] : []);
  // The saved draft's verdict is known here; a version's fields and strictness are the service's to check.
  const refusedForMissing = strict && missing.length > 0;
  const serviceTsa = useCapabilities()?.signature_timestamps.service_authority ?? true;
  const finishingResolved = finishingRequest(finishingDraft, serviceTsa);
  const finishingProblem = 'error' in finishingResolved ? finishingResolved.error : null;
  const finishing = 'request' in finishingResolved ? finishingResolved.request : {};
  // The official rules' warnings go with the e-invoice, by rule; the document's own stay a list. A job
  // carries its warnings once it has completed, as a sync answer does.
  const warnings = !result ? [] : result.kind === 'job' ? readWarnings((result.job as Job).warnings) : result.warnings;
  const { rules: ruleWarnings, rest: otherWarnings } = splitRuleWarnings(warnings);

  useResetOnChange(JSON.stringify([mode, filename, version, pdfUa, einvoiceDraft, finishingDraft]), () => {
    runCount.current++;
    setResult(null);
    setError(null);
    setFindings(null);
    onRefused([]);
    onTemplateProblems([]);
  });

  /** The PDF/UA findings placed in the text that ran: the saved draft's, or the version's (read for it). */
  const placeFindings = async (issues: ValidationIssue[], run: number) => {
    let texts: PaneTexts | null = savedTexts;
    if (chosen) {
      const snapshot = await api()
        .json<TemplateVersionContent>(
          'GET',
          `/v1/templates/${encodeURIComponent(templateId)}/versions/${chosen.version_number}`,
        )
        .catch(() => null);
      texts = snapshot && {
        html: snapshot.html,
        css: snapshot.css ?? '',
        header_html: snapshot.page?.header_html ?? '',
        footer_html: snapshot.page?.footer_html ?? '',
      };
    }
    if (!alive.current || run !== runCount.current) return;
    // Without the version's text, the findings are listed on the HTML without a line.
    onTemplateProblems(
      texts ? withSources(problemsFromValidation(issues, texts), texts) : problemsFromValidation(issues),
    );
  };

  const pollJob = async (id: string) => {
    for (let i = 0; i < 300 && alive.current; i++) {
      const job = await api().json<Job>('GET', `/v1/pdf/jobs/${encodeURIComponent(id)}`);
      if (!alive.current) return;
      setResult({ kind: 'job', job, einvoice: attached });
      if (job.status === 'completed' || job.status === 'failed') return;
      await sleep(i < 10 ? 1000 : 2000);
    }
  };

  /** Names a refused place as the screen does: a field of the form, rows counted from 1. */
  const place = (loc: readonly (string | number)[]): string | null => {
    if (loc[0] === 'data') return describeLoc(fields, loc.slice(1));
    if (loc[0] === 'einvoice' && loc[1] === 'invoice')
      return describeLoc(einvoiceDraft.source === 'data' ? fields : [], loc.slice(2));
    const finishingPart = (
      { sign: 'Signature', watermark: 'Watermark', protect: 'Protection', pdf_ua: 'Accessibility' } as Record<
        string,
        string
      >
    )[String(loc[0])];
    if (finishingPart) return [finishingPart, ...loc.slice(1)].join(' › ');
    return null;
  };

  const generate = async (event: Event) => {
    event.preventDefault();
    if (filenameInvalid || einvoiceProblem || refusedForMissing || finishingProblem) return;
    if (inputsProblem) {
      setError(`Not generated, nothing charged: ${inputsProblem}. Fix the form first.`);
      return;
    }
    setBusy(true);
    setError(null);
    setResult(null);
    setFindings(null);
    onRefused([]);
    onTemplateProblems([]);
    const run = ++runCount.current;
    // The tag names the version as a client would; tags are unique per template.
    const sent = data;
    const base = {
      template_id: templateId,
      data,
      filename: sentName,
      ...(chosen ? { version: chosen.tag } : {}),
      ...(einvoice ? { einvoice } : {}),
      ...(pdfUa && !formTemplate ? { pdf_ua: true } : {}),
      ...finishing,
    };
    try {
      if (mode === 'url') {
        const r = await api().json<CreateUrlResult>('POST', '/v1/pdf/create', {
          body: { ...base, export_type: 'url' },
        });
        setCredits(r.credits_remaining);
        setResult({
          kind: 'url',
          url: r.url,
          filename: r.filename,
          expiresIn: r.expires_in,
          from,
          warnings: readWarnings(r.warnings),
          einvoice: attached,
          checks: r.einvoice_checks,
        });
      } else if (mode === 'binary') {
        const response = await api().raw('POST', '/v1/pdf/create', { body: { ...base, export_type: 'binary' } });
        // XRechnung answers its XML (application/xml) instead of a PDF.
        const xml = (response.headers.get('content-type') ?? '').startsWith('application/xml');
        const blob = new Blob([await response.blob()], { type: xml ? 'application/xml' : 'application/pdf' });
        if (blobUrl.current) URL.revokeObjectURL(blobUrl.current);
        blobUrl.current = URL.createObjectURL(blob);
        const name = `${sentName}.${xml ? 'xml' : 'pdf'}`;
        const checks = response.headers.get('x-pressroom-einvoice-checks') ?? undefined;
        setResult({
          kind: 'binary',
          url: blobUrl.current,
          filename: name,
          bytes: blob.size,
          from,
          warnings: parseWarningHeaders((h) => response.headers.get(h)).warnings,
          einvoice: attached,
          checks,
        });
        const a = document.createElement('a');
        a.href = blobUrl.current;
        a.download = name;
        a.click();
        void refreshAccount().catch(() => undefined);
      } else {
        const r = await api().json<CreateAsyncResult>('POST', '/v1/pdf/create-async', { body: base });
        setCredits(r.credits_remaining);
        setResult({ kind: 'job', job: { id: r.job_id, status: r.status }, einvoice: attached });
        await pollJob(r.job_id);
      }
    } catch (e) {
      if (!alive.current) return;
      // A refused e-invoice: its findings by rule (anything else the 422 names stays a plain error).
      const refused = e instanceof ApiError && e.status === 422 ? einvoiceFindings(e.body) : null;
      const rest = refused
        ? refused.rest
        : e instanceof ApiError && e.status === 422
          ? ((e.body as { detail?: ValidationIssue[] }).detail ?? [])
          : [];
      // The places in the data the refusal is about, marked at the form's fields while their values stay.
      const inData = rest
        .filter((i) => i.loc[0] === 'body' && i.loc[1] === 'data')
        .map((i) => ({ loc: i.loc.slice(2), message: `Run refused it: ${describeIssue({ ...i, loc: [] })}.` }));
      const inInvoice =
        refused && einvoiceDraft.source === 'data'
          ? refused.rules.flatMap((r) =>
              r.findings
                .filter((f) => f.invoiceLoc?.length)
                .map((f) => ({
                  loc: f.invoiceLoc!,
                  message: `The e-invoice was refused here: ${f.message} (${r.rule}).`,
                })),
            )
          : [];
      onRefused(refusalsOf([...inData, ...inInvoice], sent));
      // The template's PDF/UA findings, at their elements in the editor (and still said below).
      const accessibility = rest.filter(isPdfUaFinding);
      if (accessibility.length > 0) void placeFindings(accessibility, run);
      if (refused) {
        setFindings({ rules: refused.rules, json: einvoiceDraft.source === 'json' ? einvoiceDraft.json : null });
        if (refused.rest.length > 0) setError(describeRefusal(new ApiError(422, { detail: refused.rest }), place));
      } else setError(describeRefusal(e, place));
      void refreshAccount().catch(() => undefined);
    } finally {
      if (alive.current) setBusy(false);
    }
  };

  return (
    <section class="panel run" id="run-section" aria-labelledby="run-title">
      <h2 id="run-title" tabIndex={-1}>
        Run
      </h2>
      <form onSubmit={generate} class="run-form">
        <VersionSelect versions={versions} chosen={chosen} onVersion={onVersion} />
        <fieldset class="radio-group">
          <legend class="field-label">Output</legend>
          {MODES.map((m) => (
            <label key={m.id} class="radio" title={m.help}>
              <input type="radio" name="run-mode" value={m.id} checked={mode === m.id} onChange={() => setMode(m.id)} />
              {m.label}
            </label>
          ))}
        </fieldset>
        <p class="help">
          {MODES.find((m) => m.id === mode)?.help} Costs 1 credit. Uses the data in the form and{' '}
          {chosen
            ? `the snapshot of ${from}`
            : templateDirty
              ? 'the draft as last saved: save first to run your unsaved changes'
              : 'the draft'}
          .
        </p>
        <label class="field">
          <span class="field-label">File name (optional, without .pdf)</span>
          <input
            value={filename}
            onInput={(e) => setFilename(e.currentTarget.value)}
            placeholder={defaultName}
            maxLength={100}
            aria-invalid={filenameInvalid || undefined}
            spellcheck={false}
          />
          {filenameInvalid && <span class="field-error">Letters, digits, underscore, hyphen and dot only.</span>}
        </label>
        {formTemplate && (
          <p class="help" data-testid="run-form-note">
            A fillable PDF form is filled and flattened (its values drawn into the pages). Not with a form: an
            accessible PDF (PDF/UA), tagging, PDF/A and an e-invoice — the service makes those from HTML templates only.
          </p>
        )}
        {!xmlOnly && !formTemplate && (
          <label class="field checkbox">
            <input
              type="checkbox"
              checked={pdfUa}
              onChange={(e) => setPdfUa(e.currentTarget.checked)}
              aria-describedby="run-pdfua-help"
              data-testid="run-pdf-ua"
            />
            <span class="field-label">Accessible PDF (PDF/UA)</span>
          </label>
        )}
        {!xmlOnly && !formTemplate && (
          <p class="help" id="run-pdfua-help">
            Checked before it is charged: the template needs a language (&lt;html lang&gt;), a &lt;title&gt; and a text
            (alt) on every image. Off: the template's own setting.
          </p>
        )}
        {inputsProblem && (
          <p class="notice notice-error" data-testid="run-inputs-problem">
            {inputsProblem}: fix the form before generating.
          </p>
        )}
        {refusedForMissing ? (
          <p class="notice notice-error" data-testid="run-required">
            Not generated while {missing.map((f) => f.label).join(', ')} {missing.length === 1 ? 'is' : 'are'} empty:
            the template is strict and requires {missing.length === 1 ? 'it' : 'them'} (marked in the form). Nothing is
            charged.
          </p>
        ) : (
          missing.length > 0 && (
            <p class="notice notice-warning" data-testid="run-required">
              Required fields without a value: {missing.map((f) => f.label).join(', ')}. The document prints blanks
              there, with a warning.
            </p>
          )
        )}
        {!formTemplate && (
          <EInvoiceSection
            draft={einvoiceDraft}
            onChange={setEInvoiceDraft}
            data={data}
            problem={einvoiceProblem}
            findings={findings?.json != null ? findings : null}
          />
        )}
        <FinishingSection
          draft={finishingDraft}
          onChange={setFinishingDraft}
          serviceTsa={serviceTsa}
          certificates={certificates.data}
          problem={finishingProblem}
        />
        <button
          type="submit"
          class="button button-primary"
          disabled={
            busy || filenameInvalid || !!inputsProblem || !!einvoiceProblem || refusedForMissing || !!finishingProblem
          }
        >
          {busy ? 'Generating…' : xmlOnly ? 'Generate XML' : 'Generate PDF'}
        </button>
      </form>
      {error && (
        <div class="notice notice-error" role="alert" data-testid="run-error">
          <p>Not generated. {nothingCharged(credits)}</p>
          <p>{error}</p>
        </div>
      )}
      {findings && (
        <EInvoiceFindings
          rules={findings.rules}
          credits={credits}
          fields={einvoiceDraft.source === 'data' ? fields : []}
          onShowField={onShowField}
          canShowField={einvoiceDraft.source === 'data' ? canShowField : () => false}
        />
      )}
      <div aria-live="polite" class="run-result" data-testid="run-result">
        {result?.kind === 'url' && (
          <p class="notice notice-success">
            Ready:{' '}
            <a href={result.url} target="_blank" rel="noopener" data-testid="result-link">
              {result.filename}
            </a>{' '}
            from {result.from} (link expires in {formatDuration(result.expiresIn)}).
          </p>
        )}
        {result?.kind === 'binary' && (
          <p class="notice notice-success">
            Downloaded{' '}
            <a href={result.url} download={result.filename} data-testid="result-link">
              {result.filename}
            </a>{' '}
            from {result.from} ({Math.round(result.bytes / 1024)} KB).
          </p>
        )}
        {result?.kind === 'job' && <JobResult job={result.job} />}
        {result?.einvoice && (result.kind !== 'job' || result.job.status === 'completed') && (
          <EInvoiceDelivered
            einvoice={result.einvoice}
            checks={result.kind === 'job' ? (result.job as Job).einvoice_checks : result.checks}
            ruleWarnings={ruleWarnings}
          />
        )}
        {otherWarnings.length > 0 && (
          <div class="notice notice-warning" data-testid="run-warnings">
            <p>Generated with {otherWarnings.length === 1 ? 'a warning' : `${otherWarnings.length} warnings`}:</p>
            <ul>
              {otherWarnings.map((w, i) => (
                <li key={i}>
                  <code>{w.code}</code> {w.message}
                  {w.url ? ` (${w.url})` : ''}
                </li>
              ))}
            </ul>
          </div>
        )}
      </div>
      <SnippetsView
        templateId={templateId}
        data={data}
        mode={mode}
        filename={sentName}
        version={chosen?.tag}
        einvoice={einvoice ?? undefined}
        finishing={forSnippet(finishing)}
      />
    </section>
  );
}

function JobResult({ job }: { job: Job | { id: string; status: Job['status'] } }) {
  const full = job as Job;
  return (
    <p
      class={`notice ${job.status === 'failed' ? 'notice-error' : job.status === 'completed' ? 'notice-success' : 'notice-info'}`}
    >
      Job <code>{job.id}</code>: <span class={`badge badge-${job.status}`}>{job.status}</span>
      {full.version !== undefined && <> from {jobVersionText(full.version)}</>}
      {full.result_url && (
        <>
          {' '}
          —{' '}
          <a href={full.result_url} target="_blank" rel="noopener" data-testid="result-link">
            {full.result_filename ?? 'download'}
          </a>
        </>
      )}
      {full.error_message && <> — {full.error_message}</>} <Link href={paths.jobs}>All jobs</Link>
    </p>
  );
}
