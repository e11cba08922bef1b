/**
 * Compare: what changed between two versions, or a version and the draft in the editor, as a plain line
 * diff per part. Versions never change, so each snapshot is fetched once
 * (`GET /v1/templates/{id}/versions/{n}`) and kept for the life of the editor.
 */
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { api } from '../../api/session.js';
import type { TemplateVersion, TemplateVersionContent } from '../../lib/api-types.js';
import { withContext } from '../../lib/line-diff.js';
import { diffTemplates, type PartDiff, type TemplateSnapshot } from '../../lib/template-diff.js';
import { ErrorNotice } from '../../components/notice.js';

/** 'draft' or a version number as text (the select's value). */
type Side = string;
const DRAFT: Side = 'draft';

interface Props {
  templateId: string;
  versions: TemplateVersion[];
  /** The template as it is in the editor now (unsaved edits included). */
  draft: TemplateSnapshot;
}

export function VersionDiff({ templateId, versions, draft }: Props) {
  const latest = versions.at(-1);
  const [from, setFrom] = useState<Side>(latest ? String(latest.version_number) : DRAFT);
  const [to, setTo] = useState<Side>(DRAFT);
  const snapshots = useRef(new Map<number, TemplateVersionContent>());
  const [loaded, setLoaded] = useState(0);
  const [error, setError] = useState<string | null>(null);

  // A side whose version was deleted falls back to the latest version (or the draft).
  const known = (side: Side) => side === DRAFT || versions.some((v) => String(v.version_number) === side);
  // Draft against draft (before the list arrived) becomes the latest version against the draft.
  useEffect(() => {
    if (!known(from) || (from === DRAFT && to === DRAFT)) setFrom(latest ? String(latest.version_number) : DRAFT);
    if (!known(to)) setTo(DRAFT);
  }, [versions]);

  useEffect(() => {
    const missing = [from, to].filter((side) => side !== DRAFT && known(side) && !snapshots.current.has(Number(side))).map(Number);
    if (missing.length === 0) return;
    let alive = true;
    setError(null);
    Promise.all(missing.map((n) => api().json<TemplateVersionContent>('GET', `/v1/templates/${encodeURIComponent(templateId)}/versions/${n}`)))
      .then((found) => {
        for (const v of found) snapshots.current.set(v.version_number, v);
        if (alive) setLoaded((n) => n + 1);
      })
      .catch((e: Error) => alive && setError(e.message));
    return () => {
      alive = false;
    };
  }, [from, to, templateId, versions]);

  const snapshotOf = (side: Side): TemplateSnapshot | undefined => (side === DRAFT ? draft : snapshots.current.get(Number(side)));
  const fromSnapshot = snapshotOf(from);
  const toSnapshot = snapshotOf(to);
  const parts = useMemo(() => (fromSnapshot && toSnapshot ? diffTemplates(fromSnapshot, toSnapshot) : null), [fromSnapshot, toSnapshot, loaded]);

  if (versions.length === 0) return <p class="help">Publish a version to compare it with the draft or with later versions.</p>;

  const options = [
    ...versions.map((v) => (
      <option key={v.version_number} value={String(v.version_number)}>
        Version {v.version_number} · {v.tag}
      </option>
    )),
    <option key={DRAFT} value={DRAFT}>
      Draft (in the editor)
    </option>,
  ];
  return (
    <section class="version-diff" aria-labelledby="version-diff-title">
      <h3 id="version-diff-title">Compare</h3>
      <div class="form-row">
        <label class="field">
          <span class="field-label">From</span>
          <select value={from} onChange={(e) => setFrom(e.currentTarget.value)}>
            {options}
          </select>
        </label>
        <label class="field">
          <span class="field-label">To</span>
          <select value={to} onChange={(e) => setTo(e.currentTarget.value)}>
            {options}
          </select>
        </label>
      </div>
      <ErrorNotice>{error}</ErrorNotice>
      <div aria-live="polite" data-testid="version-diff">
        {!parts && !error && <p class="muted">Loading the versions…</p>}
        {parts && parts.length === 0 && <p class="muted">No differences: both print the same template.</p>}
        {parts?.map((part) => <PartDiffView key={part.part} diff={part} />)}
      </div>
    </section>
  );
}

const MARK = { same: ' ', added: '+', removed: '−' } as const;

function PartDiffView({ diff }: { diff: PartDiff }) {
  return (
    <div class="diff-part">
      <h4>
        {diff.label}{' '}
        <span class="muted">
          ({diff.added} added, {diff.removed} removed)
        </span>
      </h4>
      <pre class="diff" tabIndex={0} aria-label={`${diff.label} changes`} data-testid={`diff-${diff.part}`}>
        {withContext(diff.lines).map((line, i) =>
          line.op === 'skip' ? (
            <span key={i} class="diff-line diff-skip">
              ⋯ {line.count} unchanged line{line.count === 1 ? '' : 's'}
            </span>
          ) : (
            <span key={i} class={`diff-line diff-${line.op}`}>
              {MARK[line.op]} {line.text}
            </span>
          ),
        )}
      </pre>
    </div>
  );
}
