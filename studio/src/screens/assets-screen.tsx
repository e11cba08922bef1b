/**
 * Assets: the account's logos, fonts and stylesheets (issue 13). Upload by dropping files on the page
 * or choosing them (POST /v1/assets, multipart), see each as a thumbnail (images) or a sample line set
 * in it (fonts, loaded with FontFace from the bytes fetched with the API key), copy the
 * `{{ asset('…') }}` snippet a template uses, see which templates and versions use it, and delete
 * (confirmed). A file under a name the account has asks first: its drafts change, its published
 * versions keep the file they were published with (issue 50).
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { api } from '../api/session.js';
import { ApiError } from '../api/client.js';
import type { AssetInfo } from '../lib/api-types.js';
import {
  assetKind,
  assetNameFor,
  assetTypeWords,
  assetPath,
  assetSnippet,
  assetUsageExample,
  assetUseText,
  formatBytes,
  replaceQuestion,
} from '../lib/assets.js';
import { formatTime } from '../lib/format.js';
import { chooseAction, confirmAction } from '../components/confirm-dialog.js';
import { Link, paths } from '../router.js';
import { CopyButton } from '../components/copy-button.js';
import { DropZone } from '../components/drop-zone.js';
import { ErrorNotice } from '../components/notice.js';
import { useLoad } from '../components/use-load.js';

type UploadOutcome =
  | { file: string; name: string; ok: true; replaced: boolean }
  | { file: string; name: string; ok: false; message: string }
  | { file: string; name: string; ok: null };

/** The bytes of one asset as a blob: URL (fetched with the API key; an <img src> could not send it). */
function useAssetBlob(asset: AssetInfo): { url: string | null; bytes: ArrayBuffer | null; failed: boolean } {
  const [state, setState] = useState<{ url: string | null; bytes: ArrayBuffer | null; failed: boolean }>({
    url: null,
    bytes: null,
    failed: false,
  });
  useEffect(() => {
    let url: string | null = null;
    let alive = true;
    void (async () => {
      try {
        // By revision: the bytes whatever the client's Accept says (the name alone with JSON first describes it).
        const response = await api().raw(
          'GET',
          assetPath(asset.name),
          asset.revision === undefined ? {} : { query: { revision: asset.revision } },
        );
        const bytes = await response.arrayBuffer();
        if (!alive) return;
        url = URL.createObjectURL(new Blob([bytes], { type: asset.content_type }));
        setState({ url, bytes, failed: false });
      } catch {
        if (alive) setState({ url: null, bytes: null, failed: true });
      }
    })();
    return () => {
      alive = false;
      if (url) URL.revokeObjectURL(url);
    };
  }, [asset.name, asset.sha256, asset.revision]);
  return state;
}

/** A sample line set in the uploaded font itself. */
function FontSample({ asset, bytes }: { asset: AssetInfo; bytes: ArrayBuffer }) {
  const family = `pressroom-asset-${asset.sha256.slice(0, 16)}`;
  const [status, setStatus] = useState<'loading' | 'ready' | 'failed'>('loading');
  useEffect(() => {
    const face = new FontFace(family, bytes);
    let alive = true;
    face
      .load()
      .then(() => {
        document.fonts.add(face);
        if (alive) setStatus('ready');
      })
      .catch(() => alive && setStatus('failed'));
    return () => {
      alive = false;
      document.fonts.delete(face);
    };
  }, [family, bytes]);
  if (status === 'failed') return <p class="muted">This font could not be loaded for a preview.</p>;
  return (
    <p
      class="asset-font-sample"
      style={{ fontFamily: `"${family}", sans-serif` }}
      data-testid="font-sample"
      data-font-status={status}
    >
      Invoice 1.234,56 € — The quick brown fox
    </p>
  );
}

