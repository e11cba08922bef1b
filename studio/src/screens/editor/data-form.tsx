/**
 * The input form generated from the template's fields — the one a no-code tool builds from
 * GET /v1/templates/{id}/fields: text, number and checkbox inputs, a list of its options for a form's
 * choice field, and repeatable rows for array fields.
 * It edits the sample data in place (dotted keys become nested objects).
 */
import { createContext } from 'preact';
import { useContext, useEffect, useLayoutEffect, useState } from 'preact/hooks';
import type { Field, FieldSpec } from '../../lib/api-types.js';
import { isFilledByEInvoice } from '../../lib/einvoice/einvoice.js';
import {
  checkNumberInput,
  emptyRow,
  inputText,
  itemInputText,
  parseItemInput,
  parseNumberInput,
  readField,
  readRows,
  writeField,
  type DataObject,
} from '../../lib/form-data.js';
import {
  fieldInputId,
  rowInputId,
  rowLabel as rowLabelOf,
  type FieldMark,
  type FieldMarks,
} from '../../lib/field-marks.js';

interface Props {
  fields: readonly Field[];
  data: DataObject;
  onChange(data: DataObject): void;
  /** An input's text is refused (`label`) or fine again (null); the editor holds preview, save and run meanwhile. */
  onInputValidity?(id: string, label: string | null): void;
  /** What to show at an input (by id): a required field without a value, a refusal of Run. */
  marks?: FieldMarks;
}

const InputValidity = createContext<(id: string, label: string | null) => void>(() => undefined);
const Marks = createContext<FieldMarks>(new Map());

const fieldId = fieldInputId;
const NO_MARKS: readonly FieldMark[] = [];

/** The marks of input `id`, the id of their text (for aria-describedby), and whether one is an error. */
function useMarks(id: string): { marks: readonly FieldMark[]; markId: string | undefined; invalid: boolean } {
  const marks = useContext(Marks).get(id) ?? NO_MARKS;
  return { marks, markId: marks.length ? `${id}-marks` : undefined, invalid: marks.some((m) => m.tone === 'error') };
}

/** The messages marked at one input (or row). */
function MarkText({ id, marks }: { id: string; marks: readonly FieldMark[] }) {
  if (marks.length === 0) return null;
  return (
    <span id={`${id}-marks`} class="field-marks" data-testid="field-mark">
      {marks.map((m, i) => (
        <span key={i} class={m.tone === 'error' ? 'field-error' : 'field-warning'}>
          {m.message}
        </span>
      ))}
    </span>
  );
}

const describedBy = (...ids: (string | undefined)[]) => ids.filter(Boolean).join(' ') || undefined;

/**
 * A number input that keeps what is being typed ("1.", "-") while the data holds the parsed number.
 * Text that is not a number of the field's type is refused with a message (and a one-click fix when a
 * locale spelling has one reading); the data keeps its last good value and the editor is told.
 */
