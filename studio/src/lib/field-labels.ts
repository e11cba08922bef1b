/**
 * Labels of inferred fields as a person writes them. The service makes them from the variable name
 * (`payment.iban` → "Payment iban"); the form shows the initialisms it knows in capitals ("Payment
 * IBAN", "VAT rate"). Labels someone wrote in the Fields tab are shown as written. Pure, no DOM.
 */
import type { Field } from './api-types.js';

/** Initialisms that appear in business data, as they are written. */
const INITIALISMS = [
  'id',
  'iban',
  'bic',
  'vat',
  'url',
  'uri',
  'pdf',
  'sku',
  'ean',
  'gtin',
  'eori',
  'gln',
  'api',
  'qr',
  'html',
  'css',
  'eu',
  'uk',
  'usa',
  'iso',
  'po',
];
const PATTERN = new RegExp(`\\b(${INITIALISMS.join('|')})\\b`, 'gi');

/** "Seller vat id" → "Seller VAT ID". */
export function readableLabel(label: string): string {
  return label.replace(PATTERN, (word) => word.toUpperCase());
}

/** The fields with readable labels when they were inferred (their row attributes too); else as they are. */
export function readableFields(fields: readonly Field[], inferred: boolean): Field[] {
  if (!inferred) return [...fields];
  return fields.map((f) => ({
    ...f,
    label: readableLabel(f.label),
    ...(f.spec ? { spec: f.spec.map((s) => ({ ...s, label: readableLabel(s.label) })) } : {}),
  }));
}