function AssetPreview({ asset }: { asset: AssetInfo }) {
  const kind = assetKind(asset.content_type);
  const blob = useAssetBlob(asset);
  if (blob.failed) return <div class="asset-thumb muted">Preview unavailable</div>;
  if (kind === 'image')
    return (
      <div class="asset-thumb">
        {blob.url ? <img src={blob.url} alt={`Thumbnail of ${asset.name}`} /> : <span class="muted">Loading…</span>}
      </div>
    );
  if (kind === 'font')
    return (
      <div class="asset-thumb">
        {blob.bytes ? <FontSample asset={asset} bytes={blob.bytes} /> : <span class="muted">Loading…</span>}
      </div>
    );
  return <div class="asset-thumb muted">{assetTypeWords(asset.content_type)}</div>;
}

function AssetCard({ asset, onDeleted }: { asset: AssetInfo; onDeleted(name: string): void }) {
  const [error, setError] = useState<string | null>(null);
  const snippet = assetSnippet(asset.name);
  const pinned = (asset.used_by ?? []).flatMap((u) => u.versions.map((v) => `${u.template_name} ${v.tag}`));
  const remove = async () => {
    if (pinned.length > 0) {
      // The service refuses it (ASSET_IN_USE): say so before, in the dialog, with what to do.
      await chooseAction({
        title: `${asset.name} is in use`,
        message: `Published versions print it: ${pinned.join(', ')}. A version keeps the files it was published with, so delete those versions first.`,
        choices: [],
        cancelLabel: 'Close',
      });
      return;
    }
    const ok = await confirmAction({
      title: 'Delete asset?',
      message: `${asset.name} will be gone; templates that use it print without it (and say so in their warnings).`,
      confirmLabel: 'Delete asset',
      danger: true,
    });
    if (!ok) return;
    try {
      await api().json('DELETE', assetPath(asset.name));
      onDeleted(asset.name);
    } catch (e) {
      setError((e as Error).message);
    }
  };
  return (
    <li class="asset-card" data-testid="asset-card" data-asset-name={asset.name} aria-label={asset.name}>
      <AssetPreview asset={asset} />
      <span class="asset-name">{asset.name}</span>
      <span class="muted">
        {assetTypeWords(asset.content_type)} · {formatBytes(asset.size)} · {formatTime(asset.updated_at)}
        {asset.revision !== undefined && asset.revision > 1 && ` · revision ${asset.revision}`}
      </span>
      <UsedBy asset={asset} />
      <code class="asset-snippet" data-testid="asset-snippet">
        {snippet}
      </code>
      <div class="asset-actions">
        <CopyButton text={snippet} label="Copy snippet" />
        {assetUsageExample(asset) && (
          <CopyButton
            text={assetUsageExample(asset)!}
            label={assetKind(asset.content_type) === 'font' ? 'Copy @font-face' : 'Copy <img>'}
          />
        )}
        <button
          type="button"
          class="button button-small button-danger-quiet"
          onClick={remove}
          aria-label={`Delete ${asset.name}`}
        >
          Delete
        </button>
      </div>
      <ErrorNotice>{error}</ErrorNotice>
    </li>
  );
}

/** Where the name is used: each template's draft and the versions that print a revision of it. */
function UsedBy({ asset }: { asset: AssetInfo }) {
  if (!asset.used_by) return null;
  if (asset.used_by.length === 0)
    return (
      <p class="muted asset-used-by" data-testid="asset-used-by">
        Not used by any template.
      </p>
    );
  return (
    <div class="asset-used-by" data-testid="asset-used-by">
      <span>Used by</span>
      <ul>
        {asset.used_by.map((user) => (
          <li key={user.template_id}>
            <Link href={paths.editor(user.template_id)}>{user.template_name}</Link>: {assetUseText(user)}
          </li>
        ))}
      </ul>
    </div>
  );
}

/** Asks before a file goes under a name the account has; true to upload. */
async function mayReplace(existing: AssetInfo | undefined): Promise<boolean> {
  if (!existing) return true;
  return confirmAction({ ...replaceQuestion(existing), confirmLabel: 'Replace' });
}

