/**
 * IBANs in the invoice model (BT-84 payee account, BT-91 debited account), by ISO 13616 through ibantools:
 * the check the business rules make, and the form the XML carries.
 */
import { electronicFormatIBAN, isValidIBAN } from 'ibantools';

/**
 * An IBAN: the mod-97 check digits and the country's length and BBAN format. Read in electronic format
 * (whitespace removed, upper case), as XRechnung's BR-DE-19/20 read it, so the printed form
 * "DE89 3704 0044 0532 0130 00" passes.
 */
export function isIban(value: string): boolean {
  return isValidIBAN(electronicFormatIBAN(value) ?? '');
}

/**
 * What the XML carries for an account: an IBAN in its electronic format ("DE89370400440532013000"), which is
 * the form ISO 13616 defines for machines and the one validators compare; any other account identifier (a
 * credit transfer, means 30, may name a non-IBAN account) exactly as sent.
 */
export function accountForXml(value: string): string {
  return isIban(value) ? (electronicFormatIBAN(value) as string) : value;
}
