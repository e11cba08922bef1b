/**
 * What this Pressroom can do where the operator's setup decides it (`GET /v1/capabilities`): read once
 * per signed-in key, so a screen can say up front what is not on offer here instead of failing after
 * the user acts. Until it arrives (or on a server without the route), everything is assumed available:
 * the service's own refusal still says why.
 */
import { useEffect, useState } from 'preact/hooks';
import type { Capabilities } from '../lib/api-types.js';
import { api, getSession } from './session.js';

let cached: { apiKey: string; capabilities: Promise<Capabilities | null> } | null = null;

function load(): Promise<Capabilities | null> {
  const apiKey = getSession().apiKey;
  if (!apiKey) return Promise.resolve(null);
  if (cached?.apiKey !== apiKey)
    cached = {
      apiKey,
      capabilities: api()
        .json<Capabilities>('GET', '/v1/capabilities')
        .catch(() => null),
    };
  return cached.capabilities;
}

/** This installation's capabilities, or null while unknown. */
export function useCapabilities(): Capabilities | null {
  const [capabilities, setCapabilities] = useState<Capabilities | null>(null);
  useEffect(() => {
    let live = true;
    void load().then((c) => live && setCapabilities(c));
    return () => {
      live = false;
    };
  }, []);
  return capabilities;
}

/** What a user is told when e-invoices cannot be validated here, or null when they can (or it is unknown). */
export function validationUnavailable(c: Capabilities | null): string | null {
  if (!c || c.einvoice_validation.available) return null;
  switch (c.einvoice_validation.reason) {
    case 'rules_off':
      return 'This Pressroom does not check e-invoices: whoever runs it has turned the official e-invoice rules off. Ask them if you need it.';
    case 'rules_damaged':
      return 'This Pressroom cannot check e-invoices right now: its copy of the official e-invoice rules is damaged. Ask whoever runs it to install the rules again.';
    default:
      return 'This Pressroom cannot check e-invoices yet: the official e-invoice rules are not installed on it. Ask whoever runs it to install them (a one-time step, described in its README).';
  }
}