function NumberInput({
  id,
  value,
  integer,
  label,
  onValue,
  marked = false,
  ...rest
}: {
  id: string;
  value: unknown;
  integer: boolean;
  label: string;
  onValue(v: number | undefined): void;
  marked?: boolean;
  required?: boolean;
  'aria-describedby'?: string;
  'aria-label'?: string;
}) {
  const [text, setText] = useState(inputText(value));
  const report = useContext(InputValidity);
  // A layout effect, so a late run with an older value cannot overwrite what is being typed.
  useLayoutEffect(() => {
    if (parseNumberInput(text, integer) !== (typeof value === 'number' ? value : undefined)) setText(inputText(value));
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [value]);
  const checked = checkNumberInput(text, integer);
  useEffect(() => {
    report(id, checked.ok ? null : label);
  }, [id, label, checked.ok, report]);
  useEffect(() => () => report(id, null), [id, report]);
  const take = (next: string) => {
    setText(next);
    const result = checkNumberInput(next, integer);
    if (result.ok) onValue(result.value);
  };
  const errorId = `${id}-error`;
  return (
    <>
      <input
        {...rest}
        id={id}
        type="text"
        inputMode={integer ? 'numeric' : 'decimal'}
        value={text}
        aria-invalid={!checked.ok || marked || undefined}
        aria-describedby={checked.ok ? rest['aria-describedby'] : errorId}
        onInput={(e) => take(e.currentTarget.value)}
      />
      {!checked.ok && (
        <span class="field-error" id={errorId} role="alert">
          {checked.message}.
          {checked.suggestion !== undefined && (
            <>
              {' '}
              <button type="button" class="button button-small" onClick={() => take(checked.suggestion!)}>
                Use {checked.suggestion}
              </button>
            </>
          )}
        </span>
      )}
    </>
  );
}

function ScalarInput({ field, data, onChange }: { field: Field; data: DataObject; onChange(d: DataObject): void }) {
  const id = fieldId(field.key);
  const value = readField(data, field.key);
  const helpId = field.helpText ? `${id}-help` : undefined;
  const { marks, markId, invalid } = useMarks(id);
  const set = (v: unknown) => onChange(writeField(data, field.key, v));
  if (field.type === 'boolean') {
    return (
      <div class="field field-check">
        <label class="check">
          <input
            type="checkbox"
            id={id}
            checked={value === true}
            onChange={(e) => set(e.currentTarget.checked)}
            aria-describedby={describedBy(markId, helpId)}
            aria-invalid={invalid || undefined}
          />
          {field.label}
        </label>
        <MarkText id={id} marks={marks} />
        {field.helpText && (
          <span class="help" id={helpId}>
            {field.helpText}
          </span>
        )}
      </div>
    );
  }
  return (
    <div class="field">
      <label class="field-label" for={id}>
        {field.label}
        {field.required && (
          <span aria-hidden="true" class="required-mark">
            {' '}
            *
          </span>
        )}
      </label>
      {field.type === 'number' || field.type === 'integer' ? (
        <NumberInput
          id={id}
          value={value}
          integer={field.type === 'integer'}
          label={field.label}
          onValue={set}
          required={field.required}
          aria-describedby={describedBy(markId, helpId)}
          marked={invalid}
        />
      ) : field.options?.length ? (
        // A form's choice field (radio group, dropdown): only its options, or nothing.
        <select
          id={id}
          value={typeof value === 'string' ? value : ''}
          onChange={(e) => set(e.currentTarget.value === '' ? undefined : e.currentTarget.value)}
          required={field.required}
          aria-describedby={describedBy(markId, helpId)}
          aria-invalid={invalid || undefined}
        >
          <option value="">—</option>
          {field.options.map((option) => (
            <option key={option} value={option}>
              {option}
            </option>
          ))}
          {typeof value === 'string' && value !== '' && !field.options.includes(value) && (
            <option value={value}>{value}</option>
          )}
        </select>
      ) : (
        <input
          id={id}
          type="text"
          value={inputText(value)}
          onInput={(e) => set(e.currentTarget.value)}
          required={field.required}
          aria-describedby={describedBy(markId, helpId)}
          aria-invalid={invalid || undefined}
        />
      )}
      <MarkText id={id} marks={marks} />
      {field.helpText && (
        <span class="help" id={helpId}>
          {field.helpText}
        </span>
      )}
      <span class="field-key">
        <code>{field.key}</code>
      </span>
    </div>
  );
}

function ItemInput({
  item,
  value,
  rowLabel,
  id,
  onValue,
}: {
  item: FieldSpec;
  value: unknown;
  rowLabel: string;
  id: string;
  onValue(v: unknown): void;
}) {
  const label = `${item.label || item.name}`;
  const { marks, markId, invalid } = useMarks(id);
  if (item.type === 'boolean') {
    return (
      <div class="field field-check">
        <label class="check">
          <input
            type="checkbox"
            id={id}
            checked={value === true}
            onChange={(e) => onValue(e.currentTarget.checked)}
            aria-label={`${label} (${rowLabel})`}
            aria-describedby={markId}
            aria-invalid={invalid || undefined}
          />
          {label}
        </label>
        <MarkText id={id} marks={marks} />
      </div>
    );
  }
  return (
    <div class="field">
      <label class="field-label" for={id}>
        {label}
        <span class="visually-hidden"> ({rowLabel})</span>
      </label>
      {item.type === 'number' ? (
        <NumberInput
          id={id}
          value={value}
          integer={false}
          label={`${label} (${rowLabel})`}
          onValue={onValue}
          aria-describedby={markId}
          marked={invalid}
        />
      ) : (
        <input
          id={id}
          type="text"
          value={itemInputText(item, value)}
          onInput={(e) => onValue(parseItemInput(item, e.currentTarget.value))}
          placeholder={item.type === 'array' ? 'comma, separated' : undefined}
          aria-describedby={markId}
          aria-invalid={invalid || undefined}
        />
      )}
      <MarkText id={id} marks={marks} />
    </div>
  );
}

function ArrayInput({ field, data, onChange }: { field: Field; data: DataObject; onChange(d: DataObject): void }) {
  const rows = readRows(data, field);
  const id = fieldId(field.key);
  const setRows = (next: unknown[]) => onChange(writeField(data, field.key, next));
  const setRow = (index: number, row: unknown) => setRows(rows.map((r, i) => (i === index ? row : r)));
  const spec = field.spec ?? [];
  const { marks, markId } = useMarks(id);
  const rowMarks = useContext(Marks);
  return (
    <fieldset
      class="array-field"
      id={id}
      tabIndex={-1}
      aria-describedby={describedBy(markId, field.helpText ? `${id}-help` : undefined)}
    >
      <legend class="field-label">
        {field.label}
        {field.required && (
          <span aria-hidden="true" class="required-mark">
            {' '}
            *
          </span>
        )}{' '}
        <span class="muted">
          ({rows.length} {rows.length === 1 ? 'row' : 'rows'})
        </span>
      </legend>
      <MarkText id={id} marks={marks} />
      {field.helpText && (
        <span class="help" id={`${id}-help`}>
          {field.helpText}
        </span>
      )}
      {rows.map((row, index) => {
        const rowLabel = rowLabelOf(field, index);
        const ownMarks = spec.length ? (rowMarks.get(rowInputId(field.key, index)) ?? NO_MARKS) : NO_MARKS;
        return (
          <div class="array-row" key={index} role="group" aria-label={rowLabel}>
            <span class="array-row-index" aria-hidden="true">
              {index + 1}
            </span>
            <div class="array-row-fields">
              {spec.length === 0 ? (
                <ItemInput
                  item={{ name: 'value', label: 'Value' }}
                  value={row}
                  rowLabel={rowLabel}
                  id={`${id}-${index}`}
                  onValue={(v) => setRow(index, v)}
                />
              ) : (
                spec.map((item) => {
                  const current = typeof row === 'object' && row !== null ? (row as DataObject) : {};
                  return (
                    <ItemInput
                      key={item.name}
                      item={item}
                      value={current[item.name]}
                      rowLabel={rowLabel}
                      id={`${id}-${index}-${item.name}`}
                      onValue={(v) => setRow(index, { ...current, [item.name]: v })}
                    />
                  );
                })
              )}
              {ownMarks.length > 0 && <MarkText id={rowInputId(field.key, index)} marks={ownMarks} />}
            </div>
            <button
              type="button"
              class="button button-small button-danger-quiet"
              onClick={() => setRows(rows.filter((_, i) => i !== index))}
              aria-label={`Remove ${rowLabel}`}
            >
              Remove
            </button>
          </div>
        );
      })}
      <button
        type="button"
        class="button button-small"
        onClick={() => setRows([...rows, emptyRow(field)])}
        aria-label={`Add a row to ${field.label}`}
      >
        Add row
      </button>
    </fieldset>
  );
}

export function DataForm({ fields, data, onChange, onInputValidity = () => undefined, marks = new Map() }: Props) {
  if (fields.length === 0)
    return (
      <p class="empty">
        This template has no fields yet. Use <code>{'{{ name }}'}</code> in the HTML: the form follows it as you type.
      </p>
    );
  // `einvoice.*` is not data to type in: the service fills it when Run attaches an e-invoice.
  const filled = fields.filter((f) => isFilledByEInvoice(f.key));
  return (
    <InputValidity.Provider value={onInputValidity}>
      <Marks.Provider value={marks}>
        <form class="data-form" onSubmit={(e) => e.preventDefault()} aria-label="Template data">
          {/* In the template's fields order (GET /v1/templates/{id}: `fields`), which the Fields tab can change. */}
          {fields
            .filter((f) => !isFilledByEInvoice(f.key))
            .map((field) =>
              field.type === 'array' ? (
                <ArrayInput key={field.key} field={field} data={data} onChange={onChange} />
              ) : (
                <ScalarInput key={field.key} field={field} data={data} onChange={onChange} />
              ),
            )}
          {filled.length > 0 && (
            <p class="help">
              {filled.map((f, i) => (
                <span key={f.key}>
                  {i > 0 && ', '}
                  <code>{f.key}</code>
                </span>
              ))}
              : filled in by the service when Run attaches an e-invoice.
            </p>
          )}
        </form>
      </Marks.Provider>
    </InputValidity.Provider>
  );
}
