/**
 * The official checks of an e-invoice XML with the installed rules pack (issue 41), in order, each only
 * when the ones before passed (a rule's finding means nothing on a document its schema refuses):
 *   1. the syntax's schema: CII against the Factur-X 1.07.3 XSD of its profile (UN/CEFACT CII D16B
 *      restricted to the profile; EN 16931's for XRechnung), with libxml2; UBL against the OASIS UBL 2.1
 *      Invoice or CreditNote XSD from the pack;
 *   2. the CEN EN 16931 schematron of the syntax;
 *   3. for XRechnung, KoSIT's schematron (with the Peppol rules it merges in).
 * Factur-X MINIMUM and BASIC WL are not EN 16931 invoices (no lines, no VAT breakdown): they get the
 * schema of their profile only. Steps 2 and 3 run together on one validation thread (rules-pool.ts),
 * the XML parsed once; step 1 on the xmllint threads. Every step is for an account, fairly scheduled.
 *
 * `PRESSROOM_EINVOICE_RULES`: `auto` judges with the pack when one is installed, `required` refuses
 * e-invoice work with 503 EINVOICE_RULES_MISSING until one is, `off` never reads it.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { EInvoiceRulesMode } from '../../shared/config.js';
import { AppError } from '../../shared/errors.js';
import type { PoolStats, Ticket } from '../../scheduling/fair-scheduler.js';
import { CONFORMANCE_LEVELS, type EInvoiceProfile } from '../invoice-schema.js';
import { checkCiiSchema, checkSchemaFiles, type SchemaFinding } from '../xmllint/xml-schema-check.js';
import { SOURCES } from './manifest.js';
import { sha256Of } from './pack-sources.js';
import { createPackReader, DamagedPackError, SOURCE_DIR, type ActivePack } from './pack-store.js';
import type { StylesheetId } from './pack-build.js';
import { RulesPool, type RulesPoolOptions } from './rules-pool.js';
import { findingOf, type RuleFinding } from './svrl.js';

export type { RuleFinding } from './svrl.js';

/** What an XML is to be judged as. */
export interface Judgement {
  readonly syntax: 'cii' | 'ubl';
  /** The CII profile (its Factur-X XSD; 'en16931' for XRechnung and unknown identifiers). */
  readonly profile: EInvoiceProfile;
  /** UBL's document: its root element. */
  readonly ublDocument?: 'Invoice' | 'CreditNote';
  /** XRechnung: KoSIT's rules too. */
  readonly xrechnung: boolean;
  /** Whether step 1 runs (the generation path has checked the CII schema already). */
  readonly schema: boolean;
}

/** One check's outcome. `not_run`: a check before it failed, or the profile has no such rules. */
export interface CheckResult {
  readonly check: string;
  readonly status: 'passed' | 'failed' | 'not_run';
  readonly findings: readonly RuleFinding[];
  /** Findings past the listed ones (a broken large file gives thousands). */
  readonly more?: number;
}

export interface RulesReport {
  /** The rule sets that judged the XML: `EN16931 1.3.16 + XRechnung 3.0.2`, or `built-in` when none did. */
  readonly label: string;
  readonly checks: readonly CheckResult[];
}

/** Findings listed per check at most; the rest are counted. */
const MAX_FINDINGS_PER_CHECK = 100;

/** The label of answers whose e-invoice was judged by the service's own checks only. */
export const BUILT_IN = 'built-in';

/** Whether a profile is an EN 16931 invoice (the CEN rules apply) or a Factur-X subset that is not. */
export const judgedByRules = (profile: EInvoiceProfile): boolean => profile !== 'minimum' && profile !== 'basic-wl';

/** The `einvoice_checks` label of a judgement with a pack. */
export function rulesLabel(pack: ActivePack | null, what: Pick<Judgement, 'profile' | 'xrechnung'>): string {
  if (!pack || !judgedByRules(what.profile)) return BUILT_IN;
  const { en16931, xrechnung } = pack.description.rule_sets;
  return what.xrechnung ? `${en16931} + ${xrechnung}` : en16931;
}

