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
  // null: not chosen yet, which means the latest version (compared with the draft).
  const [from, setFrom] = useState<Side | null>(null);
  const [to, setTo] = useState<Side>(DRAFT);
  const snapshots = useRef(new Map<number, TemplateVersionContent>());
  const [loaded, setLoaded] = useState(0);
  const [error, setError] = useState<string | null>(null);

  // A side whose version was deleted falls back: "from" to the latest version, "to" to the draft.
  const known = (side: Side) => side === DRAFT || versions.some((v) => String(v.version_number) === side);
  const latest = versions.at(-1);
  const shownFrom = from !== null && known(from) ? from : latest ? String(latest.version_number) : DRAFT;
  const shownTo = known(to) ? to : DRAFT;

  useEffect(() => {
    const missing = [shownFrom, shownTo]
      .filter((side) => side !== DRAFT && !snapshots.current.has(Number(side)))
      .map(Number);
    if (missing.length === 0) return;
    let alive = true;
    setError(null);
    Promise.all(
      missing.map((n) =>
        api().json<TemplateVersionContent>('GET', `/v1/templates/${encodeURIComponent(templateId)}/versions/${n}`),
      ),
    )
      .then((found) => {
        for (const v of found) snapshots.current.set(v.version_number, v);
        if (alive) setLoaded((n) => n + 1);
      })
      .catch((e: Error) => alive && setError(e.message));
    return () => {
      alive = false;
    };
  }, [shownFrom, shownTo, templateId]);

  const snapshotOf = (side: Side): TemplateSnapshot | undefined =>
    side === DRAFT ? draft : snapshots.current.get(Number(side));
  const fromSnapshot = snapshotOf(shownFrom);
  const toSnapshot = snapshotOf(shownTo);
  const parts = useMemo(
    () => (fromSnapshot && toSnapshot ? diffTemplates(fromSnapshot, toSnapshot) : null),
    [fromSnapshot, toSnapshot, loaded],
  );

  if (versions.length === 0)
    return <p class="help">Publish a version to compare it with the draft or with later versions.</p>;

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
        <div class="field">
          <label class="field-label" for="diff-from">
            From
          </label>
          <select id="diff-from" value={shownFrom} onChange={(e) => setFrom(e.currentTarget.value)}>
            {options}
          </select>
        </div>
        <div class="field">
          <label class="field-label" for="diff-to">
            To
          </label>
          <select id="diff-to" value={shownTo} onChange={(e) => setTo(e.currentTarget.value)}>
            {options}
          </select>
        </div>
      </div>
      <ErrorNotice>{error}</ErrorNotice>
      <div aria-live="polite" data-testid="version-diff">
        {!parts && !error && <p class="muted">Loading the versions…</p>}
        {parts && parts.length === 0 && <p class="muted">No differences: both print the same template.</p>}
        {parts?.map((part) => (
          <PartDiffView key={part.part} diff={part} />
        ))}
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
      <pre
        class="diff"
        tabIndex={0}
        role="region"
        aria-label={`${diff.label} changes`}
        data-testid={`diff-${diff.part}`}
      >
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
