/**
 * UN/CEFACT Cross Industry Invoice (CII D16B) from the JSON model: the XML inside Factur-X / ZUGFeRD
 * files and the XRechnung CII syntax. Elements are written in the order the D16B schema requires
 * (xml-schema-check.ts checks it against the Factur-X XSD of the profile); what each profile may carry
 * follows the Factur-X 1.07 profile schemas and schematrons: MINIMUM and BASIC WL have no lines, MINIMUM only the
 * parties' names, VAT ids and countries, and the four totals (no delivery: the deliver-to party and date
 * start at BASIC WL); the buyer's trading name only EN 16931 and up. The header delivery block is always
 * written (empty when there is no delivery date): the D16B schema requires it though EN 16931 does not.
 */
import { XMLBuilder } from 'fast-xml-parser';
import { accountForXml } from '../iban.js';
import type { EInvoiceProfile, Invoice, InvoiceAllowanceCharge, InvoiceParty } from '../invoice-schema.js';
import {
  AMOUNT_DECIMALS,
  fitting,
  formatAmount as money,
  formatDecimal,
  PRICE_DECIMALS,
  QUANTITY_DECIMALS,
  RATE_DECIMALS,
  xmlNumber,
  type Decimal,
  type DecimalInput,
} from '../decimals.js';
import type { InvoiceTotals } from '../totals.js';

/** Specification identifiers (BT-24) per profile, and XRechnung 3.0's. */
export const GUIDELINE_IDS: Record<EInvoiceProfile | 'xrechnung', string> = {
  minimum: 'urn:factur-x.eu:1p0:minimum',
  'basic-wl': 'urn:factur-x.eu:1p0:basicwl',
  basic: 'urn:cen.eu:en16931:2017#compliant#urn:factur-x.eu:1p0:basic',
  en16931: 'urn:cen.eu:en16931:2017',
  extended: 'urn:cen.eu:en16931:2017#conformant#urn:factur-x.eu:1p0:extended',
  xrechnung: 'urn:cen.eu:en16931:2017#compliant#urn:xeinkauf.de:kosit:xrechnung_3.0',
};

/**
 * The business process type (BT-23) XRechnung's CII and UBL carry: XRechnung 3.0.2's schematron requires it
 * (PEPPOL-EN16931-R001, "Business process MUST be provided"). Factur-X output leaves it out (optional there).
 */
export const XRECHNUNG_BUSINESS_PROCESS = 'urn:fdc:peppol.eu:2017:poacc:billing:01:1.0';

type Node = Record<string, unknown>;
const date102 = (iso: string) => ({ 'udt:DateTimeString': { '@_format': '102', '#text': iso.replaceAll('-', '') } });
const omitEmpty = (node: Node): Node =>
  Object.fromEntries(Object.entries(node).filter(([, v]) => v !== undefined && !(Array.isArray(v) && v.length === 0)));

/** What the builder needs besides the invoice. */
export interface CiiInput {
  invoice: Invoice;
  totals: InvoiceTotals;
  /** A Factur-X profile, or 'xrechnung' (EN 16931 content with XRechnung's identifier). */
  profile: EInvoiceProfile | 'xrechnung';
}

