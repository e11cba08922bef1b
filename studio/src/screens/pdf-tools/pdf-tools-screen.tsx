/**
 * PDF tools: merge several PDFs, extract pages, rotate, and (issue 39) sign, verify, split, flatten,
 * watermark, set the document information, protect and unlock — on files dropped on the form or picked
 * from this computer (sent as `pdf_base64`), 1 credit each (verify is free and shows its report; split
 * downloads a zip of the parts). The result downloads at once, named after the
 * first file unless a name is typed, and stays linked; a refusal names the file, page or field it is
 * about as the form does, with the API's code (`pdf_invalid`, `page_out_of_range`, …) as a reference.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { describeRefusal } from '../../api/client.js';
import { api, refreshAccount, useSession } from '../../api/session.js';
import { useCapabilities } from '../../api/capabilities.js';
import { FILENAME, fileNameFrom } from '../../lib/format.js';
import { nothingCharged } from '../../lib/messages.js';
import { TabPanel, Tabs } from '../../components/tabs.js';
import { FileDrop } from '../../components/drop-zone.js';
import { useCertificates } from '../finishing/certificates-screen.js';
import type { SignatureReport } from '../finishing/finishing.js';
import { readAsDataUrl } from '../finishing/read-file.js';
import { INITIAL_OPTIONS, OPTION_PLACES, ToolOptions, toolFields, type Options } from './tool-options.js';
import { VerifyReport } from './verify-report.js';

type Tool =
  | 'merge'
  | 'extract'
  | 'rotate'
  | 'sign'
  | 'verify'
  | 'split'
  | 'flatten'
  | 'watermark'
  | 'metadata'
  | 'protect'
  | 'unlock';

const TOOLS: { id: Tool; label: string; path: string; help: string }[] = [
  {
    id: 'merge',
    label: 'Merge',
    path: '/v1/pdf-tools/merge',
    help: 'Two or more PDFs become one, their pages in the order listed.',
  },
  {
    id: 'extract',
    label: 'Extract pages',
    path: '/v1/pdf-tools/extract-pages',
    help: 'A new PDF of the pages named, in the order named ("3, 1-2" gives 3, 1, 2).',
  },
  {
    id: 'rotate',
    label: 'Rotate',
    path: '/v1/pdf-tools/rotate',
    help: 'Turns pages clockwise, adding to their current rotation.',
  },
  {
    id: 'sign',
    label: 'Sign',
    path: '/v1/pdf-tools/sign',
    help: 'Signs the PDF with one of your certificates (PAdES), as its last change.',
  },
  {
    id: 'verify',
    label: 'Verify',
    path: '/v1/pdf-tools/verify',
    help: 'Reports the signatures of a PDF: who signed, when, with a time-stamp or not, and whether it changed since. Free.',
  },
  {
    id: 'split',
    label: 'Split',
    path: '/v1/pdf-tools/split',
    help: 'Cuts the PDF into parts, downloaded as one zip: by ranges ("1-3, 4-", "4-" runs to the end) or every n pages.',
  },
  {
    id: 'flatten',
    label: 'Flatten',
    path: '/v1/pdf-tools/flatten',
    help: 'Draws form fields (with their values) and comments into the pages, so nothing can be filled in or edited any more.',
  },
  {
    id: 'watermark',
    label: 'Watermark',
    path: '/v1/pdf-tools/watermark',
    help: 'Draws a line of text across the pages, or the pages named.',
  },
  {
    id: 'metadata',
    label: 'Document info',
    path: '/v1/pdf-tools/metadata',
    help: 'Sets the title, author, subject and keywords PDF viewers and search tools show; entries left empty stay as they are.',
  },
  {
    id: 'protect',
    label: 'Protect',
    path: '/v1/pdf-tools/protect',
    help: 'Encrypts the PDF (AES-256): a password to open it, if you give one, and what readers may do without the owner password.',
  },
  {
    id: 'unlock',
    label: 'Unlock',
    path: '/v1/pdf-tools/unlock',
    help: 'The same PDF without its encryption, given its user or owner password.',
  },
];

const ANGLES = [90, 180, 270, 0] as const;
/** What each tool adds to the first file's name for the result: `report-merged.pdf`. */
const SUFFIX: Record<Tool, string> = {
  merge: 'merged',
  extract: 'pages',
  rotate: 'rotated',
  sign: 'signed',
  verify: 'verified',
  split: 'parts',
  flatten: 'flat',
  watermark: 'marked',
  metadata: 'info',
  protect: 'protected',
  unlock: 'unlocked',
};

