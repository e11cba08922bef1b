/**
 * The template's fields as the server inferred them (or as edited before), editable: label, type,
 * required, help text and, for array fields, the item spec. Saving PUTs `fields`; "Use inferred fields"
 * PUTs `fields: null` so they follow the template again.
 */
import { useEffect, useState } from 'preact/hooks';
import { FIELD_TYPES, SPEC_TYPES, type Field, type FieldSpec, type FieldType } from '../../lib/api-types.js';

interface Props {
  fields: Field[];
  inferred: boolean;
  saving: boolean;
  onSave(fields: Field[] | null): Promise<boolean>;
}

const normalise = (f: Field): Field => ({
  key: f.key,
  label: f.label,
  type: f.type ?? 'string',
  required: f.required ?? false,
  helpText: f.helpText ?? null,
  spec: f.spec ?? null,
});

function SpecEditor({ field, prefix, onChange }: { field: Field; prefix: string; onChange(spec: FieldSpec[]): void }) {
  const spec = field.spec ?? [];
  const set = (index: number, patch: Partial<FieldSpec>) =>
    onChange(spec.map((s, i) => (i === index ? { ...s, ...patch } : s)));
  return (
    <fieldset class="spec-editor">
      <legend class="field-label">Item attributes</legend>
      {spec.map((item, index) => (
        <div class="spec-row" key={index} role="group" aria-label={`Item attribute ${index + 1}`}>
          <label class="field">
            <span class="field-label">Name</span>
            <input
              id={`${prefix}-spec-${index}-name`}
              value={item.name}
              onInput={(e) => set(index, { name: e.currentTarget.value })}
              spellcheck={false}
            />
          </label>
          <label class="field">
            <span class="field-label">Label</span>
            <input value={item.label} onInput={(e) => set(index, { label: e.currentTarget.value })} />
          </label>
          <label class="field">
            <span class="field-label">Type</span>
            <select value={item.type ?? 'text'} onChange={(e) => set(index, { type: e.currentTarget.value })}>
              {SPEC_TYPES.map((t) => (
                <option key={t}>{t}</option>
              ))}
            </select>
          </label>
          <button
            type="button"
            class="button button-small button-danger-quiet"
            onClick={() => onChange(spec.filter((_, i) => i !== index))}
            aria-label={`Remove item attribute ${item.name || index + 1}`}
          >
            Remove
          </button>
        </div>
      ))}
      <button
        type="button"
        class="button button-small"
        onClick={() => onChange([...spec, { name: '', label: '', type: 'text' }])}
      >
        Add attribute
      </button>
    </fieldset>
  );
}

export function FieldsEditor({ fields, inferred, saving, onSave }: Props) {
  const [edited, setEdited] = useState<Field[]>(() => fields.map(normalise));
  const [status, setStatus] = useState<string | null>(null);
  const [dirty, setDirty] = useState(false);

  useEffect(() => {
    if (!dirty) setEdited(fields.map(normalise));
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [fields]);

  const change = (next: Field[]) => {
    setEdited(next);
    setDirty(true);
    setStatus(null);
  };
  /** The form shows the fields in this order (inference lists them in order of first use). */
  const move = (index: number, by: -1 | 1) => {
    const next = [...edited];
    const [moved] = next.splice(index, 1);
    next.splice(index + by, 0, moved!);
    change(next);
  };
  const set = (index: number, patch: Partial<Field>) =>
    change(edited.map((f, i) => (i === index ? { ...f, ...patch } : f)));
  const problems = edited
    .flatMap((f, i) => (f.key.trim() ? [] : [`Field ${i + 1} needs a key.`]))
    .concat(
      edited.flatMap((f) =>
        (f.spec ?? []).filter((s) => !s.name.trim()).map(() => `An item attribute of “${f.key}” needs a name.`),
      ),
    );

  const save = async (next: Field[] | null) => {
    if (await onSave(next)) {
      setDirty(false);
      setStatus(next === null ? 'Fields follow the template again.' : 'Fields saved.');
    }
  };

  return (
    <div class="fields-editor">
      <p class="help">
        {inferred
          ? 'Inferred from the template, in order of first use; they follow it on every save until you edit or reorder them here.'
          : 'Edited by hand: they stay as saved, in this order, until you go back to inference.'}{' '}
        The form lists the fields in this order.
      </p>
      {edited.map((field, index) => {
        const prefix = `field-${index}`;
        return (
          <fieldset class="field-card" key={index}>
            <legend>
              <code>{field.key || `field ${index + 1}`}</code>
            </legend>
            <div class="form-row">
              <label class="field">
                <span class="field-label">Key</span>
                <input
                  value={field.key}
                  onInput={(e) => set(index, { key: e.currentTarget.value })}
                  spellcheck={false}
                  aria-invalid={!field.key.trim() || undefined}
                />
              </label>
              <label class="field">
                <span class="field-label">Label</span>
                <input value={field.label} onInput={(e) => set(index, { label: e.currentTarget.value })} />
              </label>
              <label class="field">
                <span class="field-label">Type</span>
                <select value={field.type} onChange={(e) => set(index, { type: e.currentTarget.value as FieldType })}>
                  {FIELD_TYPES.map((t) => (
                    <option key={t}>{t}</option>
                  ))}
                </select>
              </label>
              <label class="check">
                <input
                  type="checkbox"
                  checked={field.required}
                  onChange={(e) => set(index, { required: e.currentTarget.checked })}
                />
                Required
              </label>
            </div>
            <label class="field">
              <span class="field-label">Help text</span>
              <input
                value={field.helpText ?? ''}
                onInput={(e) => set(index, { helpText: e.currentTarget.value || null })}
                placeholder="Example: …"
              />
            </label>
            {field.type === 'array' && (
              <SpecEditor field={field} prefix={prefix} onChange={(spec) => set(index, { spec })} />
            )}
            <div class="button-row">
              <button
                type="button"
                class="button button-small"
                disabled={index === 0}
                onClick={() => move(index, -1)}
                aria-label={`Move ${field.key || `field ${index + 1}`} up`}
              >
                Move up
              </button>
              <button
                type="button"
                class="button button-small"
                disabled={index === edited.length - 1}
                onClick={() => move(index, 1)}
                aria-label={`Move ${field.key || `field ${index + 1}`} down`}
              >
                Move down
              </button>
              <button
                type="button"
                class="button button-small button-danger-quiet"
                onClick={() => change(edited.filter((_, i) => i !== index))}
              >
                Remove field {field.key}
              </button>
            </div>
          </fieldset>
        );
      })}
      <div class="button-row">
        <button
          type="button"
          class="button button-small"
          onClick={() =>
            change([...edited, { key: '', label: '', type: 'string', required: false, helpText: null, spec: null }])
          }
        >
          Add field
        </button>
      </div>
      {problems.length > 0 && (
        <ul class="problems" aria-label="Field problems">
          {problems.map((p) => (
            <li key={p}>{p}</li>
          ))}
        </ul>
      )}
      <div class="button-row">
        <button
          type="button"
          class="button button-primary"
          disabled={saving || !dirty || problems.length > 0}
          onClick={() => save(edited.map((f) => ({ ...f, spec: f.type === 'array' ? f.spec : null })))}
        >
          Save fields
        </button>
        <button type="button" class="button" disabled={saving || (inferred && !dirty)} onClick={() => save(null)}>
          Use inferred fields
        </button>
        {status && (
          <span class="muted" role="status">
            {status}
          </span>
        )}
      </div>
    </div>
  );
}
