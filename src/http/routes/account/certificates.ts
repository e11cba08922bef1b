/** Signing certificates: upload (PKCS#12 + password, sealed at rest), list, delete (docs/finishing.md "Certificates"). */
import { Type, type Static } from 'typebox';
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { CertificateService } from '../../../signing/certificates.js';
import { CERTIFICATE_MAX_BASE64_CHARS } from '../../../signing/signing-bounds.js';
import { errorResponses } from '../../schemas.js';

const NAME = { minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_.-]+$' } as const;

const Upload = Type.Object(
  {
    name: Type.String({
      ...NAME,
      description: 'Your name for the certificate, used as sign.certificate: letters, digits, ".", "_" and "-"',
    }),
    pkcs12_base64: Type.String({
      minLength: 1,
      maxLength: CERTIFICATE_MAX_BASE64_CHARS + 1024,
      description: `The PKCS#12 file (.p12/.pfx: the private key, its certificate and optionally the chain), base64-encoded; at most ${CERTIFICATE_MAX_BASE64_CHARS} characters`,
    }),
    password: Type.String({
      maxLength: 1024,
      description: 'The password of the PKCS#12 file; stored sealed with the file, never returned',
    }),
  },
  {
    examples: [
      {
        name: 'company-seal',
        pkcs12_base64: 'MIIKPAIBAzCCCfIGCSqGSIb3DQEHAaCCCeMEggnfMIIJ2zCC…',
        password: 'correct horse battery staple',
      },
    ],
  },
);

const Certificate = Type.Object(
  {
    name: Type.String({ description: 'Your name for it (sign.certificate)' }),
    subject: Type.String({ description: "The certificate's subject, e.g. CN=Ada Lovelace, O=Example" }),
    issuer: Type.String({ description: 'Who issued it' }),
    serial: Type.String({ description: 'Serial number, hex' }),
    not_before: Type.String({ description: 'Valid from (ISO 8601)' }),
    not_after: Type.String({
      description: 'Valid until (ISO 8601); a signature with an expired certificate is refused',
    }),
    fingerprint_sha256: Type.String({ description: "SHA-256 of the certificate's DER bytes, hex" }),
  },
  {
    description: 'A signing certificate (never its key)',
    examples: [
      {
        name: 'company-seal',
        subject: 'CN=Ada Lovelace, O=Example',
        issuer: 'CN=Example CA',
        serial: '3f1a…',
        not_before: '2026-01-01T00:00:00.000Z',
        not_after: '2027-01-01T00:00:00.000Z',
        fingerprint_sha256: '9b2c…',
      },
    ],
  },
);

const NameParams = Type.Object({ name: Type.String({ ...NAME, description: "The certificate's name" }) });

export function certificateRoutes(app: FastifyInstance, certificates: CertificateService): void {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['Certificates'];

  r.post('/v1/certificates', {
    config: { auth: 'api_key' },
    // The PKCS#12's base64 and a password: past the small bodies' limit, far below a template's.
    bodyLimit: 2 * CERTIFICATE_MAX_BASE64_CHARS,
    schema: {
      operationId: 'createCertificate',
      tags,
      summary: 'Upload a signing certificate',
      description:
        'Stores a PKCS#12 file and its password for signing (sign on create, POST /v1/pdf-tools/sign), sealed with AES-256-GCM; neither is ever returned. ' +
        'A file that is not PKCS#12, a wrong password, a key that does not belong to the certificate, or a certificate expired or not yet valid is a 422 naming the reason; a name already used is 409 CERTIFICATE_EXISTS. Free.',
      body: Upload,
      response: { 201: Certificate, ...errorResponses(401, 409, 413, 422, 429) },
    },
    handler: async (request, reply) => {
      const body = request.body as Static<typeof Upload>;
      const created = await certificates.add(request.caller.accountId, {
        name: body.name,
        pkcs12Base64: body.pkcs12_base64,
        password: body.password,
      });
      return reply.code(201).send(created);
    },
  });

  r.get('/v1/certificates', {
    config: { auth: 'api_key' },
    schema: {
      operationId: 'listCertificates',
      tags,
      summary: 'List signing certificates',
      description: "Your account's signing certificates, by name, with their validity (never their keys).",
      response: {
        200: Type.Object(
          { certificates: Type.Array(Certificate, { description: 'By name' }) },
          { examples: [{ certificates: [] }] },
        ),
        ...errorResponses(401, 429),
      },
    },
    handler: async (request) => ({ certificates: await certificates.list(request.caller.accountId) }),
  });

  r.delete('/v1/certificates/:name', {
    config: { auth: 'api_key' },
    schema: {
      operationId: 'deleteCertificate',
      tags,
      summary: 'Delete a signing certificate',
      description:
        'Deletes the certificate and its sealed key for good; 404 CERTIFICATE_NOT_FOUND when you have none of that name.',
      params: NameParams,
      response: { 204: Type.Null({ description: 'Deleted' }), ...errorResponses(401, 404, 422, 429) },
    },
    handler: async (request, reply) => {
      await certificates.remove(request.caller.accountId, (request.params as Static<typeof NameParams>).name);
      return reply.code(204).send(null);
    },
  });
}
