/**
 * The JSON model of an EN 16931 invoice that `POST /v1/pdf/create` and `/create-async` take as
 * `einvoice.invoice` (docs/einvoice.md). Field names follow the API's snake_case; each field's
 * description names its EN 16931 business term (BT-n) so a reader can check it against the standard.
 *
 * The schema checks shapes only. Presence rules that EN 16931 names (a line's VAT category BR-CO-04,
 * the seller VAT id BR-S-02, XRechnung's buyer reference BR-DE-15, …) and code lists are checked by
 * business-rules.ts, so a failure carries the rule id the standard gives it, not a generic "missing".
 */
import { Type, type Static } from 'typebox';
import { DECIMAL_STRING_MAX_LENGTH, DECIMAL_STRING_PATTERN, MAX_DIGITS, type DecimalInput } from './decimals.js';

const DATE = { pattern: '^\\d{4}-\\d{2}-\\d{2}$', description: 'A date, YYYY-MM-DD' } as const;
const text = (description: string, maxLength = 500) => Type.String({ minLength: 1, maxLength, description });
/**
 * A number of the invoice: a JSON number or a decimal string ("1234.56", no exponent), read exactly
 * (decimals.ts); at most MAX_DIGITS significant digits, checked by business-rules.ts with the decimals.
 */
const decimal = (description: string, bounds: { minimum?: number; maximum?: number } = {}) =>
  Type.Unsafe<DecimalInput>({
    type: ['number', 'string'],
    pattern: DECIMAL_STRING_PATTERN,
    maxLength: DECIMAL_STRING_MAX_LENGTH,
    ...bounds,
    description: `${description}. A JSON number or a decimal string such as "1234.56"; at most ${MAX_DIGITS} significant digits`,
  });
const amount = (description: string) => decimal(`${description}; at most 2 decimals (BR-DEC)`);

/** EN 16931 invoice type codes (UNTDID 1001) the service offers: invoice, credit note, corrected, self-billed, prepayment. */
export const INVOICE_TYPE_CODES = ['380', '381', '384', '389', '386', '751'] as const;

const Address = Type.Object(
  {
    line1: Type.Optional(text('Address line 1 (BT-35 / BT-50)')),
    line2: Type.Optional(text('Address line 2 (BT-36 / BT-51)')),
    city: Type.Optional(text('City (BT-37 / BT-52); XRechnung requires it (BR-DE-3, BR-DE-8)', 200)),
    postal_code: Type.Optional(text('Post code (BT-38 / BT-53); XRechnung requires it (BR-DE-4, BR-DE-9)', 20)),
    country_code: Type.String({ description: 'ISO 3166-1 alpha-2 country code (BT-40 / BT-55), e.g. DE (BR-CL-14)' }),
  },
  { additionalProperties: false, description: 'Postal address (BG-5 / BG-8)' },
);

const ElectronicAddress = Type.Object(
  {
    scheme: Type.String({
      minLength: 1,
      maxLength: 10,
      description: 'EAS scheme code, e.g. EM (e-mail), 9930 (German VAT), 0204 (Leitweg-ID) (BR-CL-25)',
    }),
    value: text('The address itself (BT-34 / BT-49)', 200),
  },
  { additionalProperties: false, description: 'Electronic address (BT-34 / BT-49) with its EAS scheme' },
);

const Contact = Type.Object(
  {
    name: Type.Optional(text('Contact person or department (BT-41 / BT-56)', 200)),
    phone: Type.Optional(text('Telephone (BT-42 / BT-57)', 50)),
    email: Type.Optional(text('E-mail (BT-43 / BT-58)', 200)),
  },
  {
    additionalProperties: false,
    description:
      'Contact (BG-6 / BG-9); XRechnung requires the seller contact with name, phone and email (BR-DE-2, -5, -6, -7)',
  },
);

const partyFields = (role: 'Seller' | 'Buyer') => ({
  name: text(`${role} name (${role === 'Seller' ? 'BT-27' : 'BT-44'})`, 200),
  trading_name: Type.Optional(text(`Trading name (${role === 'Seller' ? 'BT-28' : 'BT-45'})`, 200)),
  vat_id: Type.Optional(
    Type.String({
      minLength: 3,
      maxLength: 30,
      description: `VAT identifier with country prefix, e.g. DE123456789 (${role === 'Seller' ? 'BT-31' : 'BT-48'})`,
    }),
  ),
  legal_registration_id: Type.Optional(
    text(`Legal registration id, e.g. a trade register number (${role === 'Seller' ? 'BT-30' : 'BT-47'})`, 100),
  ),
  address: Address,
  electronic_address: Type.Optional(ElectronicAddress),
  contact: Type.Optional(Contact),
});

