/** Signed download links of generated files (local storage; S3 storage links straight to the bucket). */
import { Type } from 'typebox';
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FileService } from '../../../files/files.js';
import { attachmentDisposition } from '../../../storage/content-disposition.js';
import { PdfBytes, errorResponses, imageBytesByType, mediaResponse } from '../../schemas.js';

export function fileRoutes(app: FastifyInstance, files: FileService): void {
  app.withTypeProvider<TypeBoxTypeProvider>().get('/v1/files/:file_id/:filename', {
    config: { auth: 'public' },
    schema: {
      operationId: 'downloadFile',
      tags: ['Files'],
      summary: 'Download a generated PDF or image',
      description:
        'The `url` a generation answered. The link itself is the credential: expired or altered links answer 403 (LINK_EXPIRED, LINK_INVALID).',
      params: Type.Object({
        file_id: Type.String({ minLength: 1, maxLength: 64, description: 'File ID, from the link' }),
        filename: Type.String({ minLength: 1, maxLength: 200, description: 'File name, from the link' }),
      }),
      querystring: Type.Object({
        expires: Type.String({ maxLength: 16, description: 'Expiry (Unix seconds), from the link' }),
        signature: Type.String({ maxLength: 128, description: 'Signature, from the link' }),
      }),
      response: {
        200: mediaResponse('The PDF file, or the image of an image/create', {
          'application/pdf': PdfBytes(),
          ...imageBytesByType(),
        }),
        ...errorResponses(403, 404, 422),
      },
    },
    handler: async (request, reply) => {
      const { file_id, filename } = request.params;
      const { blob, filename: stored } = await files.open(
        file_id,
        filename,
        request.query.expires,
        request.query.signature,
      );
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
