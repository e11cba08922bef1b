/**
 * What a schematron run reports (SVRL: failed asserts and fired reports) as findings: the rule id, the
 * severity, the message and where in the XML. The CEN stylesheets (ISO skeleton) write locations as
 * `/*:Invoice[namespace-uri()='urn:…Invoice-2'][1]/…`, SchXslt (KoSIT) as `/Q{urn:…}Invoice[1]/…`;
 * both become `/ubl:Invoice[1]/cac:PaymentMeans[1]` with the prefixes the specifications use.
 */
import { createRequire } from 'node:module';

/** One finding of one check. */
export interface RuleFinding {
  /** The rule id, e.g. `BR-DE-15`, `BR-CO-10`, `PEPPOL-EN16931-R001`; for a schema finding `xml_schema`. */
  readonly rule: string;
  /** `fatal` refuses the invoice; `warning` (and KoSIT's `information`) is reported only. */
  readonly severity: 'fatal' | 'warning';
  readonly message: string;
  /** An XPath to the element the rule was checked on (schema findings: the XML line instead). */
  readonly location: string;
  /** The line of a schema finding, when libxml2 names one. */
  readonly line?: number;
}

/** An SVRL entry as the validation thread reads it off the result tree. */
export interface SvrlEntry {
  readonly id: string;
  readonly flag: string;
  readonly location: string;
  readonly text: string;
}

const SVRL_NS = 'http://purl.oclc.org/dsdl/svrl';

/** The part of a DOM node the walk reads (SaxonJS's result tree). */
export interface SvrlNode {
  readonly nodeType: number;
  readonly namespaceURI?: string | null;
  readonly localName?: string | null;
  readonly firstChild: SvrlNode | null;
  readonly nextSibling: SvrlNode | null;
  readonly textContent?: string | null;
  getAttribute?(name: string): string | null;
}

/** Every failed assert and fired report under `root`, in document order. */
export function svrlEntries(root: SvrlNode): SvrlEntry[] {
  const entries: SvrlEntry[] = [];
  const visit = (node: SvrlNode) => {
    for (let child = node.firstChild; child; child = child.nextSibling) {
      if (child.nodeType !== 1) continue;
      if (
        child.namespaceURI === SVRL_NS &&
        (child.localName === 'failed-assert' || child.localName === 'successful-report')
      ) {
        let text = '';
        for (let part = child.firstChild; part; part = part.nextSibling)
          if (part.nodeType === 1 && part.localName === 'text') text += ` ${part.textContent ?? ''}`;
        entries.push({
          id: child.getAttribute?.('id') ?? '',
          flag: child.getAttribute?.('flag') ?? '',
          location: child.getAttribute?.('location') ?? '',
          text,
        });
      } else {
        visit(child);
      }
    }
  };
  if (root.nodeType === 1 && root.localName === 'schematron-output') visit(root);
  else visit(root);
  return entries;
}

/** The prefixes CII and UBL documents and their specifications use. */
const PREFIXES: Record<string, string> = {
  'urn:un:unece:uncefact:data:standard:CrossIndustryInvoice:100': 'rsm',
  'urn:un:unece:uncefact:data:standard:ReusableAggregateBusinessInformationEntity:100': 'ram',
  'urn:un:unece:uncefact:data:standard:UnqualifiedDataType:100': 'udt',
  'urn:un:unece:uncefact:data:standard:QualifiedDataType:100': 'qdt',
  'urn:oasis:names:specification:ubl:schema:xsd:Invoice-2': 'ubl',
  'urn:oasis:names:specification:ubl:schema:xsd:CreditNote-2': 'cn',
  'urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2': 'cac',
  'urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2': 'cbc',
  'urn:oasis:names:specification:ubl:schema:xsd:CommonExtensionComponents-2': 'ext',
};

/** A location as a person reads it: known namespaces as prefixes; an unknown one stays `Q{uri}name`. */
export function readableLocation(location: string): string {
  return location
    .replace(/\*:([\w.-]+)\[namespace-uri\(\)='([^']*)'\]/g, (_, name: string, uri: string) =>
      PREFIXES[uri] ? `${PREFIXES[uri]}:${name}` : uri === '' ? name : `Q{${uri}}${name}`,
    )
    .replace(/Q\{([^}]*)\}([\w.-]+)/g, (whole, uri: string, name: string) =>
      uri === '' ? name : PREFIXES[uri] ? `${PREFIXES[uri]}:${name}` : whole,
    )
    .replace(/@\*\[local-name\(\)='([\w.-]+)'\]/g, '@$1');
}

/** An entry as a finding: the rule's own `[ID]-` prefix taken off its text, whitespace collapsed. */
export function findingOf(entry: SvrlEntry): RuleFinding {
  const text = entry.text.replace(/\s+/g, ' ').trim();
  const rule = entry.id.trim() || /^\[([^\]]+)\]/.exec(text)?.[1] || 'schematron';
  const message = text.replace(/^\[[^\]]+\]\s*-?\s*/, '') || 'the rule failed (its message is empty)';
  const flag = entry.flag.trim().toLowerCase();
  const severity = flag === 'warning' || flag === 'information' || flag === 'info' ? 'warning' : 'fatal';
  return { rule, severity, message, location: readableLocation(entry.location) };
}

interface SaxonJs {
  getPlatform(): { parseXmlFromString(xml: string): unknown };
  transform(
    options: { stylesheetInternal: unknown; sourceNode: unknown; destination: 'raw' },
    mode: 'sync',
  ): { principalResult: SvrlNode };
}

// Loaded on first use: the service's own thread reads findings from here, and never runs SaxonJS.
let saxon: SaxonJs | undefined;
const saxonJs = (): SaxonJs => (saxon ??= createRequire(import.meta.url)('saxon-js') as SaxonJs);

/** Parses an XML with SaxonJS's parser (no DTD read: an entity other than the five predefined is an error). */
export const parseForRules = (xml: string): unknown => saxonJs().getPlatform().parseXmlFromString(xml);

/** Runs one compiled schematron (a parsed SEF) on a parsed document: its SVRL entries. */
export const runSchematron = (sef: unknown, document: unknown): SvrlEntry[] =>
  svrlEntries(
    saxonJs().transform({ stylesheetInternal: sef, sourceNode: document, destination: 'raw' }, 'sync').principalResult,
  );