const Seller = Type.Object(
  {
    ...partyFields('Seller'),
    tax_number: Type.Optional(text('Tax registration number, e.g. a German Steuernummer (BT-32)', 50)),
  },
  { additionalProperties: false, description: 'Seller (BG-4)' },
);
const Buyer = Type.Object(partyFields('Buyer'), { additionalProperties: false, description: 'Buyer (BG-7)' });

const DeliverTo = Type.Object(
  {
    name: Type.Optional(text('Deliver to party name (BT-70)', 200)),
    address: Type.Object(
      {
        line1: Type.Optional(text('Deliver to address line 1 (BT-75)')),
        line2: Type.Optional(text('Deliver to address line 2 (BT-76)')),
        city: Type.Optional(text('Deliver to city (BT-77)', 200)),
        postal_code: Type.Optional(text('Deliver to post code (BT-78)', 20)),
        country_code: Type.String({
          description: 'Deliver to country code, ISO 3166-1 alpha-2 (BT-80, BR-57, BR-CL-14)',
        }),
      },
      { additionalProperties: false, description: 'Deliver to address (BG-15)' },
    ),
  },
  {
    additionalProperties: false,
    description:
      'Where the goods or services went (BG-13: BT-70 and BG-15); an intra-community supply (category K) requires it (BR-IC-12). Not written in Factur-X MINIMUM',
  },
);

const VatFields = {
  vat_category: Type.Optional(
    Type.String({
      description:
        'VAT category code (UNTDID 5305 subset): S standard, Z zero, E exempt, AE reverse charge, K intra-community, G export, O not subject, L, M (BR-CL-18). Required (BR-CO-04 / BR-32 / BR-37)',
    }),
  ),
  vat_rate: Type.Optional(
    decimal(
      'VAT rate in percent, e.g. 19 (BT-152 / BT-96 / BT-103), from 0 to 100, at most 2 decimals; 0 for Z, E, AE, K, G; absent for O',
      { minimum: 0, maximum: 100 },
    ),
  ),
};

const Line = Type.Object(
  {
    id: text('Line identifier, unique in the invoice (BT-126)', 50),
    name: text('Item name (BT-153)', 500),
    description: Type.Optional(text('Item description (BT-154)', 2000)),
    seller_item_id: Type.Optional(text("Seller's item identifier (BT-155)", 100)),
    quantity: decimal('Invoiced quantity (BT-129), at most 4 decimals; negative for returns'),
    unit_code: Type.String({
      description:
        'Unit of measure, UN/ECE Recommendation 20/21 code, e.g. C62 (one), H87 (piece), HUR (hour), KGM (kilogram) (BT-130, BR-CL-23)',
    }),
    net_price: decimal('Item net price per unit, before VAT, at most 4 decimals (BT-146); not negative (BR-27)'),
    ...VatFields,
    note: Type.Optional(text('Line note (BT-127)', 1000)),
  },
  { additionalProperties: false, description: 'Invoice line (BG-25)' },
);

const AllowanceCharge = (kind: 'allowance' | 'charge') =>
  Type.Object(
    {
      amount: amount(
        `${kind === 'allowance' ? 'Allowance' : 'Charge'} amount, without VAT (${kind === 'allowance' ? 'BT-92' : 'BT-99'})`,
      ),
      reason: Type.Optional(
        text(
          `Reason text (${kind === 'allowance' ? 'BT-97' : 'BT-104'}); it or reason_code is required (${kind === 'allowance' ? 'BR-33' : 'BR-38'})`,
          500,
        ),
      ),
      reason_code: Type.Optional(
        Type.String({
          maxLength: 3,
          description: `Reason code (${kind === 'allowance' ? 'UNTDID 5189, BT-98' : 'UNTDID 7161, BT-105'})`,
        }),
      ),
      ...VatFields,
    },
    {
      additionalProperties: false,
      description: `Document-level ${kind} (${kind === 'allowance' ? 'BG-20' : 'BG-21'})`,
    },
  );