const isPdf = (file: File) => file.type === 'application/pdf' || /\.pdf$/i.test(file.name);

/** "3: 90, 5: 180" → {"3": 90, "5": 180}; the angles the service takes are checked here too, the pages there. */
export function parsePageRotations(text: string): Record<string, number> | string {
  const out: Record<string, number> = {};
  for (const part of text
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean)) {
    const m = /^(\d+)\s*:\s*(-?\d+)$/.exec(part);
    if (!m) return `“${part}” is not page: angle (e.g. 3: 90).`;
    if (!(ANGLES as readonly number[]).includes(Number(m[2])))
      return `Page ${m[1]}: the angle must be 0, 90, 180 or 270.`;
    out[m[1]!] = Number(m[2]);
  }
  return Object.keys(out).length ? out : 'Name at least one page, e.g. 3: 90.';
}

export function PdfToolsScreen() {
  const [tool, setTool] = useState<Tool>('merge');
  const [files, setFiles] = useState<File[]>([]);
  const [pages, setPages] = useState('');
  const [rotateMode, setRotateMode] = useState<'all' | 'pages'>('all');
  const [angle, setAngle] = useState<number>(90);
  const [pageRotations, setPageRotations] = useState('');
  const [filename, setFilename] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [result, setResult] = useState<{ url: string; filename: string; bytes: number } | null>(null);
  const [skipped, setSkipped] = useState<string[]>([]);
  const [options, setOptions] = useState<Options>(INITIAL_OPTIONS);
  const [report, setReport] = useState<{ report: SignatureReport; file: string } | null>(null);
  const certificates = useCertificates();
  const serviceTsa = useCapabilities()?.signature_timestamps.service_authority ?? true;
  const credits = useSession().account?.credits ?? null;
  const blobUrl = useRef<string | null>(null);
  useEffect(
    () => () => {
      if (blobUrl.current) URL.revokeObjectURL(blobUrl.current);
    },
    [],
  );

  const current = TOOLS.find((t) => t.id === tool)!;
  const filenameInvalid = filename !== '' && !FILENAME.test(filename);
  const defaultName = files[0] ? fileNameFrom(`${files[0].name.replace(/\.pdf$/i, '')}-${SUFFIX[tool]}`) : 'document';

  /** Names a refused place as the form does: the file (and which one), a page, a field. */
  const place = (loc: readonly (string | number)[]): string | null => {
    const [first, second] = loc;
    if (first === 'pdfs' && typeof second === 'number')
      return `File ${second + 1}${files[second] ? ` (${files[second]!.name})` : ''}`;
    if (first === 'pdf_base64' || first === 'pdf_url') return files[0] ? `The file (${files[0].name})` : 'The file';
    if (first === 'page_rotations' && second !== undefined) return `Page ${second}`;
    if ((first === 'watermark' || first === 'metadata' || first === 'protect') && second !== undefined)
      return `${OPTION_PLACES[first]} › ${loc.slice(1).join(' › ')}`;
    return (
      (
        {
          pages: 'Pages',
          rotation: 'Angle',
          page_rotations: 'Page rotations',
          filename: 'File name',
          pdfs: 'Files',
          ...OPTION_PLACES,
        } as Record<string, string>
      )[String(first)] ?? null
    );
  };
  const enoughFiles = tool === 'merge' ? files.length >= 2 : files.length === 1;

  const choose = (tab: Tool) => {
    setTool(tab);
    setFiles([]);
    setError(null);
    setResult(null);
    setSkipped([]);
    setReport(null);
  };

  /** Picked or dropped: PDFs are added (one for extract and rotate); anything else is named, not sent. */
  const addFiles = (all: File[]) => {
    const picked = all.filter(isPdf);
    setSkipped(all.filter((f) => !isPdf(f)).map((f) => f.name));
    if (picked.length) setFiles((prev) => (tool === 'merge' ? [...prev, ...picked] : picked.slice(0, 1)));
    setResult(null);
    setReport(null);
    setError(null);
  };

  const move = (index: number, by: -1 | 1) =>
    setFiles((prev) => {
      const next = [...prev];
      const [item] = next.splice(index, 1);
      next.splice(index + by, 0, item!);
      return next;
    });

  const run = async (event: Event) => {
    event.preventDefault();
    if (!enoughFiles || filenameInvalid) return;
    setError(null);
    setResult(null);
    setReport(null);
    let body: Record<string, unknown> = { export_type: 'binary', filename: filename || defaultName };
    if (tool === 'rotate' && rotateMode === 'pages') {
      const parsed = parsePageRotations(pageRotations);
      if (typeof parsed === 'string') return setError(parsed);
      body = { ...body, page_rotations: parsed };
    }
    const own = toolFields(tool, options, serviceTsa);
    if (typeof own === 'string') return setError(own);
    setBusy(true);
    try {
      const inputs = await Promise.all(files.map(async (f) => ({ pdf_base64: await readAsDataUrl(f) })));
      if (tool === 'verify') {
        setReport({
          report: await api().json<SignatureReport>('POST', current.path, { body: inputs[0] }),
          file: files[0]!.name,
        });
        return;
      }
      if (tool === 'merge') body = { ...body, pdfs: inputs };
      else
        body = {
          ...body,
          ...inputs[0],
          ...own,
          ...(tool === 'extract' ? { pages } : tool === 'rotate' && rotateMode === 'all' ? { rotation: angle } : {}),
        };
      const response = await api().raw('POST', current.path, { body });
      // Split answers a zip of its parts.
      const zip = tool === 'split';
      const blob = new Blob([await response.blob()], { type: zip ? 'application/zip' : 'application/pdf' });
      if (blobUrl.current) URL.revokeObjectURL(blobUrl.current);
      blobUrl.current = URL.createObjectURL(blob);
      const name = `${filename || defaultName}.${zip ? 'zip' : 'pdf'}`;
      setResult({ url: blobUrl.current, filename: name, bytes: blob.size });
      const a = document.createElement('a');
      a.href = blobUrl.current;
      a.download = name;
      a.click();
    } catch (e) {
      setError(describeRefusal(e, place));
    } finally {
      setBusy(false);
      void refreshAccount().catch(() => undefined);
    }
  };

  return (
    <main class="screen" id="main">
      <div class="screen-head">
        <h1 tabIndex={-1}>PDF tools</h1>
      </div>
      <p class="help">
        Work on PDFs you already have. Each run costs 1 credit; a refused file costs nothing. The files go to this
        Pressroom only.
      </p>
      <Tabs<Tool>
        idPrefix="pdf-tool"
        label="PDF tool"
        selected={tool}
        onSelect={choose}
        tabs={TOOLS.map((t) => ({ id: t.id, label: t.label }))}
      />
      {TOOLS.map((t) => (
        <TabPanel key={t.id} idPrefix="pdf-tool" id={t.id} selected={tool === t.id}>
          {tool === t.id && (
            <form class="card tool-form" onSubmit={run}>
              <p class="help">{t.help}</p>
              <FileDrop
                id={`pdf-input-${t.id}`}
                label={t.id === 'merge' ? 'Add PDFs' : 'PDF'}
                accept="application/pdf,.pdf"
                multiple={t.id === 'merge'}
                testId="pdf-drop"
                onFiles={addFiles}
                prompt={
                  t.id === 'merge'
                    ? 'Drop PDFs here, or'
                    : files.length
                      ? 'Drop another PDF here to replace it, or'
                      : 'Drop a PDF here, or'
                }
                button={
                  t.id === 'merge'
                    ? files.length
                      ? 'Add more PDFs…'
                      : 'Choose PDFs…'
                    : files.length
                      ? 'Choose another PDF…'
                      : 'Choose a PDF…'
                }
              />
              {skipped.length > 0 && (
                <p class="notice notice-warning" role="status">
                  Not added, not a PDF: {skipped.join(', ')}.
                </p>
              )}
              {files.length > 0 && (
                <ol class="file-list" aria-label="Chosen files">
                  {files.map((f, i) => (
                    <li key={`${i}-${f.name}`}>
                      <span>
                        {f.name} <span class="muted">({Math.max(1, Math.round(f.size / 1024))} KB)</span>
                      </span>
                      {t.id === 'merge' && (
                        <span class="row-actions">
                          <button
                            type="button"
                            class="button button-small"
                            disabled={i === 0}
                            onClick={() => move(i, -1)}
                            aria-label={`Move ${f.name} up`}
                          >
                            ↑
                          </button>
                          <button
                            type="button"
                            class="button button-small"
                            disabled={i === files.length - 1}
                            onClick={() => move(i, 1)}
                            aria-label={`Move ${f.name} down`}
                          >
                            ↓
                          </button>
                        </span>
                      )}
                      <button
                        type="button"
                        class="button button-small button-danger-quiet"
                        onClick={() => setFiles((prev) => prev.filter((_, j) => j !== i))}
                        aria-label={`Remove ${f.name}`}
                      >
                        Remove
                      </button>
                    </li>
                  ))}
                </ol>
              )}
              <ToolOptions
                tool={t.id}
                options={options}
                set={(key, value) => setOptions((prev) => ({ ...prev, [key]: value }))}
                certificates={certificates.data}
                serviceTsa={serviceTsa}
              />
              {t.id === 'extract' && (
                <label class="field">
                  <span class="field-label">Pages</span>
                  <input
                    value={pages}
                    onInput={(e) => setPages(e.currentTarget.value)}
                    placeholder="1-3, 5"
                    required
                    spellcheck={false}
                  />
                </label>
              )}
              {t.id === 'rotate' && (
                <>
                  <fieldset class="radio-group">
                    <legend class="field-label">Turn</legend>
                    <label class="radio">
                      <input
                        type="radio"
                        name="rotate-mode"
                        checked={rotateMode === 'all'}
                        onChange={() => setRotateMode('all')}
                      />
                      Every page
                    </label>
                    <label class="radio">
                      <input
                        type="radio"
                        name="rotate-mode"
                        checked={rotateMode === 'pages'}
                        onChange={() => setRotateMode('pages')}
                      />
                      Some pages
                    </label>
                  </fieldset>
                  {rotateMode === 'all' ? (
                    <label class="field">
                      <span class="field-label">Angle (clockwise)</span>
                      <select value={String(angle)} onChange={(e) => setAngle(Number(e.currentTarget.value))}>
                        {ANGLES.map((a) => (
                          <option key={a} value={String(a)}>
                            {a}°
                          </option>
                        ))}
                      </select>
                    </label>
                  ) : (
                    <label class="field">
                      <span class="field-label">Page rotations (page: angle)</span>
                      <input
                        value={pageRotations}
                        onInput={(e) => setPageRotations(e.currentTarget.value)}
                        placeholder="1: 90, 3: 180"
                        spellcheck={false}
                      />
                    </label>
                  )}
                </>
              )}
              {t.id !== 'verify' && (
                <label class="field">
                  <span class="field-label">File name (optional, without .{t.id === 'split' ? 'zip' : 'pdf'})</span>
                  <input
                    value={filename}
                    onInput={(e) => setFilename(e.currentTarget.value)}
                    placeholder={defaultName}
                    maxLength={100}
                    aria-invalid={filenameInvalid || undefined}
                    spellcheck={false}
                  />
                  {filenameInvalid && (
                    <span class="field-error">Letters, digits, underscore, hyphen and dot only.</span>
                  )}
                </label>
              )}
              <button type="submit" class="button button-primary" disabled={busy || !enoughFiles || filenameInvalid}>
                {busy ? 'Working…' : t.id === 'verify' ? 'Verify (free)' : `${t.label} (1 credit)`}
              </button>
              {!enoughFiles && <p class="muted">{t.id === 'merge' ? 'Add at least two PDFs.' : 'Choose a PDF.'}</p>}
            </form>
          )}
        </TabPanel>
      ))}
      {error && (
        <div class="notice notice-error" role="alert" data-testid="tool-error">
          <p>Not done. {nothingCharged(credits)}</p>
          <p>{error}</p>
        </div>
      )}
      <div aria-live="polite" data-testid="tool-result">
        {report && <VerifyReport report={report.report} file={report.file} />}
        {result && (
          <p class="notice notice-success">
            Done:{' '}
            <a href={result.url} download={result.filename} data-testid="tool-result-link">
              {result.filename}
            </a>{' '}
            ({Math.max(1, Math.round(result.bytes / 1024))} KB).
          </p>
        )}
      </div>
    </main>
  );
}
