/**
 * What this installation can do for a customer, where that depends on how the operator set it up
 * (issue 50): the studio reads it (`GET /v1/capabilities`) to say up front what is on offer, instead of
 * failing after the user acts. Only what varies between installations is listed.
 */
import type { EInvoiceRules } from '../einvoice/rules/official-checks.js';
import { isAppError } from '../shared/errors.js';

/** Why e-invoices cannot be checked by the official rules here: off by the operator, not installed, or damaged. */
export type RulesUnavailable = 'rules_off' | 'rules_not_installed' | 'rules_damaged';

export interface Capabilities {
  /** `POST /v1/einvoice/validate`: needs the official rules pack. */
  einvoiceValidation: { available: true } | { available: false; reason: RulesUnavailable };
  /** Run's e-invoice (Factur-X, ZUGFeRD, XRechnung): refused only when the operator requires the rules and they are missing or damaged. */
  einvoiceAttachments: { available: boolean; officialRules: boolean };
  /** `timestamp: true` without `tsa_url`: the service has a time-stamp authority of its own. */
  signatureTimestamps: { serviceAuthority: boolean };
}

export interface CapabilityDeps {
  rules: Pick<EInvoiceRules, 'mode' | 'activePack'>;
  /** The operator's PRESSROOM_TSA_URL is set. */
  serviceTsa: boolean;
}

/** Reads the installation's state now (the rules pack is looked up on each call, as each check does). */
export async function readCapabilities(deps: CapabilityDeps): Promise<Capabilities> {
  const rules = await rulesState(deps.rules);
  return {
    einvoiceValidation: rules === 'active' ? { available: true } : { available: false, reason: rules },
    einvoiceAttachments: {
      available: rules === 'active' || deps.rules.mode !== 'required',
      officialRules: rules === 'active',
    },
    signatureTimestamps: { serviceAuthority: deps.serviceTsa },
  };
}

async function rulesState(rules: CapabilityDeps['rules']): Promise<'active' | RulesUnavailable> {
  if (rules.mode === 'off') return 'rules_off';
  try {
    return (await rules.activePack()) ? 'active' : 'rules_not_installed';
  } catch (error) {
    if (isAppError(error, 'EINVOICE_RULES_MISSING')) return 'rules_not_installed';
    if (isAppError(error, 'EINVOICE_RULES_DAMAGED')) return 'rules_damaged';
    throw error;
  }
}
