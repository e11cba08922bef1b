/** `POST /v1/pdf-tools/sign` (1 credit) and `/verify` (free): a PDF you send, signed or its signatures reported (docs/finishing.md). */
import { Type, type Static } from 'typebox';
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { PdfToolService } from '../../../pdf-tools/pdf-tools.js';
import { EXAMPLE_PDF_BASE64 } from '../../pdf-examples.js';
import { errorResponses } from '../../schemas.js';
import { CHARGING, outputFields, registerToolRoutes, source, sourceFields, toolRoute } from './pdf-tools.js';
import { signatureFields, signatureOptions } from './sign-fields.js';

const SignBody = Type.Object(
  {
    ...sourceFields,
    ...signatureFields,
    ...outputFields,
  },
  {
    examples: [
      {
        pdf_base64: EXAMPLE_PDF_BASE64,
        certificate: 'company-seal',
        reason: 'Invoice approved',
        location: 'Berlin',
        export_type: 'url',
        filename: 'signed',
      },
    ],
  },
);

const VerifyBody = Type.Object(sourceFields, { examples: [{ pdf_base64: EXAMPLE_PDF_BASE64 }] });

const SignatureEntry = Type.Object(
  {
    field: Type.String({ description: "The signature field's name" }),
    signer: Type.Union([Type.String(), Type.Null()], { description: "Common name (CN) of the signer's certificate" }),
    signer_dn: Type.Union([Type.String(), Type.Null()], {
      description: "The signer certificate's full distinguished name",
    }),
    signing_time: Type.Union([Type.String(), Type.Null()], {
      description:
        "The signer's claimed signing time (ISO 8601, UTC), from the signature; not proof of time — see timestamp",
    }),
    timestamp: Type.Object(
      {
        present: Type.Boolean({ description: 'An RFC 3161 time-stamp token is in the signature (PAdES B-T)' }),
        time: Type.Union([Type.String(), Type.Null()], {
          description: "The time-stamp authority's time (ISO 8601, UTC), or null",
        }),
      },
      { description: 'The time-stamp in the signature, if any' },
    ),
    subfilter: Type.Union([Type.String(), Type.Null()], {
      description: 'Signature format: ETSI.CAdES.detached (PAdES) or adbe.pkcs7.detached',
    }),
    valid: Type.Boolean({ description: 'The signature verifies against the bytes it covers (they were not changed)' }),
    validation: Type.String({ description: 'The verifier\'s words: "Signature is Valid", "Digest Mismatch", …' }),
    covers_whole_document: Type.Boolean({
      description: 'The signature covers the whole file: nothing was added after it',
    }),
  },
  { description: 'One signature' },
);

const Report = Type.Object(
  {
    signed: Type.Boolean({ description: 'The PDF has at least one signature' }),
    intact: Type.Boolean({ description: 'Every signature is valid and the last covers the whole file' }),
    modified_after_signing: Type.Boolean({ description: 'Bytes were changed, or added, after a signature' }),
    signatures: Type.Array(SignatureEntry, { description: 'Each signature, in file order' }),
  },
  {
    description: 'The signature report',
    examples: [
      {
        signed: true,
        intact: true,
        modified_after_signing: false,
        signatures: [
          {
            field: 'Signature_1',
            signer: 'Ada Lovelace',
            signer_dn: 'O=Example,CN=Ada Lovelace',
            signing_time: '2026-11-28T09:30:00.000Z',
            timestamp: { present: true, time: '2026-11-28T09:30:01.000Z' },
            subfilter: 'ETSI.CAdES.detached',
            valid: true,
            validation: 'Signature is Valid',
            covers_whole_document: true,
          },
        ],
      },
    ],
  },
);

export function pdfSigningRoutes(app: FastifyInstance, deps: { pdfTools: PdfToolService }): void {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();

  registerToolRoutes(app, deps.pdfTools, [
    toolRoute({
      path: 'sign',
      operationId: 'signPdf',
      summary: 'Sign a PDF',
      description:
        'Signs the PDF with one of your certificates (POST /v1/certificates): PAdES B-B, or B-T with `timestamp: true` (an RFC 3161 time-stamp; a failing authority is 502 TSA_FAILED, refunded). ' +
        'An unknown or expired certificate, a missing time-stamp authority or a `visible.page` the PDF does not have is a 422 before the charge.' +
        CHARGING,
      body: SignBody,
      run: (tools, base, body) => tools.sign({ ...base, pdf: source(body), signature: signatureOptions(body) }),
    }),
  ]);

  r.post('/v1/pdf-tools/verify', {
    config: { auth: 'api_key' },
    schema: {
      operationId: 'verifyPdfSignatures',
      tags: ['PDF Tools'],
      summary: 'Report the signatures of a PDF',
      description:
        "Per signature: the signer, the signing time, whether a time-stamp is present and its time, and whether the document changed after signing (poppler's pdfsig checks each signature against its bytes). " +
        'Certificate trust is not judged. **Never charged.** Inputs as for the other PDF tools.',
      body: VerifyBody,
      response: { 200: Report, ...errorResponses(401, 413, 422, 429, 500, 503, 504) },
    },
    handler: async (request) => {
      const body = request.body as Static<typeof VerifyBody>;
      return deps.pdfTools.verify({ accountId: request.caller.accountId, pdf: source(body) });
    },
  });
}
