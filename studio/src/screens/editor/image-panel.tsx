/**
 * Image output (image templates): the template's layers (`GET /v1/templates/{id}/layers`) with the
 * modifications to apply to each — text, image URL, colour, background, hidden — and a render through
 * `POST /v1/image/create` (1 credit) in the format, width and quality chosen, shown here and downloadable.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { describeRefusal } from '../../api/client.js';
import { api, refreshAccount, setCredits, useSession } from '../../api/session.js';
import { nothingCharged } from '../../lib/messages.js';
import type { Canvas, ImageFormat, Modification, TemplateLayer, TemplateVersion } from '../../lib/api-types.js';
import { FILENAME, fileNameFrom } from '../../lib/format.js';
import type { DataObject } from '../../lib/form-data.js';
import { ErrorNotice, StatusNotice } from '../../components/notice.js';
import { useLoad } from '../../components/use-load.js';
import { describeSource } from './run-panel.js';
import { VersionSelect } from '../../components/version-select.js';
import { useResetOnChange } from '../../lib/use-reset-on-change.js';

type Edits = Record<string, Omit<Modification, 'name'>>;

const FORMATS: { id: ImageFormat; label: string; extension: string }[] = [
  { id: 'png', label: 'PNG', extension: 'png' },
  { id: 'jpeg', label: 'JPEG', extension: 'jpg' },
  { id: 'webp', label: 'WebP', extension: 'webp' },
];

const TEXT_FIELDS: { key: 'text' | 'image_url' | 'color' | 'background'; label: string; placeholder: string }[] = [
  { key: 'text', label: 'Text', placeholder: 'New text' },
  { key: 'image_url', label: 'Image URL', placeholder: 'https://…' },
  { key: 'color', label: 'Colour', placeholder: '#rrggbb' },
  { key: 'background', label: 'Background', placeholder: '#rrggbb' },
];

/** The modifications the edits ask for: only layers with something set, only fields with a value. */
export function modificationsOf(edits: Edits): Modification[] {
  const out: Modification[] = [];
  for (const [name, edit] of Object.entries(edits)) {
    const m: Modification = { name };
    for (const { key } of TEXT_FIELDS) if (edit[key]?.trim()) m[key] = edit[key]!.trim();
    if (edit.hidden) m.hidden = true;
    if (Object.keys(m).length > 1) out.push(m);
  }
  return out;
}

interface ImagePanelProps {
  templateId: string;
  canvas: Canvas | null;
  data: DataObject;
  templateDirty: boolean;
  /** Changes when the template is saved: the layers are read from the saved template. */
  revision: string;
  versions: TemplateVersion[];
  version: number | null;
  onVersion(version: number | null): void;
  /** Names the image when no file name is typed. */
  templateName: string;
}

/** The request fields as the panel labels them, for a refusal. */
const PLACES: Record<string, string> = {
  width: 'Width',
  quality: 'Quality',
  filename: 'File name',
  format: 'Format',
  modifications: 'Layers',
};

