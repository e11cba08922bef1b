/**
 * The official rules in the studio (issue 41; docs/einvoice-rules.md): the report of
 * `POST /v1/einvoice/validate` as the Validate screen shows it — each check's findings grouped by rule,
 * one entry per message with the places it was found at — and what Run says about a delivered
 * e-invoice: the checks that judged it and the rules' warnings. Pure, no DOM.
 */
import type { RuleCheck, RuleFinding } from '../api-types.js';
import type { DocumentWarning } from '../warnings.js';

/** The findings of one rule in one check. */
export interface RuleGroup {
  rule: string;
  /** fatal when any of its findings is. */
  severity: RuleFinding['severity'];
  /** Each distinct message, with the places (XPath, or a schema finding's line) it was found at. */
  messages: { message: string; places: string[] }[];
}

/** Where a finding is: its XPath, or `line N` for a schema finding ('' when the report names none). */
const placeOf = (f: RuleFinding): string => f.location || (f.line ? `line ${f.line}` : '');

/** A check's findings by rule id, in the order their rules first appear. */
export function groupByRule(findings: readonly RuleFinding[]): RuleGroup[] {
  const groups = new Map<string, RuleGroup>();
  for (const f of findings) {
    let group = groups.get(f.rule);
    if (!group) groups.set(f.rule, (group = { rule: f.rule, severity: f.severity, messages: [] }));
    if (f.severity === 'fatal') group.severity = 'fatal';
    let entry = group.messages.find((m) => m.message === f.message);
    if (!entry) group.messages.push((entry = { message: f.message, places: [] }));
    const place = placeOf(f);
    if (place) entry.places.push(place);
  }
  return [...groups.values()];
}

/** How a check's status reads (not_run: a check before it failed; rules mean nothing on XML its schema refuses). */
export const CHECK_STATUS: Record<RuleCheck['status'], string> = {
  passed: 'passed',
  failed: 'failed',
  not_run: 'not run',
};

/** "2 fatal findings, 1 warning" for a check's listed findings ('' for none). */
export function countFindings(check: RuleCheck): string {
  const fatal = check.findings.filter((f) => f.severity === 'fatal').length;
  const warnings = check.findings.length - fatal;
  return [
    ...(fatal ? [`${fatal} fatal ${fatal === 1 ? 'finding' : 'findings'}`] : []),
    ...(warnings ? [`${warnings} ${warnings === 1 ? 'warning' : 'warnings'}`] : []),
  ].join(', ');
}

/** The rule ids with a fatal finding, over every check, in report order. */
export function fatalRules(checks: readonly RuleCheck[]): string[] {
  return [...new Set(checks.flatMap((c) => c.findings.filter((f) => f.severity === 'fatal').map((f) => f.rule)))];
}

/** What the validation endpoint takes: an XML file or a PDF (by name or type; the service judges the bytes). */
export const isEInvoiceFile = (file: { name: string; type: string }): boolean =>
  /\.(xml|pdf)$/i.test(file.name) || ['application/xml', 'text/xml', 'application/pdf'].includes(file.type);

/** The `einvoice_checks` of an answer for a person: the official rule sets by name, or what `built-in` means. */
export function describeChecks(checks: string): string {
  return checks === 'built-in'
    ? "built-in (the service's own checks and the syntax's schema; no official rules judged it)"
    : checks;
}

/** A warning of the official rules on a delivered e-invoice: its rule id and the rest of the message. */
export interface RuleWarning {
  rule: string;
  message: string;
}

/** The warning code of the official rules (one warning per rule, the message starting with `[rule id] `: docs/einvoice.md). */
const RULE_WARNING = 'EINVOICE_RULE_WARNING';

/** A document's warnings split into the official rules' (by rule id) and the rest. */
export function splitRuleWarnings(warnings: readonly DocumentWarning[]): {
  rules: RuleWarning[];
  rest: DocumentWarning[];
} {
  const rules: RuleWarning[] = [];
  const rest: DocumentWarning[] = [];
  for (const w of warnings) {
    const end = w.code === RULE_WARNING && w.message.startsWith('[') ? w.message.indexOf('] ') : -1;
    if (end > 1) rules.push({ rule: w.message.slice(1, end), message: w.message.slice(end + 2) });
    else rest.push(w);
  }
  return { rules, rest };
}