export function AssetsScreen() {
  const list = useLoad(async () => (await api().json<{ assets: AssetInfo[] }>('GET', '/v1/assets')).assets, []);
  const [uploading, setUploading] = useState(false);
  const [outcomes, setOutcomes] = useState<UploadOutcome[]>([]);
  const picker = useRef<HTMLInputElement>(null);
  const unsupported = list.error instanceof ApiError && list.error.status === 404;

  const upload = async (files: File[]) => {
    if (files.length === 0) return;
    setUploading(true);
    const results: UploadOutcome[] = [];
    for (const file of files) {
      const name = assetNameFor(file.name);
      if (!(await mayReplace(list.data?.find((a) => a.name === name)))) {
        results.push({ file: file.name, name, ok: null });
        continue;
      }
      const form = new FormData();
      form.append('name', name);
      form.append('file', file, file.name);
      try {
        const stored = await api().json<AssetInfo>('POST', '/v1/assets', { body: form });
        results.push({ file: file.name, name, ok: true, replaced: stored.replaced === true });
      } catch (e) {
        results.push({ file: file.name, name, ok: false, message: (e as Error).message });
      }
    }
    setOutcomes(results);
    setUploading(false);
    await list.reload();
  };

  return (
    <main class="screen" id="main">
      <div class="screen-head">
        <h1 tabIndex={-1}>Assets</h1>
      </div>
      <p class="help">
        Logos, images (PNG, JPEG, GIF, WebP, SVG), fonts (WOFF2, WOFF, TTF, OTF) and stylesheets for your templates. Use
        one with <code>{"{{ asset('name') }}"}</code> in the HTML, CSS, header or footer; only your account's documents
        can reach it. Uploading a name again replaces the file for drafts; published versions keep printing the file
        they were published with. No credits.
      </p>
      {unsupported ? (
        <p class="notice notice-warning">This server has no asset library (GET /v1/assets answered 404).</p>
      ) : (
        <DropZone testId="asset-drop" onFiles={(files) => void upload(files)}>
          <p>{uploading ? 'Uploading…' : 'Drop files here to upload them'}</p>
          <input
            ref={picker}
            id="asset-files"
            type="file"
            multiple
            class="visually-hidden"
            accept="image/png,image/jpeg,image/gif,image/webp,image/svg+xml,.woff2,.woff,.ttf,.otf,.css"
            onChange={(e) => {
              const files = [...(e.currentTarget.files ?? [])];
              e.currentTarget.value = '';
              void upload(files);
            }}
          />
          <button type="button" class="button" disabled={uploading} onClick={() => picker.current?.click()}>
            Choose files…
          </button>
          <label for="asset-files" class="visually-hidden">
            Upload assets
          </label>
        </DropZone>
      )}
      {outcomes.length > 0 && (
        <div
          class={`notice ${outcomes.every((o) => o.ok !== false) ? 'notice-success' : 'notice-error'}`}
          role="status"
          data-testid="upload-result"
        >
          <ul>
            {outcomes.map((o) => (
              <li key={o.file}>
                {o.ok === null
                  ? `${o.file} was not uploaded: you kept the current ${o.name}.`
                  : o.ok
                    ? o.replaced
                      ? `Uploaded ${o.file}: it replaces ${o.name} in drafts.`
                      : `Uploaded ${o.file} as ${o.name}.`
                    : `${o.file} was not uploaded: ${o.message}`}
              </li>
            ))}
          </ul>
        </div>
      )}
      {!unsupported && <ErrorNotice>{list.error?.message}</ErrorNotice>}
      {list.data && list.data.length === 0 && <p class="empty">No assets yet. Drop a logo or a font above.</p>}
      {list.data && list.data.length > 0 && (
        <ul class="asset-grid" aria-label="Assets">
          {list.data.map((asset) => (
            <AssetCard
              key={asset.name}
              asset={asset}
              onDeleted={(name) => list.setData(list.data!.filter((a) => a.name !== name))}
            />
          ))}
        </ul>
      )}
    </main>
  );
}
