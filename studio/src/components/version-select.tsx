/** The template version picker of Run, Render image and a new batch: the saved draft or one of its published versions. */
import type { TemplateVersion } from '../lib/api-types.js';

interface VersionSelectProps {
  versions: TemplateVersion[];
  /** The chosen version, or undefined for the draft. */
  chosen: TemplateVersion | undefined;
  onVersion(version: number | null): void;
  /** The select's id (default `run-template`). */
  id?: string;
  /** Its label (default "Template"; "Version" beside a screen's own template picker). */
  label?: string;
}

export function VersionSelect({
  versions,
  chosen,
  onVersion,
  id = 'run-template',
  label = 'Template',
}: VersionSelectProps) {
  return (
    <div class="field">
      <label class="field-label" for={id}>
        {label}
      </label>
      <select
        id={id}
        value={chosen ? String(chosen.version_number) : ''}
        onChange={(e) => onVersion(e.currentTarget.value === '' ? null : Number(e.currentTarget.value))}
      >
        <option value="">The draft</option>
        {versions.map((v) => (
          <option key={v.version_number} value={String(v.version_number)}>
            Version {v.version_number} · {v.tag}
          </option>
        ))}
      </select>
    </div>
  );
}
