/**
 * Run → E-invoice (issue 16): attach an EN 16931 invoice to the generation — the format and profile, and
 * the invoice either as the template's own data or as its own JSON (prefilled with a complete example) —
 * and, when the service refuses the invoice, its findings grouped by rule. Once delivered (issue 41):
 * which checks judged it (`einvoice_checks`) and the official rules' warnings, by rule.
 */
import { useEffect, useMemo } from 'preact/hooks';
import { useCapabilities } from '../../api/capabilities.js';
import { CodeEditor, type EditorProblem } from '../../components/code-editor.js';
import {
  EINVOICE_FORMATS,
  EINVOICE_PROFILES,
  EXAMPLE_INVOICE,
  describeDelivered,
  isHybridFormat,
  jsonValueLines,
  lineOfField,
  looksLikeInvoice,
  type EInvoiceDraft,
  type EInvoiceFinding,
  type EInvoiceFormat,
  type EInvoiceProfile,
  type EInvoiceRequest,
  type EInvoiceRuleFindings,
} from '../../lib/einvoice/einvoice.js';
import { describeChecks, type RuleWarning } from '../../lib/einvoice/einvoice-report.js';
import type { DataObject } from '../../lib/form-data.js';
import type { Field } from '../../lib/api-types.js';
import { describeLoc, type DataLoc } from '../../lib/field-marks.js';
import { nothingCharged } from '../../lib/messages.js';

interface EInvoiceSectionProps {
  draft: EInvoiceDraft;
  onChange(draft: EInvoiceDraft): void;
  data: DataObject;
  /** Why the invoice cannot be sent as it is (invalid JSON), shown under the editor. */
  problem: string | null;
  /** The findings of the last refusal of the invoice's own JSON, marked at their lines while that text is unchanged. */
  findings: { rules: EInvoiceRuleFindings[]; json: string | null } | null;
}

/** Lint markers for findings: each at its field's line (or the enclosing value's, for a missing field). */
function findingMarkers(findings: EInvoiceSectionProps['findings']): EditorProblem[] {
  if (!findings?.json) return [];
  const lines = jsonValueLines(findings.json);
  return findings.rules.flatMap((group) =>
    group.findings
      .filter((f) => f.invoiceLoc?.length)
      .map((f) => ({
        line: lineOfField(lines, f.invoiceLoc!),
        message: `${group.rule}: ${f.message}`,
        source: findings.json!,
      })),
  );
}

