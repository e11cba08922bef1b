/**
 * OASIS UBL 2.1 Invoice or CreditNote from the JSON model, with XRechnung 3.0's specification identifier
 * and the Peppol BIS billing process id that XRechnung's UBL examples carry. Elements in the order of the
 * UBL 2.1 Invoice / CreditNote schema; the mapping of each business term follows the CEN UBL binding
 * (EN 16931-3-2). A credit-note type code (BT-3) makes a CreditNote: UBL checks the type code against the
 * list of its document (BR-CL-01: InvoiceTypeCode takes invoice codes, CreditNoteTypeCode credit-note
 * codes), so 381 cannot be sent as an Invoice. The CreditNote differs from the Invoice in its root and
 * namespace, CreditNoteTypeCode, CreditNoteLine with CreditedQuantity, and the due date (BT-9), which the
 * UBL 2.1 CreditNote has no header element for: the CEN binding puts it in PaymentMeans/PaymentDueDate.
 */
import { XMLBuilder } from 'fast-xml-parser';
import { breakdownRate, GUIDELINE_IDS, XRECHNUNG_BUSINESS_PROCESS } from './cii-xml.js';
import {
  AMOUNT_DECIMALS,
  fitting,
  formatAmount,
  PRICE_DECIMALS,
  QUANTITY_DECIMALS,
  RATE_DECIMALS,
  xmlNumber,
  type Decimal,
  type DecimalInput,
} from '../decimals.js';
import { accountForXml } from '../iban.js';
import type { Invoice, InvoiceAllowanceCharge, InvoiceParty } from '../invoice-schema.js';
import type { InvoiceTotals } from '../totals.js';

type Node = Record<string, unknown>;
const omitEmpty = (node: Node): Node =>
  Object.fromEntries(Object.entries(node).filter(([, v]) => v !== undefined && !(Array.isArray(v) && v.length === 0)));
const VAT_SCHEME = { 'cbc:ID': 'VAT' };

/**
 * The UNTDID 1001 codes UBL takes as CreditNoteTypeCode (the CEN UBL schematron's BR-CL-01 list). Of the
 * type codes the model offers (INVOICE_TYPE_CODES) only 381 is one; the rest are written as an Invoice.
 */
const CREDIT_NOTE_TYPE_CODES: ReadonlySet<string> = new Set([
  '81',
  '83',
  '261',
  '262',
  '296',
  '308',
  '381',
  '396',
  '420',
  '458',
  '502',
  '503',
  '532',
]);

/** True when the type code (BT-3) makes the UBL document a CreditNote rather than an Invoice. */
export function isUblCreditNote(typeCode: string | undefined): boolean {
  return typeCode !== undefined && CREDIT_NOTE_TYPE_CODES.has(typeCode);
}