const Payment = Type.Object(
  {
    means_code: Type.String({
      description:
        'Payment means code, UNTDID 4461, e.g. 58 SEPA credit transfer, 30 credit transfer, 59 SEPA direct debit, 48 card (BT-81, BR-CL-16)',
    }),
    iban: Type.Optional(
      Type.String({
        minLength: 5,
        maxLength: 34,
        description:
          'Payee IBAN (BT-84); a credit transfer (58, 30) requires it (BR-61); with 58 it must be a valid IBAN, spaces allowed (BR-DE-19), written to the XML without spaces in upper case; XRechnung forbids the payee account (iban, bic, account_name) with a SEPA direct debit, 59 (BR-DE-25)',
      }),
    ),
    bic: Type.Optional(Type.String({ minLength: 8, maxLength: 11, description: 'Payee BIC (BT-86)' })),
    account_name: Type.Optional(text('Payee account name (BT-85)', 200)),
    remittance_information: Type.Optional(text('Remittance information, e.g. the invoice number (BT-83)', 140)),
    terms: Type.Optional(text('Payment terms (BT-20)', 1000)),
    mandate_reference: Type.Optional(
      text(
        'Direct debit mandate reference (BT-89, BG-19); XRechnung requires it with means_code 59 or 49 (PEPPOL-EN16931-R061, BR-DE-25)',
        100,
      ),
    ),
    creditor_id: Type.Optional(
      text(
        'Bank assigned creditor identifier, e.g. the SEPA creditor id DE98ZZZ09999999999 (BT-90, BG-19); XRechnung requires it with a direct debit (BR-DE-30)',
        50,
      ),
    ),
    debited_account: Type.Optional(
      Type.String({
        minLength: 5,
        maxLength: 34,
        description:
          "Debited account identifier, the buyer's IBAN for a SEPA direct debit (BT-91, BG-19); with 59 it must be a valid IBAN, spaces allowed (BR-DE-20), written to the XML without spaces in upper case; XRechnung requires it with a direct debit (BR-DE-31)",
      }),
    ),
  },
  {
    additionalProperties: false,
    description:
      "Payment instructions (BG-16), terms, and a direct debit's mandate (BG-19: mandate_reference, creditor_id, debited_account)",
  },
);

const Totals = Type.Object(
  {
    line_total: Type.Optional(amount('Sum of line net amounts (BT-106); checked by BR-CO-10')),
    allowance_total: Type.Optional(amount('Sum of document allowances (BT-107); checked by BR-CO-11')),
    charge_total: Type.Optional(amount('Sum of document charges (BT-108); checked by BR-CO-12')),
    tax_exclusive: Type.Optional(amount('Total without VAT (BT-109); checked by BR-CO-13')),
    tax_total: Type.Optional(amount('Total VAT (BT-110); checked by BR-CO-14')),
    tax_inclusive: Type.Optional(amount('Total with VAT (BT-112); checked by BR-CO-15')),
    amount_due: Type.Optional(amount('Amount due for payment (BT-115); checked by BR-CO-16')),
  },
  {
    additionalProperties: false,
    description:
      'Totals you computed yourself (optional): each is checked against the one the service computes; a difference is a 422 with the rule id',
  },
);

/** The EN 16931 invoice as JSON (einvoice.invoice). */
export const InvoiceSchema = Type.Object(
  {
    number: text('Invoice number (BT-1)', 100),
    type_code: Type.Optional(
      Type.String({
        description: `Invoice type code, UNTDID 1001 (BT-3): ${INVOICE_TYPE_CODES.join(', ')}; default 380 (commercial invoice)`,
      }),
    ),
    issue_date: Type.String(DATE),
    due_date: Type.Optional(
      Type.String({
        ...DATE,
        description: 'Payment due date (BT-9); it or payment.terms is required when an amount is due (BR-CO-25)',
      }),
    ),
    delivery_date: Type.Optional(
      Type.String({
        ...DATE,
        description: 'Actual delivery date (BT-72); an intra-community supply (category K) requires it (BR-IC-11)',
      }),
    ),
    deliver_to: Type.Optional(DeliverTo),
    currency: Type.String({ description: 'ISO 4217 currency code, e.g. EUR (BT-5, BR-CL-04)' }),
    buyer_reference: Type.Optional(
      text('Buyer reference, e.g. the German Leitweg-ID (BT-10); XRechnung requires it (BR-DE-15)', 200),
    ),
    order_reference: Type.Optional(text('Purchase order reference (BT-13)', 200)),
    contract_reference: Type.Optional(text('Contract reference (BT-12)', 200)),
    notes: Type.Optional(
      Type.Array(text('Invoice note (BT-22)', 5000), { maxItems: 20, description: 'Invoice notes (BG-1 / BT-22)' }),
    ),
    seller: Seller,
    buyer: Buyer,
    lines: Type.Array(Line, {
      minItems: 1,
      // Wholesale and utility invoices run to thousands; the official rules' time is linear in them (issue 52).
      maxItems: 5000,
      description: 'Invoice lines (BG-25); at least one (BR-16)',
    }),
    allowances: Type.Optional(
      Type.Array(AllowanceCharge('allowance'), { maxItems: 100, description: 'Document-level allowances (BG-20)' }),
    ),
    charges: Type.Optional(
      Type.Array(AllowanceCharge('charge'), { maxItems: 100, description: 'Document-level charges (BG-21)' }),
    ),
    vat_exemption_reasons: Type.Optional(
      Type.Array(
        Type.Object(
          {
            vat_category: Type.String({ description: 'The category the reason is for: E, AE, K, G or O' }),
            reason: text('Exemption reason text (BT-120), e.g. "Reverse charge"', 500),
          },
          { additionalProperties: false },
        ),
        {
          maxItems: 10,
          description: 'Why VAT is not charged, per category (BR-E-10, BR-AE-10, BR-IC-10, BR-G-10, BR-O-10)',
        },
      ),
    ),
    prepaid_amount: Type.Optional(amount('Amount already paid (BT-113)')),
    payment: Type.Optional(Payment),
    totals: Type.Optional(Totals),
  },
  {
    additionalProperties: false,
    title: 'EN 16931 invoice',
    description: 'An EN 16931 invoice as JSON (docs/einvoice.md). Totals are computed by the service',
  },
);