export function EInvoiceSection({ draft, onChange, data, problem, findings }: EInvoiceSectionProps) {
  const markers = useMemo(() => findingMarkers(findings), [findings]);
  const set = (patch: Partial<EInvoiceDraft>) => onChange({ ...draft, ...patch });
  const format = EINVOICE_FORMATS.find((f) => f.id === draft.format)!;
  // An installation that requires the official rules and has none refuses every e-invoice: said here, before Run.
  const capabilities = useCapabilities();
  const unavailable = capabilities !== null && !capabilities.einvoice_attachments.available;
  useEffect(() => {
    if (unavailable && draft.attach) set({ attach: false });
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [unavailable, draft.attach]);
  return (
    <fieldset class="einvoice">
      <legend class="field-label">E-invoice</legend>
      <label class="check">
        <input
          type="checkbox"
          checked={draft.attach && !unavailable}
          disabled={unavailable}
          onChange={(e) => set({ attach: e.currentTarget.checked })}
        />
        Attach an e-invoice (EN 16931)
      </label>
      {unavailable && (
        <p class="help" data-testid="einvoice-attach-unavailable">
          Not available on this Pressroom right now: it checks every e-invoice by the official rules, and they are not
          installed (or need reinstalling). Ask whoever runs it to install them.
        </p>
      )}
      {draft.attach && !unavailable && (
        <div class="einvoice-body">
          <div class="form-row">
            <div class="field">
              <label class="field-label" for="einvoice-format">
                Format
              </label>
              <select
                id="einvoice-format"
                value={draft.format}
                onChange={(e) => set({ format: e.currentTarget.value as EInvoiceFormat })}
              >
                {EINVOICE_FORMATS.map((f) => (
                  <option key={f.id} value={f.id}>
                    {f.label}
                  </option>
                ))}
              </select>
            </div>
            {isHybridFormat(draft.format) && (
              <div class="field">
                <label class="field-label" for="einvoice-profile">
                  Profile
                </label>
                <select
                  id="einvoice-profile"
                  value={draft.profile}
                  onChange={(e) => set({ profile: e.currentTarget.value as EInvoiceProfile })}
                >
                  {EINVOICE_PROFILES.map((p) => (
                    <option key={p.id} value={p.id}>
                      {p.label}
                    </option>
                  ))}
                </select>
              </div>
            )}
          </div>
          <p class="help">
            Delivers {format.output}. The invoice is checked against the EN 16931 rules
            {draft.format.startsWith('xrechnung') ? " and XRechnung's" : ''} before anything is charged.
          </p>
          <fieldset class="radio-group">
            <legend class="field-label">Invoice</legend>
            <label class="radio">
              <input
                type="radio"
                name="einvoice-source"
                checked={draft.source === 'data'}
                onChange={() => set({ source: 'data' })}
              />
              The template's data
            </label>
            <label class="radio">
              <input
                type="radio"
                name="einvoice-source"
                checked={draft.source === 'json'}
                onChange={() => set({ source: 'json' })}
              />
              Its own JSON
            </label>
          </fieldset>
          {draft.source === 'data' ? (
            looksLikeInvoice(data) ? (
              <p class="help">The data above is sent both as the template's data and as the invoice.</p>
            ) : (
              <p class="notice notice-warning">
                The data has no seller, buyer and lines, so it is not an invoice: use its own JSON, or start from the
                “Invoice (Factur-X EN 16931)” template.
              </p>
            )
          ) : (
            <div class="code-panel einvoice-json">
              <CodeEditor
                id="editor-einvoice-invoice"
                label="Invoice (JSON)"
                language="json"
                value={draft.json}
                onChange={(json) => set({ json })}
                problems={markers}
              />
              <button
                type="button"
                class="button button-small"
                onClick={() => set({ json: JSON.stringify(EXAMPLE_INVOICE, null, 2) })}
              >
                Reset to the example
              </button>
            </div>
          )}
          {problem && <p class="field-error">{problem}.</p>}
        </div>
      )}
    </fieldset>
  );
}

/** Where a finding is: a field of the invoice (as the form names it), the XPath of the caller's XML, or the invoice as a whole. */
function FindingPlace({ finding, fields }: { finding: EInvoiceFinding; fields: readonly Field[] }) {
  if (finding.xpath) return <code class="finding-path">{finding.xpath}</code>;
  if (finding.invoiceLoc?.length) return <span class="finding-path">{describeLoc(fields, finding.invoiceLoc)}</span>;
  if (finding.invoiceLoc || !finding.path) return <span class="finding-path">the invoice</span>;
  return <code class="finding-path">{finding.path}</code>;
}

/**
 * A refused invoice: one entry per rule id (with the official rule set that found it, if one did),
 * each listing the place inside the invoice — named as the form names it when the invoice is the
 * template's data (with a button to the field), rows counted from 1 — and the message.
 */
export function EInvoiceFindings({
  rules,
  credits,
  fields = [],
  onShowField,
  canShowField = () => false,
}: {
  rules: EInvoiceRuleFindings[];
  credits: number | null;
  fields?: readonly Field[];
  onShowField?(loc: DataLoc): void;
  canShowField?(loc: DataLoc): boolean;
}) {
  const count = rules.reduce((n, r) => n + r.findings.length, 0);
  return (
    <div class="notice notice-error einvoice-findings" role="alert" data-testid="einvoice-findings">
      <p>
        The e-invoice was refused: {count === 1 ? 'one finding' : `${count} findings`}. {nothingCharged(credits)}
      </p>
      <ul>
        {rules.map((group) => (
          <li key={group.rule} data-rule={group.rule}>
            <strong class="rule-id">{group.rule}</strong>
            {group.check && <span class="muted"> · {group.check}</span>}
            <ul>
              {group.findings.map((f, i) => (
                <li key={i}>
                  <FindingPlace finding={f} fields={fields} />: {f.message}
                  {!!f.invoiceLoc?.length && onShowField && canShowField(f.invoiceLoc) && (
                    <>
                      {' '}
                      <button type="button" class="button button-small" onClick={() => onShowField(f.invoiceLoc!)}>
                        Show in the form
                      </button>
                    </>
                  )}
                </li>
              ))}
            </ul>
          </li>
        ))}
      </ul>
    </div>
  );
}

/**
 * A delivered e-invoice: what it is and where its XML is, the checks that judged it before the charge
 * (absent from a server before issue 41), and the warnings of the official rules, one per rule.
 */
export function EInvoiceDelivered({
  einvoice,
  checks,
  ruleWarnings,
}: {
  einvoice: Pick<EInvoiceRequest, 'format' | 'profile'>;
  checks: string | undefined;
  ruleWarnings: readonly RuleWarning[];
}) {
  return (
    <>
      <div class="notice notice-success" data-testid="einvoice-result">
        <p>E-invoice: {describeDelivered(einvoice)}.</p>
        {checks && <p data-testid="einvoice-checks">Checked by: {describeChecks(checks)}.</p>}
      </div>
      {ruleWarnings.length > 0 && (
        <div class="notice notice-warning einvoice-findings" data-testid="einvoice-warnings">
          <p>
            Valid, with {ruleWarnings.length === 1 ? 'a warning' : `${ruleWarnings.length} warnings`} of the official
            rules (they do not refuse it):
          </p>
          <ul>
            {ruleWarnings.map((w) => (
              <li key={w.rule} data-rule={w.rule}>
                <strong class="rule-id">{w.rule}</strong>: {w.message}
              </li>
            ))}
          </ul>
        </div>
      )}
    </>
  );
}