export function ImagePanel({
  templateId,
  canvas,
  data,
  templateDirty,
  revision,
  versions,
  version,
  onVersion,
  templateName,
}: ImagePanelProps) {
  const layers = useLoad(
    async () =>
      await api().json<{ layers: TemplateLayer[]; warnings?: string[] }>(
        'GET',
        `/v1/templates/${encodeURIComponent(templateId)}/layers`,
      ),
    [templateId, revision],
  );
  const [edits, setEdits] = useState<Edits>({});
  const [format, setFormat] = useState<ImageFormat>('png');
  const [width, setWidth] = useState(String(Math.min(4000, Math.max(100, canvas?.width ?? 1080))));
  const [quality, setQuality] = useState('85');
  const [filename, setFilename] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [result, setResult] = useState<{
    url: string;
    filename: string;
    bytes: number;
    type: string;
    warnings: string[];
    from: string;
    number: number;
  } | null>(null);
  const renders = useRef(0);
  const [pixels, setPixels] = useState<{ width: number; height: number } | null>(null);
  const blobUrl = useRef<string | null>(null);
  useEffect(
    () => () => {
      if (blobUrl.current) URL.revokeObjectURL(blobUrl.current);
    },
    [],
  );

  const chosen = versions.find((v) => v.version_number === version);
  const from = describeSource(chosen);
  const widthNumber = Number(width);
  const widthInvalid = !Number.isInteger(widthNumber) || widthNumber < 100 || widthNumber > 4000;
  const qualityNumber = Number(quality);
  const qualityInvalid =
    format !== 'png' && (!Number.isInteger(qualityNumber) || qualityNumber < 1 || qualityNumber > 100);
  const filenameInvalid = filename !== '' && !FILENAME.test(filename);
  const defaultName = fileNameFrom(templateName);
  const credits = useSession().account?.credits ?? null;

  useResetOnChange(JSON.stringify([edits, format, width, quality, filename, version]), () => {
    setResult(null);
    setError(null);
  });

  const edit = (layer: string, patch: Omit<Modification, 'name'>) =>
    setEdits((all) => ({ ...all, [layer]: { ...all[layer], ...patch } }));

  const render = async (event: Event) => {
    event.preventDefault();
    if (widthInvalid || qualityInvalid || filenameInvalid) return;
    setBusy(true);
    setError(null);
    setPixels(null);
    const modifications = modificationsOf(edits);
    const body = {
      template_id: templateId,
      data,
      format,
      width: widthNumber,
      ...(format !== 'png' ? { quality: qualityNumber } : {}),
      ...(modifications.length ? { modifications } : {}),
      filename: filename || defaultName,
      ...(chosen ? { version: chosen.tag } : {}),
      export_type: 'binary',
    };
    try {
      const response = await api().raw('POST', '/v1/image/create', { body });
      const type = response.headers.get('content-type') ?? `image/${format}`;
      const blob = new Blob([await response.blob()], { type });
      const credits = Number(response.headers.get('x-credits-remaining'));
      if (response.headers.get('x-credits-remaining') && Number.isFinite(credits)) setCredits(credits);
      let warnings: string[] = [];
      try {
        warnings = JSON.parse(response.headers.get('x-warnings') ?? '[]') as string[];
      } catch {
        warnings = [];
      }
      if (blobUrl.current) URL.revokeObjectURL(blobUrl.current);
      blobUrl.current = URL.createObjectURL(blob);
      const extension = FORMATS.find((f) => f.id === format)!.extension;
      setResult({
        url: blobUrl.current,
        filename: `${filename || defaultName}.${extension}`,
        bytes: blob.size,
        type,
        warnings,
        from,
        number: ++renders.current,
      });
    } catch (e) {
      setError(
        describeRefusal(e, (loc) =>
          loc[0] === 'modifications' && typeof loc[1] === 'number'
            ? `Layer change ${loc[1] + 1}`
            : (PLACES[String(loc[0])] ?? null),
        ),
      );
      void refreshAccount().catch(() => undefined);
    } finally {
      setBusy(false);
    }
  };

  return (
    <section class="panel run" id="run-section" aria-labelledby="image-title">
      <h2 id="image-title" tabIndex={-1}>
        Render image
      </h2>
      <h3>Layers</h3>
      <ErrorNotice>{layers.error?.message}</ErrorNotice>
      {templateDirty && (
        <p class="help">Layers are read from the draft as last saved: save to see your unsaved changes.</p>
      )}
      {layers.data &&
        layers.data.warnings?.map((w) => (
          <StatusNotice key={w} tone="warning">
            {w}
          </StatusNotice>
        ))}
      {layers.data && (
        <div class="table-scroll">
          <table class="table responsive-table layer-table" data-testid="layers">
            <caption class="visually-hidden">Layers and their modifications</caption>
            <thead>
              <tr>
                <th scope="col">Layer</th>
                <th scope="col">Type</th>
                {TEXT_FIELDS.map((f) => (
                  <th scope="col" key={f.key}>
                    {f.label}
                  </th>
                ))}
                <th scope="col">Hidden</th>
              </tr>
            </thead>
            <tbody>
              {layers.data.layers.map((layer) => (
                <tr key={layer.name} data-layer-row={layer.name}>
                  <th scope="row" data-label="Layer">
                    <code>{layer.name}</code> <span class="muted">&lt;{layer.tag}&gt;</span>
                  </th>
                  <td data-label="Type">{layer.type}</td>
                  {TEXT_FIELDS.map((f) => (
                    <td key={f.key} data-label={f.label}>
                      {layer.modifiable.includes(f.key) ? (
                        <input
                          aria-label={`${f.label} of ${layer.name}`}
                          value={edits[layer.name]?.[f.key] ?? ''}
                          placeholder={f.key === 'text' && layer.current_text ? layer.current_text : f.placeholder}
                          onInput={(e) => edit(layer.name, { [f.key]: e.currentTarget.value })}
                          maxLength={2000}
                          spellcheck={false}
                        />
                      ) : (
                        <span class="muted">—</span>
                      )}
                    </td>
                  ))}
                  <td data-label="Hidden">
                    {layer.modifiable.includes('hidden') ? (
                      <input
                        type="checkbox"
                        aria-label={`Hide ${layer.name}`}
                        checked={!!edits[layer.name]?.hidden}
                        onChange={(e) => edit(layer.name, { hidden: e.currentTarget.checked })}
                      />
                    ) : (
                      <span class="muted">—</span>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <form onSubmit={render} class="run-form">
        <VersionSelect versions={versions} chosen={chosen} onVersion={onVersion} />
        <div class="form-row">
          <div class="field">
            <label class="field-label" for="image-format">
              Format
            </label>
            <select id="image-format" value={format} onChange={(e) => setFormat(e.currentTarget.value as ImageFormat)}>
              {FORMATS.map((f) => (
                <option key={f.id} value={f.id}>
                  {f.label}
                </option>
              ))}
            </select>
          </div>
          <label class="field">
            <span class="field-label">Width (px)</span>
            <input
              type="number"
              min={100}
              max={4000}
              value={width}
              onInput={(e) => setWidth(e.currentTarget.value)}
              aria-invalid={widthInvalid || undefined}
            />
          </label>
          {format !== 'png' && (
            <label class="field">
              <span class="field-label">Quality</span>
              <input
                type="number"
                min={1}
                max={100}
                value={quality}
                onInput={(e) => setQuality(e.currentTarget.value)}
                aria-invalid={qualityInvalid || undefined}
              />
            </label>
          )}
        </div>
        {widthInvalid && <span class="field-error">Width is a whole number of pixels from 100 to 4000.</span>}
        {qualityInvalid && <span class="field-error">Quality is a whole number from 1 to 100.</span>}
        <label class="field">
          <span class="field-label">File name (optional, without extension)</span>
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
        <p class="help">
          Costs 1 credit. Uses the data in the form, the modifications above and{' '}
          {chosen
            ? `the snapshot of ${from}`
            : templateDirty
              ? 'the draft as last saved: save first to render your unsaved changes'
              : 'the draft'}
          . The live preview shows the canvas as a stamped page; this is the image itself.
        </p>
        <button
          type="submit"
          class="button button-primary"
          disabled={busy || widthInvalid || qualityInvalid || filenameInvalid}
        >
          {busy ? 'Rendering…' : 'Render image'}
        </button>
      </form>
      {error && (
        <div class="notice notice-error" role="alert" data-testid="image-error">
          <p>Not rendered. {nothingCharged(credits)}</p>
          <p>{error}</p>
        </div>
      )}
      <div aria-live="polite" data-testid="image-result">
        {result && (
          <>
            <p class="notice notice-success">
              Rendered{' '}
              <a
                href={result.url}
                download={result.filename}
                data-testid="image-result-link"
                data-render={result.number}
              >
                {result.filename}
              </a>{' '}
              from {result.from} ({result.type}, {Math.max(1, Math.round(result.bytes / 1024))} KB
              {pixels ? `, ${pixels.width} × ${pixels.height} px` : ''}).
            </p>
            {result.warnings.map((w) => (
              <StatusNotice key={w} tone="warning">
                {w}
              </StatusNotice>
            ))}
            <img
              class="image-result"
              src={result.url}
              alt="The result, as rendered"
              onLoad={(e) => setPixels({ width: e.currentTarget.naturalWidth, height: e.currentTarget.naturalHeight })}
            />
          </>
        )}
      </div>
    </section>
  );
}