/** The CII XML document, UTF-8, with an XML declaration. */
export function buildCiiXml({ invoice, totals, profile }: CiiInput): string {
  const level = profile === 'xrechnung' ? 'en16931' : profile;
  const minimum = level === 'minimum';
  const withLines = level !== 'minimum' && level !== 'basic-wl';
  const document = {
    '?xml': { '@_version': '1.0', '@_encoding': 'UTF-8' },
    'rsm:CrossIndustryInvoice': {
      '@_xmlns:rsm': 'urn:un:unece:uncefact:data:standard:CrossIndustryInvoice:100',
      '@_xmlns:ram': 'urn:un:unece:uncefact:data:standard:ReusableAggregateBusinessInformationEntity:100',
      '@_xmlns:qdt': 'urn:un:unece:uncefact:data:standard:QualifiedDataType:100',
      '@_xmlns:udt': 'urn:un:unece:uncefact:data:standard:UnqualifiedDataType:100',
      'rsm:ExchangedDocumentContext': omitEmpty({
        'ram:BusinessProcessSpecifiedDocumentContextParameter':
          profile === 'xrechnung' ? { 'ram:ID': XRECHNUNG_BUSINESS_PROCESS } : undefined,
        'ram:GuidelineSpecifiedDocumentContextParameter': { 'ram:ID': GUIDELINE_IDS[profile] },
      }),
      'rsm:ExchangedDocument': omitEmpty({
        'ram:ID': invoice.number,
        'ram:TypeCode': invoice.type_code ?? '380',
        'ram:IssueDateTime': date102(invoice.issue_date),
        'ram:IncludedNote': minimum ? undefined : (invoice.notes ?? []).map((n) => ({ 'ram:Content': n })),
      }),
      'rsm:SupplyChainTradeTransaction': omitEmpty({
        'ram:IncludedSupplyChainTradeLineItem': withLines
          ? invoice.lines.map((line, i) => lineItem(line, totals.lineNet[i]!, level))
          : undefined,
        'ram:ApplicableHeaderTradeAgreement': omitEmpty({
          'ram:BuyerReference': invoice.buyer_reference,
          'ram:SellerTradeParty': party(invoice.seller, level, true),
          'ram:BuyerTradeParty': party(invoice.buyer, level, false),
          'ram:BuyerOrderReferencedDocument': invoice.order_reference
            ? { 'ram:IssuerAssignedID': invoice.order_reference }
            : undefined,
          'ram:ContractReferencedDocument':
            !minimum && invoice.contract_reference ? { 'ram:IssuerAssignedID': invoice.contract_reference } : undefined,
        }),
        'ram:ApplicableHeaderTradeDelivery': minimum ? '' : delivery(invoice),
        'ram:ApplicableHeaderTradeSettlement': settlement(invoice, totals, level, profile === 'xrechnung'),
      }),
    },
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

/** The header delivery block (BASIC WL and up): deliver-to party (BG-13/BG-15) and actual delivery date (BT-72); '' (an empty element) when neither. */
function delivery(invoice: Invoice): Node | '' {
  const to = invoice.deliver_to;
  const a = to?.address;
  const node = omitEmpty({
    'ram:ShipToTradeParty':
      to && a
        ? omitEmpty({
            'ram:Name': to.name,
            'ram:PostalTradeAddress': omitEmpty({
              'ram:PostcodeCode': a.postal_code,
              'ram:LineOne': a.line1,
              'ram:LineTwo': a.line2,
              'ram:CityName': a.city,
              'ram:CountryID': a.country_code,
            }),
          })
        : undefined,
    'ram:ActualDeliverySupplyChainEvent': invoice.delivery_date
      ? { 'ram:OccurrenceDateTime': date102(invoice.delivery_date) }
      : undefined,
  });
  return Object.keys(node).length > 0 ? node : '';
}

/** EN 16931 and EXTENDED carry every field of the model; BASIC and BASIC WL lack contacts, line details and bank details beyond the IBAN. */
const isFull = (level: EInvoiceProfile) => level === 'en16931' || level === 'extended';

function party(p: InvoiceParty, level: EInvoiceProfile, isSeller: boolean): Node {
  const minimum = level === 'minimum';
  const taxRegistrations = [
    p.vat_id ? { 'ram:ID': { '@_schemeID': 'VA', '#text': p.vat_id } } : undefined,
    !minimum && 'tax_number' in p && p.tax_number
      ? { 'ram:ID': { '@_schemeID': 'FC', '#text': p.tax_number } }
      : undefined,
  ].filter(Boolean);
  // Trading name: the seller's (BT-28) from BASIC WL on, the buyer's (BT-45) only in EN 16931 and EXTENDED
  // (Factur-X's BASIC WL and BASIC schematrons report a buyer TradingBusinessName as "not used").
  const tradingName = !minimum && (isSeller || isFull(level)) ? p.trading_name : undefined;
  const legal =
    p.legal_registration_id || tradingName
      ? omitEmpty({ 'ram:ID': p.legal_registration_id, 'ram:TradingBusinessName': tradingName })
      : undefined;
  if (minimum) {
    // MINIMUM: the buyer has only its name and legal id; the seller adds its country and VAT id.
    return omitEmpty({
      'ram:Name': p.name,
      'ram:SpecifiedLegalOrganization': legal,
      'ram:PostalTradeAddress': isSeller ? { 'ram:CountryID': p.address.country_code } : undefined,
      'ram:SpecifiedTaxRegistration': isSeller ? taxRegistrations : undefined,
    });
  }
  const a = p.address;
  const c = p.contact;
  return omitEmpty({
    'ram:Name': p.name,
    'ram:SpecifiedLegalOrganization': legal,
    'ram:DefinedTradeContact':
      c && isFull(level)
        ? omitEmpty({
            'ram:PersonName': c.name,
            'ram:TelephoneUniversalCommunication': c.phone ? { 'ram:CompleteNumber': c.phone } : undefined,
            'ram:EmailURIUniversalCommunication': c.email ? { 'ram:URIID': c.email } : undefined,
          })
        : undefined,
    'ram:PostalTradeAddress': omitEmpty({
      'ram:PostcodeCode': a.postal_code,
      'ram:LineOne': a.line1,
      'ram:LineTwo': a.line2,
      'ram:CityName': a.city,
      'ram:CountryID': a.country_code,
    }),
    'ram:URIUniversalCommunication': p.electronic_address
      ? { 'ram:URIID': { '@_schemeID': p.electronic_address.scheme, '#text': p.electronic_address.value } }
      : undefined,
    'ram:SpecifiedTaxRegistration': taxRegistrations,
  });
}

function tradeTax(category: string | undefined, rate: DecimalInput | undefined): Node {
  return omitEmpty({
    'ram:TypeCode': 'VAT',
    'ram:CategoryCode': category,
    'ram:RateApplicablePercent': category === 'O' || rate === undefined ? undefined : xmlNumber(rate, RATE_DECIMALS),
  });
}

function lineItem(line: Invoice['lines'][number], net: Decimal, level: EInvoiceProfile): Node {
  const full = isFull(level);
  return {
    'ram:AssociatedDocumentLineDocument': omitEmpty({
      'ram:LineID': line.id,
      'ram:IncludedNote': full && line.note ? { 'ram:Content': line.note } : undefined,
    }),
    'ram:SpecifiedTradeProduct': omitEmpty({
      'ram:SellerAssignedID': full ? line.seller_item_id : undefined,
      'ram:Name': line.name,
      'ram:Description': full ? line.description : undefined,
    }),
    'ram:SpecifiedLineTradeAgreement': {
      'ram:NetPriceProductTradePrice': { 'ram:ChargeAmount': xmlNumber(line.net_price, PRICE_DECIMALS) },
    },
    'ram:SpecifiedLineTradeDelivery': {
      'ram:BilledQuantity': { '@_unitCode': line.unit_code, '#text': xmlNumber(line.quantity, QUANTITY_DECIMALS) },
    },
    'ram:SpecifiedLineTradeSettlement': {
      'ram:ApplicableTradeTax': tradeTax(line.vat_category, line.vat_rate),
      'ram:SpecifiedTradeSettlementLineMonetarySummation': { 'ram:LineTotalAmount': money(net) },
    },
  };
}

function allowanceCharge(item: InvoiceAllowanceCharge, isCharge: boolean): Node {
  return omitEmpty({
    'ram:ChargeIndicator': { 'udt:Indicator': String(isCharge) },
    'ram:ActualAmount': money(fitting(item.amount, AMOUNT_DECIMALS)),
    'ram:ReasonCode': item.reason_code,
    'ram:Reason': item.reason,
    'ram:CategoryTradeTax': tradeTax(item.vat_category, item.vat_rate),
  });
}

/**
 * The VAT category rate (BT-119) of a breakdown group. Category O (not subject to VAT) has none in
 * EN 16931 (BR-48 exempts it; BR-O-05…07 forbid it on lines, allowances and charges), but XRechnung
 * requires BT-119 in every breakdown (BR-DE-14), so XRechnung gets 0 there: the CEN 1.3.16 and
 * Factur-X 1.07.3 schematrons accept it as well, and XRechnung 3.0.2 needs it (docs/einvoice-conformance.md).
 */
export function breakdownRate(category: string, rate: Decimal | undefined, xrechnung: boolean): string | undefined {
  if (category === 'O') return xrechnung ? '0' : undefined;
  return rate === undefined ? undefined : formatDecimal(rate);
}

function settlement(invoice: Invoice, t: InvoiceTotals, level: EInvoiceProfile, xrechnung: boolean): Node {
  const minimum = level === 'minimum';
  const full = isFull(level);
  const currency = invoice.currency;
  const p = invoice.payment;
  const summation = minimum
    ? {
        'ram:TaxBasisTotalAmount': money(t.taxExclusive),
        'ram:TaxTotalAmount': { '@_currencyID': currency, '#text': money(t.taxTotal) },
        'ram:GrandTotalAmount': money(t.taxInclusive),
        'ram:DuePayableAmount': money(t.amountDue),
      }
    : omitEmpty({
        'ram:LineTotalAmount': money(t.lineTotal),
        'ram:ChargeTotalAmount': money(t.chargeTotal),
        'ram:AllowanceTotalAmount': money(t.allowanceTotal),
        'ram:TaxBasisTotalAmount': money(t.taxExclusive),
        'ram:TaxTotalAmount': { '@_currencyID': currency, '#text': money(t.taxTotal) },
        'ram:GrandTotalAmount': money(t.taxInclusive),
        'ram:TotalPrepaidAmount': t.prepaid.isZero() ? undefined : money(t.prepaid),
        'ram:DuePayableAmount': money(t.amountDue),
      });
  if (minimum)
    return { 'ram:InvoiceCurrencyCode': currency, 'ram:SpecifiedTradeSettlementHeaderMonetarySummation': summation };
  // A direct debit (BG-19, BASIC WL and up): the creditor id (BT-90) heads the settlement, the debited account (BT-91)
  // precedes the payee account in the payment means, the mandate reference (BT-89) follows the due date in the terms.
  return omitEmpty({
    'ram:CreditorReferenceID': p?.creditor_id,
    'ram:PaymentReference': p?.remittance_information,
    'ram:InvoiceCurrencyCode': currency,
    'ram:SpecifiedTradeSettlementPaymentMeans': p
      ? omitEmpty({
          'ram:TypeCode': p.means_code,
          'ram:PayerPartyDebtorFinancialAccount': p.debited_account
            ? { 'ram:IBANID': accountForXml(p.debited_account) }
            : undefined,
          'ram:PayeePartyCreditorFinancialAccount': p.iban
            ? omitEmpty({ 'ram:IBANID': accountForXml(p.iban), 'ram:AccountName': full ? p.account_name : undefined })
            : undefined,
          'ram:PayeeSpecifiedCreditorFinancialInstitution': full && p.bic ? { 'ram:BICID': p.bic } : undefined,
        })
      : undefined,
    'ram:ApplicableTradeTax': t.vat.map((g) =>
      omitEmpty({
        'ram:CalculatedAmount': money(g.tax),
        'ram:TypeCode': 'VAT',
        'ram:ExemptionReason': g.exemptionReason,
        'ram:BasisAmount': money(g.taxable),
        'ram:CategoryCode': g.category,
        'ram:RateApplicablePercent': breakdownRate(g.category, g.rate, xrechnung),
      }),
    ),
    'ram:SpecifiedTradeAllowanceCharge': [
      ...(invoice.allowances ?? []).map((a) => allowanceCharge(a, false)),
      ...(invoice.charges ?? []).map((c) => allowanceCharge(c, true)),
    ],
    'ram:SpecifiedTradePaymentTerms':
      p?.terms || invoice.due_date || p?.mandate_reference
        ? omitEmpty({
            'ram:Description': p?.terms,
            'ram:DueDateDateTime': invoice.due_date ? date102(invoice.due_date) : undefined,
            'ram:DirectDebitMandateID': p?.mandate_reference,
          })
        : undefined,
    'ram:SpecifiedTradeSettlementHeaderMonetarySummation': summation,
  });
}
