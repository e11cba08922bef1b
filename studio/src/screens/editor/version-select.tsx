/** The "Template" picker of the Run and Render image panels: the saved draft or one of its versions. */
import type { TemplateVersion } from '../../lib/api-types.js';

interface VersionSelectProps {
  versions: TemplateVersion[];
  /** The chosen version, or undefined for the draft. */
  chosen: TemplateVersion | undefined;
  onVersion(version: number | null): void;
}

export function VersionSelect({ versions, chosen, onVersion }: VersionSelectProps) {
  return (
    <div class="field">
      <label class="field-label" for="run-template">
        Template
      </label>
      <select id="run-template" value={chosen ? String(chosen.version_number) : ''} onChange={(e) => onVersion(e.currentTarget.value === '' ? null : Number(e.currentTarget.value))}>
        <option value="">Draft (saved template)</option>
        {versions.map((v) => (
          <option key={v.version_number} value={String(v.version_number)}>
            Version {v.version_number} · {v.tag}
          </option>
        ))}
      </select>
    </div>
  );
}
