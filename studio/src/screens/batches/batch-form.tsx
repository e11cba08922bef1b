/**
 * A new batch: a template and its version (the draft, or a published version sent as `version`), a CSV
 * dropped or chosen, each column sent to a field of what the batch renders, the file name column or
 * nowhere (matched by name, changeable), the required fields no column gives shown before start, a
 * preview of row 1, the output, and Start. The rows go up as the CSV re-written with the chosen names
 * (`rows`, multipart); a 422 is told by row and column as the file has them, and nothing was charged.
 * Start fires once: the button is disabled while starting, the request carries an Idempotency-Key made
 * for the form as it is (a repeat of the same request replays the batch it started, never charges again;
 * any change makes a new key), and a started form shows its batch until "New batch" resets it.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, describeRefusal } from '../../api/client.js';
import { api, refreshAccount, setCredits, useSession } from '../../api/session.js';
import type {
  BatchAccepted,
  BatchOutput,
  Field,
  TemplateSummary,
  TemplateVersion,
  TemplateVersionContent,
  ValidationIssue,
} from '../../lib/api-types.js';
import {
  FILENAME_COLUMN,
  IGNORE,
  STUDIO_CSV_MAX_BYTES,
  doubledTargets,
  matchColumns,
  readCsv,
  rewriteCsv,
  rowData,
  unmatchedRequired,
  uploadPlace,
  type CsvTable,
} from '../../lib/csv-rows.js';
import { FILENAME } from '../../lib/format.js';
import { describeIssue, nothingCharged } from '../../lib/messages.js';
import { DropZone } from '../../components/drop-zone.js';
import { ErrorNotice } from '../../components/notice.js';
import { useLoad } from '../../components/use-load.js';
import { VersionSelect } from '../../components/version-select.js';
import { RowPreview, useRowPreview } from './row-preview.js';

const OUTPUTS: { id: BatchOutput; label: string; help: string }[] = [
  { id: 'zip', label: 'One zip', help: 'every PDF in one zip file' },
  { id: 'merged', label: 'One merged PDF', help: 'every document in one PDF, a bookmark each (at most 2,000 rows)' },
  { id: 'links', label: 'A link per document', help: 'each PDF on its own' },
];

/** 32 random hex digits (crypto.randomUUID needs a secure context; a studio on http://<LAN address> is not one). */
const newIdempotencyKey = () =>
  Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, '0')).join('');

const isCsv = (file: File) => /\.csv$/i.test(file.name) || file.type === 'text/csv';
const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