export interface EInvoiceRules {
  readonly mode: EInvoiceRulesMode;
  /**
   * The pack to judge with now: null when the mode is `off`, or `auto` with none installed. Rejects with
   * 503 EINVOICE_RULES_MISSING (`required`, none installed) or EINVOICE_RULES_DAMAGED.
   */
  activePack(): Promise<ActivePack | null>;
  /** Runs the checks of `what` on `xml` for `ticket`'s account (see the top of the file). */
  judge(pack: ActivePack, xml: string, what: Judgement, ticket: Ticket): Promise<RulesReport>;
  /**
   * The pack's state for /readyz: `ok: <the pack>`, or `degraded: …` (the process stays ready) when one
   * is required or damaged; null (not shown) when none is installed and none is required, or with `off`.
   */
  readiness(): Promise<string | null>;
  stats(): PoolStats;
  close(): Promise<void>;
}

export interface EInvoiceRulesOptions {
  readonly dataDir: string;
  readonly mode: EInvoiceRulesMode;
  /** Validation threads (3: a warm check takes about a tenth of a second; see RULES_THREADS). */
  readonly threads?: number;
  /** A check's deadline on its thread and its wait for one. */
  readonly timeoutMs?: number;
  /** Rules time of one account's free checks per window (rules-pool.ts has the default). */
  readonly freeBudget?: RulesPoolOptions['freeBudget'];
}

/** Far above any real invoice's check (0.1 s), well under a request's patience. */
const RULES_TIMEOUT_MS = 30_000;
/**
 * Two for free checks (one per account: a second account's validation never waits behind a first's
 * long one, issue 49), one that only paid checks take. Started on first use; each holds ~40 MB of
 * stylesheets once warm, and up to its 1 GiB heap ceiling while it judges a large XML.
 */
const RULES_THREADS = 3;

const missing = () =>
  new AppError(
    'EINVOICE_RULES_MISSING',
    'This service requires the official e-invoice rules (PRESSROOM_EINVOICE_RULES=required) and none are installed; the operator installs them with `pressroom einvoice rules install`. Nothing was charged.',
    { details: { retryAfterSeconds: 60 } },
  );
const damaged = (why: string) =>
  new AppError(
    'EINVOICE_RULES_DAMAGED',
    'The installed e-invoice rules pack cannot be used; the operator reinstalls it with `pressroom einvoice rules install`. Nothing was charged.',
    { cause: new Error(why), details: { retryAfterSeconds: 60 } },
  );

/** A schema finding as a finding of the schema check. */
const schemaFinding = (f: SchemaFinding): RuleFinding => ({
  rule: 'xml_schema',
  severity: 'fatal',
  message: f.message,
  location: f.line ? `line ${f.line}` : '',
  ...(f.line ? { line: f.line } : {}),
});

function result(check: string, findings: RuleFinding[]): CheckResult {
  const listed = findings.slice(0, MAX_FINDINGS_PER_CHECK);
  const more = findings.length - listed.length;
  return {
    check,
    status: findings.some((f) => f.severity === 'fatal') ? 'failed' : 'passed',
    findings: listed,
    ...(more > 0 ? { more } : {}),
  };
}

