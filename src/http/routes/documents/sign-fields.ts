/** The `sign` object: on POST /v1/pdf/create and /create-async, and the body of POST /v1/pdf-tools/sign (docs/finishing.md). */
import { Type, type Static } from 'typebox';
import type { SignatureOptions } from '../../../signing/sign.js';
import { Nullable } from '../../schemas.js';

/** The fields of a signature, shared by `sign` on create and the sign tool's body. */
export const signatureFields = {
  certificate: Type.String({
    minLength: 1,
    maxLength: 64,
    pattern: '^[A-Za-z0-9_.-]+$',
    description:
      'Name of one of your signing certificates (POST /v1/certificates); unknown or not valid now → 422 before any charge',
  }),
  reason: Type.Optional(
    Nullable(
      Type.String({
        maxLength: 200,
        description: 'Why the document is signed, written into the signature (e.g. "Invoice approved")',
      }),
    ),
  ),
  location: Type.Optional(
    Nullable(
      Type.String({ maxLength: 200, description: 'Where it was signed, written into the signature (e.g. "Berlin")' }),
    ),
  ),
  contact_info: Type.Optional(
    Nullable(
      Type.String({
        maxLength: 200,
        description: "The signer's contact, written into the signature (e.g. an e-mail address)",
      }),
    ),
  ),
  timestamp: Type.Optional(
    Nullable(
      Type.Boolean({
        default: false,
        description:
          "true: PAdES B-T, the signature time-stamped by an RFC 3161 authority (tsa_url, or the service's PRESSROOM_TSA_URL); when the authority fails the document fails (502 TSA_FAILED, refunded), never silently unstamped. false: PAdES B-B",
      }),
    ),
  ),
  tsa_url: Type.Optional(
    Nullable(
      Type.String({
        minLength: 1,
        maxLength: 2083,
        description:
          "Your own RFC 3161 time-stamp authority (https; public addresses only), used with timestamp: true instead of the service's",
      }),
    ),
  ),
  visible: Type.Optional(
    Nullable(
      Type.Object(
        {
          page: Type.Integer({
            minimum: 1,
            maximum: 100_000,
            description: 'Page the mark goes on, from 1; a page the document does not have is a 422',
          }),
          x: Type.Number({
            minimum: 0,
            maximum: 14_400,
            description: 'Left edge of the mark, in points from the left of the page',
          }),
          y: Type.Number({
            minimum: 0,
            maximum: 14_400,
            description: 'Bottom edge of the mark, in points from the bottom of the page',
          }),
          width: Type.Number({ minimum: 20, maximum: 14_400, description: 'Width of the mark, in points' }),
          height: Type.Number({ minimum: 10, maximum: 14_400, description: 'Height of the mark, in points' }),
        },
        {
          description:
            'A visible mark (signer, time, reason, location in a frame) drawn on a page and covered by the signature; not with PDF/A yet. Omit for an invisible signature',
        },
      ),
    ),
  ),
};

export const SignSchema = Type.Object(signatureFields, {
  description:
    'Sign the PDF with one of your certificates, as its last change (PAdES B-B, or B-T with timestamp). Checked before any charge: the certificate exists and is valid, a time-stamp authority is set for timestamp',
});

type SignFields = Static<typeof SignSchema>;

/** The domain's options from the request's fields. */
export function signatureOptions(sign: SignFields): SignatureOptions {
  return {
    certificate: sign.certificate,
    reason: sign.reason ?? null,
    location: sign.location ?? null,
    contactInfo: sign.contact_info ?? null,
    timestamp: sign.timestamp ?? false,
    tsaUrl: sign.tsa_url ?? null,
    visible: sign.visible ?? null,
  };
}
