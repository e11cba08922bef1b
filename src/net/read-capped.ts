/**
 * Reads a response body up to `maxBytes`, refusing early when the declared length is already over
 * and stopping (destroying the body) the moment the bytes read pass it. Used by every download of a
 * customer or document URL, each with its own error for "too large".
 */
import type { Dispatcher } from 'undici';

export async function readCapped(
  body: Dispatcher.ResponseData['body'],
  declaredLength: string | string[] | undefined,
  maxBytes: number,
  tooLarge: () => Error,
): Promise<Buffer> {
  if (typeof declaredLength === 'string' && Number(declaredLength) > maxBytes) {
    body.destroy();
    throw tooLarge();
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += (chunk as Buffer).length;
    if (size > maxBytes) {
      body.destroy();
      throw tooLarge();
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}
