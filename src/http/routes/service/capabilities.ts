/** `GET /v1/capabilities`: what this installation can do where the operator's setup decides it (docs/studio.md). */
import { Type } from 'typebox';
import type { FastifyInstance } from 'fastify';
import { readCapabilities, type CapabilityDeps } from '../../../ops/capabilities.js';
import { StringEnum, errorResponses } from '../../schemas.js';

const Capabilities = Type.Object(
  {
    einvoice_validation: Type.Object(
      {
        available: Type.Boolean({
          description:
            'POST /v1/einvoice/validate can judge an e-invoice here (the official rules pack is installed and in use)',
        }),
        reason: Type.Optional(
          StringEnum(['rules_off', 'rules_not_installed', 'rules_damaged'] as const, {
            description:
              'Why not: the operator turned the official rules off, has not installed them (`pressroom einvoice rules install`), or the installed pack is damaged (reinstall it)',
          }),
        ),
      },
      { description: 'Validating e-invoices someone received' },
    ),
    einvoice_attachments: Type.Object(
      {
        available: Type.Boolean({
          description:
            'An e-invoice (Factur-X, ZUGFeRD, XRechnung) can be attached to a generated PDF; false only when the operator requires the official rules and they are missing or damaged',
        }),
        official_rules: Type.Boolean({
          description:
            "Attached e-invoices are also checked by the official EN 16931 and XRechnung rules (not only the schema and the service's own rules)",
        }),
      },
      { description: 'E-invoices made by Run / POST /v1/pdf/create' },
    ),
    signature_timestamps: Type.Object(
      {
        service_authority: Type.Boolean({
          description:
            'The service has a time-stamp authority of its own: `timestamp: true` works without `tsa_url`. false: give `tsa_url` to time-stamp a signature',
        }),
      },
      { description: 'Time-stamped signatures (PAdES B-T)' },
    ),
  },
  {
    examples: [
      {
        einvoice_validation: { available: false, reason: 'rules_not_installed' },
        einvoice_attachments: { available: true, official_rules: false },
        signature_timestamps: { service_authority: false },
      },
    ],
  },
);

export function capabilityRoutes(app: FastifyInstance, deps: CapabilityDeps): void {
  app.get(
    '/v1/capabilities',
    {
      config: { auth: 'api_key' },
      schema: {
        operationId: 'getCapabilities',
        tags: ['Account'],
        summary: 'What this installation can do',
        description:
          'The features whose availability depends on how the operator set the service up, read now: validating e-invoices (the official rules pack), attaching e-invoices, and time-stamping signatures without your own authority. The studio reads it to offer only what works. No credits (Pressroom; not in TemplateFox).',
        response: { 200: Capabilities, ...errorResponses(401, 429) },
      },
    },
    async () => {
      const c = await readCapabilities(deps);
      return {
        einvoice_validation: c.einvoiceValidation.available
          ? { available: true }
          : { available: false, reason: c.einvoiceValidation.reason },
        einvoice_attachments: {
          available: c.einvoiceAttachments.available,
          official_rules: c.einvoiceAttachments.officialRules,
        },
        signature_timestamps: { service_authority: c.signatureTimestamps.serviceAuthority },
      };
    },
  );
}
