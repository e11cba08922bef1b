/**
 * The report of Validate e-invoice: the verdict, what was judged (the file, the syntax, the profile and
 * the specification identifier the XML states) and by which rule sets, then each check in order with
 * its status and its findings by rule id — severity, the rule's own message, and where (XPath, or a
 * schema finding's line) — and how many more the report did not list.
 */
import type { EInvoiceValidationReport, RuleCheck } from '../../lib/api-types.js';
import {
  CHECK_STATUS,
  countFindings,
  describeChecks,
  fatalRules,
  groupByRule,
  type RuleGroup,
} from '../../lib/einvoice/einvoice-report.js';

const STATUS_BADGE: Record<RuleCheck['status'], string> = {
  passed: 'badge-completed',
  failed: 'badge-failed',
  not_run: '',
};

function Verdict({ report, file }: { report: EInvoiceValidationReport; file: string }) {
  const failed = fatalRules(report.checks);
  const warnings = report.checks.reduce((n, c) => n + c.findings.filter((f) => f.severity === 'warning').length, 0);
  return (
    <p class={`notice ${report.valid ? 'notice-success' : 'notice-error'}`} data-testid="validation-verdict">
      <strong>{report.valid ? 'Valid' : 'Invalid'}</strong>:{' '}
      {report.valid
        ? `${file} passes every check${warnings ? `, with ${warnings === 1 ? 'a warning' : `${warnings} warnings`} (warnings do not make it invalid)` : ''}.`
        : `${file} ${failed.length === 0 ? 'fails a check' : `breaks ${failed.length === 1 ? 'one rule' : `${failed.length} rules`} (${failed.join(', ')})`}; a buyer's system would refuse it.`}
    </p>
  );
}

function Source({ report }: { report: EInvoiceValidationReport }) {
  const { source } = report;
  return (
    <dl class="report-facts" data-testid="validation-source">
      <dt>Checked by</dt>
      <dd data-testid="validation-checks">{describeChecks(report.einvoice_checks)}</dd>
      <dt>Judged</dt>
      <dd>
        {source.kind === 'pdf' ? (
          <>
            the PDF's embedded <code>{source.attachment ?? 'invoice'}</code>
          </>
        ) : (
          'the XML file itself'
        )}
      </dd>
      <dt>Syntax</dt>
      <dd>
        {source.syntax === 'CII' ? 'UN/CEFACT CII' : 'OASIS UBL 2.1'} ({source.document})
      </dd>
      <dt>Profile</dt>
      <dd>{source.profile}</dd>
      <dt>Specification identifier (BT-24)</dt>
      <dd>{source.specification_identifier ? <code>{source.specification_identifier}</code> : 'none stated'}</dd>
    </dl>
  );
}

function RuleFindings({ group }: { group: RuleGroup }) {
  return (
    <li data-rule={group.rule}>
      <strong class="rule-id">{group.rule}</strong>{' '}
      <span class={`badge ${group.severity === 'fatal' ? 'badge-failed' : 'badge-pending'}`}>{group.severity}</span>
      {group.messages.map((m, i) => (
        <div key={i} class="report-message">
          <p>{m.message}</p>
          {m.places.length > 0 && (
            <ul class="report-places" aria-label={`Where ${group.rule} applies`}>
              {m.places.map((place, j) => (
                <li key={j}>
                  <code>{place}</code>
                </li>
              ))}
            </ul>
          )}
        </div>
      ))}
    </li>
  );
}

function CheckResult({ check }: { check: RuleCheck }) {
  const counted = countFindings(check);
  return (
    <li class="report-check" data-testid="validation-check" data-status={check.status}>
      <h3>
        <span class={`badge ${STATUS_BADGE[check.status]}`}>{CHECK_STATUS[check.status]}</span> {check.check}
      </h3>
      {check.status === 'not_run' && (
        <p class="muted">An earlier check failed: these rules mean nothing on XML that its schema refuses.</p>
      )}
      {counted && <p class="muted">{counted}</p>}
      {check.findings.length > 0 && (
        <ul class="report-rules">
          {groupByRule(check.findings).map((group) => (
            <RuleFindings key={group.rule} group={group} />
          ))}
        </ul>
      )}
      {check.more ? <p class="muted">…and {check.more} more not listed (a check lists 100 at most).</p> : null}
    </li>
  );
}

export function ValidationReport({ report, file }: { report: EInvoiceValidationReport; file: string }) {
  return (
    <section class="card einvoice-report" aria-labelledby="validation-report-title" data-testid="validation-report">
      <h2 id="validation-report-title">Report for {file}</h2>
      <Verdict report={report} file={file} />
      <Source report={report} />
      <ol class="report-checks" aria-label="Checks">
        {report.checks.map((check) => (
          <CheckResult key={check.check} check={check} />
        ))}
      </ol>
    </section>
  );
}
