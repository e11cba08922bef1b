/** Signed download links of generated files (local storage; S3 storage links straight to the bucket). */
import { Type } from 'typebox';
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FileService } from '../../files/files.js';
import { attachmentDisposition } from '../../storage/content-disposition.js';
import { errorResponses } from '../schemas.js';

export function fileRoutes(app: FastifyInstance, files: FileService): void {
  app.withTypeProvider<TypeBoxTypeProvider>().get('/v1/files/:file_id/:filename', {
    config: { auth: 'public' },
    schema: {
      tags: ['files'],
      summary: 'Download a generated PDF or image (signed, expiring link)',
      description: 'The link itself is the credential: expired or altered links answer 403.',
      params: Type.Object({ file_id: Type.String({ minLength: 1, maxLength: 64 }), filename: Type.String({ minLength: 1, maxLength: 200 }) }),
      querystring: Type.Object({ expires: Type.String({ maxLength: 16 }), signature: Type.String({ maxLength: 128 }) }),
      response: { 200: Type.Unsafe({ description: 'The file: application/pdf, or image/png, image/jpeg or image/webp for images' }), ...errorResponses(403, 404, 422) },
    },
    handler: async (request, reply) => {
      const { file_id, filename } = request.params;
      const { blob, filename: stored } = await files.open(file_id, filename, request.query.expires, request.query.signature);
      return reply
        .header('content-type', blob.contentType ?? 'application/pdf')
        .header('content-length', String(blob.size))
        .header('content-disposition', attachmentDisposition(stored))
        .header('x-content-type-options', 'nosniff')
        .header('cache-control', 'private, max-age=0, no-store')
        .send(blob.body);
    },
  });
}