/** The UBL Invoice (or, for a credit-note type code, CreditNote) XML document, UTF-8, with an XML declaration. */
export function buildUblXml({ invoice, totals }: { invoice: Invoice; totals: InvoiceTotals }): string {
  const currency = invoice.currency;
  const money = (value: Decimal) => ({ '@_currencyID': currency, '#text': formatAmount(value) });
  const p = invoice.payment;
  const typeCode = invoice.type_code ?? '380';
  const creditNote = isUblCreditNote(typeCode);
  const root = creditNote ? 'CreditNote' : 'Invoice';
  const document = {
    '?xml': { '@_version': '1.0', '@_encoding': 'UTF-8' },
    [root]: omitEmpty({
      '@_xmlns': `urn:oasis:names:specification:ubl:schema:xsd:${root}-2`,
      '@_xmlns:cac': 'urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2',
      '@_xmlns:cbc': 'urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2',
      'cbc:CustomizationID': GUIDELINE_IDS.xrechnung,
      'cbc:ProfileID': XRECHNUNG_BUSINESS_PROCESS,
      'cbc:ID': invoice.number,
      'cbc:IssueDate': invoice.issue_date,
      // The UBL 2.1 CreditNote has no DueDate: there the due date goes in PaymentMeans (below).
      'cbc:DueDate': creditNote ? undefined : invoice.due_date,
      [creditNote ? 'cbc:CreditNoteTypeCode' : 'cbc:InvoiceTypeCode']: typeCode,
      'cbc:Note': invoice.notes,
      'cbc:DocumentCurrencyCode': currency,
      'cbc:BuyerReference': invoice.buyer_reference,
      'cac:OrderReference': invoice.order_reference ? { 'cbc:ID': invoice.order_reference } : undefined,
      'cac:ContractDocumentReference': invoice.contract_reference
        ? { 'cbc:ID': invoice.contract_reference }
        : undefined,
      'cac:AccountingSupplierParty': {
        'cac:Party': party(
          invoice.seller,
          'tax_number' in invoice.seller ? invoice.seller.tax_number : undefined,
          p?.creditor_id,
        ),
      },
      'cac:AccountingCustomerParty': { 'cac:Party': party(invoice.buyer, undefined, undefined) },
      'cac:Delivery':
        invoice.delivery_date || invoice.deliver_to
          ? omitEmpty({
              'cbc:ActualDeliveryDate': invoice.delivery_date,
              'cac:DeliveryLocation': invoice.deliver_to
                ? { 'cac:Address': address(invoice.deliver_to.address) }
                : undefined,
              'cac:DeliveryParty': invoice.deliver_to?.name
                ? { 'cac:PartyName': { 'cbc:Name': invoice.deliver_to.name } }
                : undefined,
            })
          : undefined,
      // A credit note's due date needs payment means to sit in; XRechnung always has them (BR-DE-1), and UBL is only XRechnung here.
      'cac:PaymentMeans': p
        ? omitEmpty({
            'cbc:PaymentMeansCode': p.means_code,
            'cbc:PaymentDueDate': creditNote ? invoice.due_date : undefined,
            'cbc:PaymentID': p.remittance_information,
            'cac:PayeeFinancialAccount': p.iban
              ? omitEmpty({
                  'cbc:ID': accountForXml(p.iban),
                  'cbc:Name': p.account_name,
                  'cac:FinancialInstitutionBranch': p.bic ? { 'cbc:ID': p.bic } : undefined,
                })
              : undefined,
            // Direct debit (BG-19): mandate reference (BT-89) and debited account (BT-91); the creditor id (BT-90) is the seller's SEPA identifier (party()).
            'cac:PaymentMandate':
              p.mandate_reference || p.debited_account
                ? omitEmpty({
                    'cbc:ID': p.mandate_reference,
                    'cac:PayerFinancialAccount': p.debited_account
                      ? { 'cbc:ID': accountForXml(p.debited_account) }
                      : undefined,
                  })
                : undefined,
          })
        : undefined,
      'cac:PaymentTerms': p?.terms ? { 'cbc:Note': p.terms } : undefined,
      'cac:AllowanceCharge': [
        ...(invoice.allowances ?? []).map((a) => allowanceCharge(a, false, currency)),
        ...(invoice.charges ?? []).map((c) => allowanceCharge(c, true, currency)),
      ],
      'cac:TaxTotal': {
        'cbc:TaxAmount': money(totals.taxTotal),
        'cac:TaxSubtotal': totals.vat.map((g) => ({
          'cbc:TaxableAmount': money(g.taxable),
          'cbc:TaxAmount': money(g.tax),
          'cac:TaxCategory': omitEmpty({
            'cbc:ID': g.category,
            // UBL is XRechnung only here: category O gets rate 0 in the breakdown (BR-DE-14), none on lines and allowances (BR-O-05…07).
            'cbc:Percent': breakdownRate(g.category, g.rate, true),
            'cbc:TaxExemptionReason': g.exemptionReason,
            'cac:TaxScheme': VAT_SCHEME,
          }),
        })),
      },
      'cac:LegalMonetaryTotal': omitEmpty({
        'cbc:LineExtensionAmount': money(totals.lineTotal),
        'cbc:TaxExclusiveAmount': money(totals.taxExclusive),
        'cbc:TaxInclusiveAmount': money(totals.taxInclusive),
        'cbc:AllowanceTotalAmount': money(totals.allowanceTotal),
        'cbc:ChargeTotalAmount': money(totals.chargeTotal),
        'cbc:PrepaidAmount': totals.prepaid.isZero() ? undefined : money(totals.prepaid),
        'cbc:PayableAmount': money(totals.amountDue),
      }),
      [creditNote ? 'cac:CreditNoteLine' : 'cac:InvoiceLine']: invoice.lines.map((line, i) =>
        omitEmpty({
          'cbc:ID': line.id,
          'cbc:Note': line.note,
          [creditNote ? 'cbc:CreditedQuantity' : 'cbc:InvoicedQuantity']: {
            '@_unitCode': line.unit_code,
            '#text': xmlNumber(line.quantity, QUANTITY_DECIMALS),
          },
          'cbc:LineExtensionAmount': money(totals.lineNet[i]!),
          'cac:Item': omitEmpty({
            'cbc:Description': line.description,
            'cbc:Name': line.name,
            'cac:SellersItemIdentification': line.seller_item_id ? { 'cbc:ID': line.seller_item_id } : undefined,
            'cac:ClassifiedTaxCategory': taxCategory(line.vat_category, line.vat_rate),
          }),
          'cac:Price': {
            'cbc:PriceAmount': { '@_currencyID': currency, '#text': xmlNumber(line.net_price, PRICE_DECIMALS) },
          },
        }),
      ),
    }),
  };
  const builder = new XMLBuilder({
    ignoreAttributes: false,
    attributeNamePrefix: '@_',
    format: true,
    suppressEmptyNode: true,
    processEntities: true,
  });
  return builder.build(document) as string;
}

