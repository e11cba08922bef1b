/** Findings as the reports show them: locations with the specifications' prefixes, the rule's own message, the severity. */
import { describe, expect, it } from 'vitest';
import { findingOf, readableLocation } from './svrl.js';

describe('SVRL entries as findings', () => {
  it.each([
    // The CEN stylesheets (ISO skeleton)
    [
      "/*:Invoice[namespace-uri()='urn:oasis:names:specification:ubl:schema:xsd:Invoice-2'][1]/*:LegalMonetaryTotal[namespace-uri()='urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2'][1]",
      '/ubl:Invoice[1]/cac:LegalMonetaryTotal[1]',
    ],
    // SchXslt (KoSIT)
    [
      '/Q{urn:un:unece:uncefact:data:standard:CrossIndustryInvoice:100}CrossIndustryInvoice[1]/Q{urn:un:unece:uncefact:data:standard:CrossIndustryInvoice:100}SupplyChainTradeTransaction[1]',
      '/rsm:CrossIndustryInvoice[1]/rsm:SupplyChainTradeTransaction[1]',
    ],
    ['/Q{urn:example:other}Thing[1]/Q{}plain[2]/@Q{}currencyID', '/Q{urn:example:other}Thing[1]/plain[2]/@currencyID'],
    [
      "/*:Invoice[namespace-uri()='urn:oasis:names:specification:ubl:schema:xsd:Invoice-2'][1]/@*[local-name()='currencyID']",
      '/ubl:Invoice[1]/@currencyID',
    ],
  ])('%s → %s', (location, readable) => {
    expect(readableLocation(location)).toBe(readable);
  });

  it('takes the rule id from the entry, strips its [ID]- prefix from the message, and reads warning and information as warnings', () => {
    expect(
      findingOf({
        id: 'BR-CO-16',
        flag: 'fatal',
        location: '/x',
        text: '\n  [BR-CO-16]-Amount due for payment (BT-115) =\n   Invoice total  ',
      }),
    ).toEqual({
      rule: 'BR-CO-16',
      severity: 'fatal',
      message: 'Amount due for payment (BT-115) = Invoice total',
      location: '/x',
    });
    expect(findingOf({ id: 'BR-DE-19', flag: 'warning', location: '', text: '[BR-DE-19] IBAN' }).severity).toBe(
      'warning',
    );
    expect(findingOf({ id: 'BR-DE-TMP-32', flag: 'information', location: '', text: 'x' }).severity).toBe('warning');
    // Without a flag a failed assert is an error: fatal.
    expect(
      findingOf({ id: '', flag: '', location: '', text: '[PEPPOL-EN16931-R001] Business process MUST be provided.' }),
    ).toMatchObject({ rule: 'PEPPOL-EN16931-R001', severity: 'fatal', message: 'Business process MUST be provided.' });
  });
});