export type Invoice = Static<typeof InvoiceSchema>;
export type InvoiceLine = Invoice['lines'][number];
export type InvoiceParty = Invoice['seller'] | Invoice['buyer'];
export type InvoiceAllowanceCharge = NonNullable<Invoice['allowances']>[number];

/** Syntaxes and the profiles each offers. */
export const EINVOICE_FORMATS = ['factur-x', 'zugferd', 'xrechnung-cii', 'xrechnung-ubl'] as const;
export const EINVOICE_PROFILES = ['minimum', 'basic-wl', 'basic', 'en16931', 'extended'] as const;
export type EInvoiceFormat = (typeof EINVOICE_FORMATS)[number];
export type EInvoiceProfile = (typeof EINVOICE_PROFILES)[number];

/**
 * The longest `einvoice.xml`, in characters (5 MiB). Far above any real invoice (a 1,000-line one is
 * about 1 MB); it bounds what libxml2 parses and what a job row keeps. The body limit of the generation
 * routes (PRESSROOM_BODY_LIMIT_BYTES, 10 MiB by default) leaves room for it and its JSON escapes.
 */
export const SUPPLIED_XML_MAX_CHARS = 5 * 1024 * 1024;

/** The `einvoice` field of a generation request: the invoice as JSON, or the customer's own XML (exactly one). */
export const EInvoiceRequestSchema = Type.Object(
  {
    format: Type.Unsafe<EInvoiceFormat>({
      type: 'string',
      enum: [...EINVOICE_FORMATS],
      description:
        'factur-x and zugferd (ZUGFeRD 2.3 = Factur-X 1.07: the same XML and file) give a PDF/A-3b with the CII XML embedded as factur-x.xml; xrechnung-cii and xrechnung-ubl give the XRechnung 3.0 XML alone (application/xml)',
    }),
    profile: Type.Optional(
      Type.Unsafe<EInvoiceProfile>({
        type: 'string',
        enum: [...EINVOICE_PROFILES],
        description:
          'Factur-X / ZUGFeRD profile; default en16931, or with `xml` the one the XML names (a profile given must match it). XRechnung has no profiles (leave it out)',
      }),
    ),
    // Exactly one of invoice and xml: einvoice.ts checks it, to answer with a message rather than a schema's anyOf.
    invoice: Type.Optional(InvoiceSchema),
    xml: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: SUPPLIED_XML_MAX_CHARS,
        description:
          'Your own e-invoice XML, as a string (UTF-8, no DOCTYPE, at most 5 MiB): CII (rsm:CrossIndustryInvoice) for factur-x, zugferd and xrechnung-cii, UBL 2.1 Invoice or CreditNote for xrechnung-ubl. ' +
          "Checked before any charge for form, syntax, profile (its specification identifier, BT-24) and, for CII, the profile's XSD; not for the EN 16931 business rules. Exactly one of invoice and xml",
      }),
    ),
  },
  {
    additionalProperties: false,
    description:
      'Build an e-invoice from the same request (docs/einvoice.md): from `invoice` (the EN 16931 invoice as JSON), or from your own `xml`, exactly one of the two; the template sees it as `einvoice`',
  },
);

export type EInvoiceRequest = Static<typeof EInvoiceRequestSchema>;

/** fx:ConformanceLevel per profile, as the specification spells them. */
export const CONFORMANCE_LEVELS: Record<EInvoiceProfile, string> = {
  minimum: 'MINIMUM',
  'basic-wl': 'BASIC WL',
  basic: 'BASIC',
  en16931: 'EN 16931',
  extended: 'EXTENDED',
};