function taxCategory(category: string | undefined, rate: DecimalInput | undefined): Node {
  return omitEmpty({
    'cbc:ID': category,
    'cbc:Percent': category === 'O' || rate === undefined ? undefined : xmlNumber(rate, RATE_DECIMALS),
    'cac:TaxScheme': VAT_SCHEME,
  });
}

function allowanceCharge(item: InvoiceAllowanceCharge, isCharge: boolean, currency: string): Node {
  return omitEmpty({
    'cbc:ChargeIndicator': String(isCharge),
    'cbc:AllowanceChargeReasonCode': item.reason_code,
    'cbc:AllowanceChargeReason': item.reason,
    'cbc:Amount': { '@_currencyID': currency, '#text': formatAmount(fitting(item.amount, AMOUNT_DECIMALS)) },
    'cac:TaxCategory': taxCategory(item.vat_category, item.vat_rate),
  });
}

/** A UBL address (party postal address, deliver-to location), in the schema's element order. */
function address(a: {
  line1?: string;
  line2?: string;
  city?: string;
  postal_code?: string;
  country_code: string;
}): Node {
  return omitEmpty({
    'cbc:StreetName': a.line1,
    'cbc:AdditionalStreetName': a.line2,
    'cbc:CityName': a.city,
    'cbc:PostalZone': a.postal_code,
    'cac:Country': { 'cbc:IdentificationCode': a.country_code },
  });
}

/** A UBL party; `creditorId` is the seller's bank assigned creditor identifier (BT-90), written as its SEPA party identification. */
function party(p: InvoiceParty, taxNumber: string | undefined, creditorId: string | undefined): Node {
  const a = p.address;
  const c = p.contact;
  return omitEmpty({
    'cbc:EndpointID': p.electronic_address
      ? { '@_schemeID': p.electronic_address.scheme, '#text': p.electronic_address.value }
      : undefined,
    'cac:PartyIdentification': creditorId ? { 'cbc:ID': { '@_schemeID': 'SEPA', '#text': creditorId } } : undefined,
    'cac:PartyName': p.trading_name ? { 'cbc:Name': p.trading_name } : undefined,
    'cac:PostalAddress': address(a),
    'cac:PartyTaxScheme': [
      p.vat_id ? { 'cbc:CompanyID': p.vat_id, 'cac:TaxScheme': VAT_SCHEME } : undefined,
      taxNumber ? { 'cbc:CompanyID': taxNumber, 'cac:TaxScheme': { 'cbc:ID': 'FC' } } : undefined,
    ].filter(Boolean),
    'cac:PartyLegalEntity': omitEmpty({ 'cbc:RegistrationName': p.name, 'cbc:CompanyID': p.legal_registration_id }),
    'cac:Contact': c
      ? omitEmpty({ 'cbc:Name': c.name, 'cbc:Telephone': c.phone, 'cbc:ElectronicMail': c.email })
      : undefined,
  });
}