export function BatchForm({ onStarted }: { onStarted(batchId: string): void }) {
  const [templateId, setTemplateId] = useState('');
  const [version, setVersion] = useState<number | null>(null);
  const [table, setTable] = useState<CsvTable | null>(null);
  const [fileProblem, setFileProblem] = useState<string | null>(null);
  const [targets, setTargets] = useState<string[]>([]);
  const [output, setOutput] = useState<BatchOutput>('zip');
  const [filename, setFilename] = useState('');
  const [busy, setBusy] = useState(false);
  const [refusal, setRefusal] = useState<{ summary: string; lines: string[] } | null>(null);
  /** The batch this form started: the form is disarmed until the user asks for a new one. */
  const [started, setStarted] = useState<{ batchId: string; rows: number; file: string } | null>(null);
  // Set at once (not on the next render) so a second click in the same moment finds it.
  const starting = useRef(false);
  // The Idempotency-Key of the form as it is now; any change of what Start would send makes a new one.
  const idempotencyKey = useRef<string | null>(null);
  const credits = useSession().account?.credits ?? null;
  const fileInput = useRef<HTMLInputElement>(null);
  const preview = useRowPreview();

  const templates = useLoad(
    async () =>
      (await api().json<{ templates: TemplateSummary[] }>('GET', '/v1/templates', { query: { kind: 'pdf' } }))
        .templates,
    [],
  );
  const templatePath = `/v1/templates/${encodeURIComponent(templateId)}`;
  const versions = useLoad(
    async () =>
      templateId ? (await api().json<{ versions: TemplateVersion[] }>('GET', `${templatePath}/versions`)).versions : [],
    [templateId],
  );
  // A version no longer listed is not offered: the batch falls back to the draft, as Run does.
  const chosen = versions.data?.find((v) => v.version_number === version);
  // The rows are checked against the fields of what the batch renders: the draft's, or the version's own.
  const fields = useLoad(
    async () =>
      !templateId
        ? []
        : chosen
          ? (await api().json<TemplateVersionContent>('GET', `${templatePath}/versions/${chosen.version_number}`))
              .fields
          : api().json<Field[]>('GET', `${templatePath}/fields`),
    [templateId, chosen?.version_number],
  );
  const fieldList = templateId && fields.data ? fields.data : [];
  // The fields as they are when a file has been read: reading it is awaited, and the fields may have
  // arrived meanwhile (a stale list would leave every column ignored, and Start disabled).
  const currentFields = useRef(fieldList);
  currentFields.current = fieldList;

  /** A new file takes its columns' matches in the same render: a column picked at once is not overwritten later. */
  const takeTable = (next: CsvTable | null) => {
    setTable(next);
    setTargets(next ? matchColumns(next.header, currentFields.current) : []);
    setRefusal(null);
    preview.close();
  };
  // A new template or version: the columns are matched again by name, and an old preview or refusal no longer applies.
  useEffect(() => {
    setTargets(table ? matchColumns(table.header, fieldList) : []);
    setRefusal(null);
    preview.close();
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [fields.data, templateId]);

  const addFiles = async (list: FileList | File[] | null) => {
    const file = [...(list ?? [])][0];
    if (fileInput.current) fileInput.current.value = '';
    if (!file) return;
    takeTable(null);
    if (!isCsv(file))
      return setFileProblem(
        `${file.name} is not a CSV file (.csv). Export the spreadsheet as CSV, or send NDJSON with the API.`,
      );
    if (file.size > STUDIO_CSV_MAX_BYTES)
      return setFileProblem(
        `${file.name} is larger than the studio reads (20 MiB). Run it with \`pressroom generate\` or upload it to POST /v1/pdf/batches (up to 100 MiB).`,
      );
    const read = await readCsv(file.name, await file.text());
    if (typeof read === 'string') return setFileProblem(read);
    setFileProblem(null);
    takeTable(read);
  };

  const missing = unmatchedRequired(targets, fieldList);
  const doubled = doubledTargets(targets);
  const nothingKept = targets.every((t) => t === IGNORE);
  const filenameInvalid = filename !== '' && !FILENAME.test(filename);
  const rows = table?.rows.length ?? 0;
  const ready =
    !!templateId &&
    fields.data !== undefined &&
    !fields.loading &&
    !!table &&
    targets.length > 0 &&
    missing.length === 0 &&
    doubled.length === 0 &&
    !nothingKept &&
    !filenameInvalid;
  const labelOf = (key: string) =>
    key === FILENAME_COLUMN ? 'File name' : (fieldList.find((f) => f.key === key)?.label ?? key);
  const row1 = table ? rowData(table, targets, fieldList, 0) : null;

  useEffect(() => {
    idempotencyKey.current = null;
  }, [templateId, chosen?.version_number, table, targets, output, filename]);

  /** A deliberate new batch: the file goes (template, version and output stay, for the next file). */
  const reset = () => {
    setStarted(null);
    takeTable(null);
    setFilename('');
    setRefusal(null);
    setFileProblem(null);
  };

  const start = async (event: Event) => {
    event.preventDefault();
    if (!ready || !table || busy || started || starting.current) return;
    starting.current = true;
    setBusy(true);
    setRefusal(null);
    const upload = rewriteCsv(table, targets);
    const place = uploadPlace(table, targets, upload, fieldList);
    try {
      const form = new FormData();
      // The service reads the fields before the file: the rows part goes last.
      form.set('template_id', templateId);
      form.set('output', output);
      if (chosen) form.set('version', String(chosen.version_number));
      if (filename && output !== 'links') form.set('filename', filename);
      form.set(
        'rows',
        new File([upload.text], /\.csv$/i.test(table.name) ? table.name : `${table.name}.csv`, { type: 'text/csv' }),
      );
      idempotencyKey.current ??= newIdempotencyKey();
      const accepted = await api().json<BatchAccepted>('POST', '/v1/pdf/batches', {
        body: form,
        headers: { 'idempotency-key': idempotencyKey.current },
      });
      setCredits(accepted.credits_remaining);
      preview.close();
      setStarted({ batchId: accepted.batch_id, rows: table.rows.length, file: table.name });
      onStarted(accepted.batch_id);
    } catch (error) {
      const detail =
        error instanceof ApiError && error.status === 422
          ? ((error.body as { detail?: unknown } | null)?.detail as ValidationIssue[] | undefined)
          : undefined;
      setRefusal(
        Array.isArray(detail)
          ? {
              summary: `Not started: ${plural(detail.length, 'problem')} in the rows.`,
              lines: detail.map((issue) => describeIssue(issue, place)),
            }
          : { summary: 'Not started.', lines: [describeRefusal(error, place)] },
      );
      void refreshAccount().catch(() => undefined);
    } finally {
      starting.current = false;
      setBusy(false);
    }
  };

  if (started) {
    return (
      <section class="card batch-form" aria-labelledby="new-batch-title" data-testid="batch-started">
        <h2 id="new-batch-title">Batch started</h2>
        <p>
          {plural(started.rows, 'document')} from {started.file} {started.rows === 1 ? 'is' : 'are'} being made; the
          batch's progress is on this page. To make more, start a new batch: this form does not send the same file
          twice.
        </p>
        <button type="button" class="button" onClick={reset}>
          New batch
        </button>
      </section>
    );
  }

  return (
    <form class="card batch-form" onSubmit={start} aria-labelledby="new-batch-title">
      <h2 id="new-batch-title">New batch</h2>
      <label class="field" for="batch-template">
        <span class="field-label">Template</span>
        <select
          id="batch-template"
          value={templateId}
          onChange={(e) => {
            setTemplateId(e.currentTarget.value);
            setVersion(null);
          }}
        >
          <option value="">{templates.data ? 'Choose a template…' : 'Loading…'}</option>
          {templates.data?.map((t) => (
            <option key={t.id} value={t.id}>
              {t.name}
            </option>
          ))}
        </select>
      </label>
      {templateId && (
        <VersionSelect
          id="batch-version"
          label="Version"
          versions={versions.data ?? []}
          chosen={chosen}
          onVersion={setVersion}
        />
      )}
      <ErrorNotice>{templates.error?.message ?? versions.error?.message ?? fields.error?.message}</ErrorNotice>
      <DropZone class="file-drop" testId="csv-drop" onFiles={(files) => void addFiles(files)}>
        <p>
          {table
            ? 'Drop another CSV here to replace it, or'
            : 'Drop a CSV file here (a header row naming the columns, a row per document), or'}
        </p>
        <label for="batch-csv-input" class="visually-hidden">
          CSV file
        </label>
        <input
          id="batch-csv-input"
          ref={fileInput}
          class="visually-hidden"
          type="file"
          accept=".csv,text/csv"
          onChange={(e) => void addFiles(e.currentTarget.files)}
        />
        <button type="button" class="button" onClick={() => fileInput.current?.click()}>
          {table ? 'Choose another CSV…' : 'Choose a CSV…'}
        </button>
      </DropZone>
      <ErrorNotice>{fileProblem}</ErrorNotice>
      {table && (
        <p class="muted" data-testid="csv-summary">
          {table.name}: {plural(rows, 'row')}, {plural(table.header.length, 'column')}
          {table.delimiter === ';' ? ' (separated by semicolons)' : ''}.
        </p>
      )}
      {table && !templateId && <p class="muted">Choose a template to match the columns to its fields.</p>}
      {table && templateId && fields.data && (
        <>
          <div class="table-scroll">
            <table class="table column-table" data-testid="column-table">
              <caption class="visually-hidden">Columns of {table.name} and the fields they fill</caption>
              <thead>
                <tr>
                  <th scope="col">Column</th>
                  <th scope="col">Row 1</th>
                  <th scope="col">Fills</th>
                </tr>
              </thead>
              <tbody>
                {table.header.map((name, i) => (
                  <tr key={`${i}-${name}`} data-column={name}>
                    <th scope="row">{name || <span class="muted">(no name)</span>}</th>
                    <td class="cell-sample">{(table.rows[0]?.[i] ?? '').slice(0, 200)}</td>
                    <td>
                      <select
                        aria-label={`Column “${name}” fills`}
                        value={targets[i] ?? IGNORE}
                        onChange={(e) => {
                          const value = e.currentTarget.value;
                          setTargets((prev) => prev.map((t, j) => (j === i ? value : t)));
                          setRefusal(null);
                        }}
                      >
                        <option value={IGNORE}>Ignore this column</option>
                        {fieldList.map((f) => (
                          <option key={f.key} value={f.key}>
                            {f.label} ({f.key}){f.required ? ', required' : ''}
                          </option>
                        ))}
                        <option value={FILENAME_COLUMN}>File name of each document</option>
                      </select>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          {missing.length > 0 && (
            <p class="notice notice-warning" role="status" data-testid="unmatched-required">
              Required {missing.length === 1 ? 'field' : 'fields'} no column fills:{' '}
              {missing.map((f) => `${f.label} (${f.key})`).join(', ')}. Choose a column for{' '}
              {missing.length === 1 ? 'it' : 'each'}: every row would be refused without.
            </p>
          )}
          {doubled.length > 0 && (
            <p class="notice notice-error" role="alert">
              Two columns fill {doubled.map(labelOf).join(', ')}: choose one.
            </p>
          )}
          {nothingKept && <p class="notice notice-warning">Every column is ignored: choose what at least one fills.</p>}
          {row1 && row1.faults.length > 0 && (
            <p class="notice notice-warning">Row 1 will be refused: {row1.faults.join('; ')}.</p>
          )}
          <div class="button-row">
            <button
              type="button"
              class="button"
              disabled={missing.length > 0 || nothingKept || !row1}
              onClick={() => row1 && void preview.show(templateId, row1.data, chosen?.version_number)}
            >
              Preview row 1 (free)
            </button>
          </div>
          {preview.state && <RowPreview state={preview.state} onClose={preview.close} />}
        </>
      )}
      <fieldset class="radio-group">
        <legend class="field-label">Output</legend>
        {OUTPUTS.map((o) => (
          <label key={o.id} class="radio">
            <input type="radio" name="batch-output" checked={output === o.id} onChange={() => setOutput(o.id)} />
            {o.label} <span class="muted">({o.help})</span>
          </label>
        ))}
      </fieldset>
      {output !== 'links' && (
        <label class="field">
          <span class="field-label">File name (optional, without .{output === 'zip' ? 'zip' : 'pdf'})</span>
          <input
            value={filename}
            onInput={(e) => setFilename(e.currentTarget.value)}
            placeholder="batch-<id>"
            maxLength={100}
            aria-invalid={filenameInvalid || undefined}
            spellcheck={false}
          />
          {filenameInvalid && <span class="field-error">Letters, digits, underscore, hyphen and dot only.</span>}
        </label>
      )}
      <button type="submit" class="button button-primary" disabled={!ready || busy}>
        {busy ? 'Starting…' : table ? `Start ${plural(rows, 'document')} (${plural(rows, 'credit')})` : 'Start'}
      </button>
      {refusal && (
        <div class="notice notice-error" role="alert" data-testid="batch-refusal">
          <p>
            {refusal.summary} {nothingCharged(credits)}
          </p>
          <ul>
            {refusal.lines.map((line, i) => (
              <li key={i}>{line}</li>
            ))}
          </ul>
        </div>
      )}
    </form>
  );
}