export function createEInvoiceRules(options: EInvoiceRulesOptions): EInvoiceRules {
  const readPack = createPackReader(options.dataDir);
  const pool = new RulesPool({
    threads: options.threads ?? RULES_THREADS,
    timeoutMs: options.timeoutMs ?? RULES_TIMEOUT_MS,
    freeBudget: options.freeBudget,
  });
  const ublSchemas = new Map<string, Promise<{ fileName: string; contents: string }[]>>();

  /** The pack's UBL schemas, read and checked against pack.json once per pack. */
  function ublSchemaFiles(pack: ActivePack): Promise<{ fileName: string; contents: string }[]> {
    let files = ublSchemas.get(pack.dir);
    if (!files) {
      const prefix = `${SOURCES.ubl.folder}/`;
      files = Promise.all(
        pack.description.files
          .filter((f) => f.path.startsWith(prefix) && f.path.endsWith('.xsd'))
          .map(async (f) => {
            const bytes = await readFile(join(pack.dir, SOURCE_DIR, f.path));
            if (sha256Of(bytes) !== f.sha256)
              throw new DamagedPackError(`${f.path} changed since the pack was installed`);
            return { fileName: f.path.slice(prefix.length), contents: bytes.toString('utf8') };
          }),
      );
      files.catch(() => ublSchemas.delete(pack.dir));
      ublSchemas.set(pack.dir, files);
    }
    return files;
  }

  async function schemaCheck(pack: ActivePack, xml: string, what: Judgement, ticket: Ticket): Promise<CheckResult> {
    if (what.syntax === 'cii') {
      const findings = await checkCiiSchema(xml, what.profile, ticket.accountId, ticket.kind);
      return result(
        `Factur-X 1.07.3 ${CONFORMANCE_LEVELS[what.profile]} XSD (UN/CEFACT CII D16B)`,
        findings.map(schemaFinding),
      );
    }
    const document = what.ublDocument ?? 'Invoice';
    const files = await ublSchemaFiles(pack).catch((error: unknown) => {
      throw damaged(error instanceof Error ? error.message : String(error));
    });
    const findings = await checkSchemaFiles(
      xml,
      { main: `xsd/maindoc/UBL-${document}-2.1.xsd`, files },
      ticket.accountId,
      ticket.kind,
    );
    return result(`OASIS UBL 2.1 ${document} XSD`, findings.map(schemaFinding));
  }

  return {
    mode: options.mode,

    async activePack() {
      if (options.mode === 'off') return null;
      let pack: ActivePack | null;
      try {
        pack = await readPack();
      } catch (error) {
        if (error instanceof DamagedPackError) throw damaged(error.message);
        throw error;
      }
      if (!pack && options.mode === 'required') throw missing();
      return pack;
    },

    async judge(pack, xml, what, ticket) {
      const { rule_sets: names } = pack.description;
      const syntax = what.syntax.toUpperCase();
      const ruleChecks: { id: StylesheetId; name: string }[] = judgedByRules(what.profile)
        ? [
            { id: `en16931-${what.syntax}`, name: `${names.en16931} (CEN schematron, ${syntax})` },
            ...(what.xrechnung
              ? [
                  {
                    id: `xrechnung-${what.syntax}` as StylesheetId,
                    name: `${names.xrechnung} (KoSIT schematron ${SOURCES.xrechnung.version}, ${syntax})`,
                  },
                ]
              : []),
          ]
        : [];
      const checks: CheckResult[] = [];
      if (what.schema) checks.push(await schemaCheck(pack, xml, what, ticket));
      if (checks.some((c) => c.status === 'failed')) {
        checks.push(...ruleChecks.map((c): CheckResult => ({ check: c.name, status: 'not_run', findings: [] })));
      } else if (ruleChecks.length > 0) {
        const outcome = await pool.check(
          xml,
          ruleChecks.map((c) => pack.stylesheets[c.id]),
          ticket,
        );
        if (!Array.isArray(outcome)) {
          if (outcome.reason === 'pack') throw damaged(outcome.message);
          if (outcome.reason === 'unparsable')
            throw new AppError(
              'XML_TOO_COMPLEX',
              `The XML could not be read for the rules check (${outcome.message}); nothing was charged.`,
            );
          throw new AppError(
            'XML_TOO_COMPLEX',
            `The rules could not be evaluated on this XML (${outcome.message}); nothing was charged. Send a document within the syntax's schema.`,
          );
        }
        ruleChecks.forEach((c, i) => checks.push(result(c.name, outcome[i]!.map(findingOf))));
      }
      return { label: rulesLabel(pack, what), checks };
    },

    async readiness() {
      if (options.mode === 'off') return null;
      try {
        const pack = await readPack();
        if (!pack) {
          return options.mode === 'required'
            ? 'degraded: no rules pack installed; e-invoice requests answer 503 EINVOICE_RULES_MISSING (PRESSROOM_EINVOICE_RULES=required)'
            : null;
        }
        const d = pack.description;
        return `ok: ${d.rule_sets.en16931} + ${d.rule_sets.xrechnung} (pack ${d.id.slice(0, 12)}, installed ${d.installed_at})`;
      } catch (error) {
        if (error instanceof DamagedPackError)
          return 'degraded: the rules pack cannot be used; e-invoice requests answer 503 EINVOICE_RULES_DAMAGED until it is reinstalled';
        throw error;
      }
    },

    stats: () => pool.stats(),
    close: () => pool.close(),
  };
}
