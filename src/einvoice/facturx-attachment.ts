/**
 * What a Factur-X 1.0 / ZUGFeRD 2.x PDF must say about its XML (Factur-X 1.07 specification, part
 * "PDF/A-3"): the file is named `factur-x.xml` (ZUGFeRD 2.1 and later use the Factur-X name and XMP
 * namespace; only ZUGFeRD 2.0 used `zugferd-invoice.xml`, which the service does not write), MIME
 * type text/xml, /AFRelationship Alternative — Data for MINIMUM and BASIC WL, which are not complete
 * invoices — and the `fx` XMP properties, declared in an extension schema as PDF/A requires.
 */
import type { PdfAMeta } from '../finishing/pdfa.js';
import type { BuiltEInvoice } from './einvoice.js';
import { CONFORMANCE_LEVELS, type EInvoiceProfile } from './invoice-schema.js';

export const FACTURX_FILENAME = 'factur-x.xml';
const FX_NAMESPACE = 'urn:factur-x:pdfa:CrossIndustryDocument:invoice:1p0#';

/** The PDF/A-3 attachment and XMP additions for a built Factur-X / ZUGFeRD invoice. */
export function facturXPdfAMeta(built: BuiltEInvoice): Pick<PdfAMeta, 'attachments' | 'xmpExtension'> {
  const dataOnly = built.profile === 'minimum' || built.profile === 'basic-wl';
  return {
    attachments: [
      {
        name: FACTURX_FILENAME,
        bytes: Buffer.from(built.xml, 'utf8'),
        mimeType: 'text/xml',
        description: `Factur-X ${CONFORMANCE_LEVELS[built.profile]} invoice`,
        relationship: dataOnly ? 'Data' : 'Alternative',
      },
    ],
    xmpExtension: facturXXmp(built.profile),
  };
}

function property(name: string, description: string): string {
  return `<rdf:li rdf:parseType="Resource"><pdfaProperty:name>${name}</pdfaProperty:name><pdfaProperty:valueType>Text</pdfaProperty:valueType><pdfaProperty:category>external</pdfaProperty:category><pdfaProperty:description>${description}</pdfaProperty:description></rdf:li>`;
}

function facturXXmp(profile: EInvoiceProfile): string {
  return `<rdf:Description rdf:about="" xmlns:fx="${FX_NAMESPACE}">
<fx:DocumentType>INVOICE</fx:DocumentType>
<fx:DocumentFileName>${FACTURX_FILENAME}</fx:DocumentFileName>
<fx:Version>1.0</fx:Version>
<fx:ConformanceLevel>${CONFORMANCE_LEVELS[profile]}</fx:ConformanceLevel>
</rdf:Description>
<rdf:Description rdf:about="" xmlns:pdfaExtension="http://www.aiim.org/pdfa/ns/extension/" xmlns:pdfaSchema="http://www.aiim.org/pdfa/ns/schema#" xmlns:pdfaProperty="http://www.aiim.org/pdfa/ns/property#">
<pdfaExtension:schemas><rdf:Bag><rdf:li rdf:parseType="Resource">
<pdfaSchema:schema>Factur-X PDFA Extension Schema</pdfaSchema:schema>
<pdfaSchema:namespaceURI>${FX_NAMESPACE}</pdfaSchema:namespaceURI>
<pdfaSchema:prefix>fx</pdfaSchema:prefix>
<pdfaSchema:property><rdf:Seq>
${property('DocumentFileName', 'name of the embedded XML invoice file')}
${property('DocumentType', 'INVOICE')}
${property('Version', 'The actual version of the Factur-X XML schema')}
${property('ConformanceLevel', 'The conformance level of the embedded Factur-X data')}
</rdf:Seq></pdfaSchema:property>
</rdf:li></rdf:Bag></pdfaExtension:schemas>
</rdf:Description>`;
}
